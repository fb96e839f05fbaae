#ifndef QB_DENSE_H
#define QB_DENSE_H
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
