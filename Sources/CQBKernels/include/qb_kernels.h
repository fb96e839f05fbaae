#ifndef QB_KERNELS_H
#define QB_KERNELS_H
#include <stdint.h>

// Row-major weights W[rows][cols] (the PyTorch Linear layout: out x in).
// y[r] = dot(W[r], x) for r in [row_begin, row_end). f16/bf16 are widened to f32 and
// accumulated in f32. The summation order depends only on cols, never on which rows
// a thread was given, so results are the same at any thread count.
void qb_matvec_f32(const float *w, const float *x, float *y, int64_t row_begin, int64_t row_end, int64_t cols);
void qb_matvec_f16(const uint16_t *w, const float *x, float *y, int64_t row_begin, int64_t row_end, int64_t cols);
void qb_matvec_bf16(const uint16_t *w, const float *x, float *y, int64_t row_begin, int64_t row_end, int64_t cols);

// Widening conversions (embedding rows, prefill weight tiles).
void qb_f16_to_f32(const uint16_t *src, float *dst, int64_t n);
void qb_bf16_to_f32(const uint16_t *src, float *dst, int64_t n);
// Narrowing with round-to-nearest-even (writing f16/bf16 files, caches).
void qb_f32_to_f16(const float *src, uint16_t *dst, int64_t n);
void qb_f32_to_bf16(const float *src, uint16_t *dst, int64_t n);

float qb_dot_f32(const float *a, const float *b, int64_t n);
// y += a * x
void qb_axpy_f32(float a, const float *x, float *y, int64_t n);

#endif

#ifndef QB_KERNELS_OPS
#define QB_KERNELS_OPS
// out = x / sqrt(mean(x^2) + eps) * weight
void qb_rmsnorm(const float *x, const float *weight, float *out, int64_t n, float eps);
// In-place numerically stable softmax.
void qb_softmax(float *x, int64_t n);
// gate[i] = silu(gate[i]) * up[i]  (SwiGLU)
void qb_swiglu(float *gate, const float *up, int64_t n);
// One query head against `n` cached positions of one KV head, laid out [n][head_dim]:
// out = softmax(K q * scale) V. `scores` has room for n floats.
void qb_attention_head(const float *q, const float *k, const float *v, int64_t n, int64_t head_dim,
                       float scale, float *scores, float *out);
#endif

#ifndef QB_KERNELS_KV
#define QB_KERNELS_KV
// KV-cache rows of `head_dim` values in f16, or in Q8_0 blocks (GGML layout: f16 scale,
// 32 int8). Attention over `n` cached positions of one KV head, as qb_attention_head; against
// a Q8_0 cache the query is rounded to Q8_0 first (as GGML does), for integer dot products.
void qb_store_kv_f16(const float *src, uint16_t *dst, int64_t head_dim);
void qb_store_kv_q8_0(const float *src, void *dst, int64_t head_dim);
void qb_attention_head_f16(const float *q, const uint16_t *k, const uint16_t *v, int64_t n, int64_t head_dim,
                           float scale, float *scores, float *out);
void qb_attention_head_q8_0(const float *q, const void *k, const void *v, int64_t n, int64_t head_dim,
                            float scale, float *scores, float *out);
// The `group` query heads that share one KV head (grouped-query attention), queries and
// outputs `group` x head_dim contiguous, cache rows of GGML type `type` (QB_F16 or QB_Q8_0):
// each cached row is read once for the whole group. `scores` is scratch with room for
// group x n floats; head_dim at most 512.
void qb_attention_group(int32_t type, const float *q, const void *k, const void *v, int64_t n, int64_t head_dim,
                        int64_t group, float scale, float *scores, float *out);
#endif
