#ifndef QB_OPS_H
#define QB_OPS_H
#include <stdint.h>

// out = x / sqrt(mean(x^2) + eps) * weight
void qb_rmsnorm(const float *x, const float *weight, float *out, int64_t n, float eps);
// In-place numerically stable softmax.
void qb_softmax(float *x, int64_t n);
// gate[i] = silu(gate[i]) * up[i]  (SwiGLU)
void qb_swiglu(float *gate, const float *up, int64_t n);
// gate[i] = gelu_tanh(gate[i]) * up[i]  (GeGLU with the tanh-approximated GELU, Gemma's
// gelu_pytorch_tanh)
void qb_geglu(float *gate, const float *up, int64_t n);

#endif
