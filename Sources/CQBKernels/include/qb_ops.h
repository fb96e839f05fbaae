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

// The first index of the largest of x[0..<n], as the loop `best = 0; for i in 1..<n: if x[i] >
// x[best]: best = i` finds it: a NaN is never larger, so one at index 0 gives 0 and one
// elsewhere is passed over. 0 when n <= 0.
int64_t qb_argmax_f32(const float *x, int64_t n);
// 1 when every one of x[0..<n] is finite (no NaN, no infinity), else 0.
int32_t qb_all_finite_f32(const float *x, int64_t n);

#endif
