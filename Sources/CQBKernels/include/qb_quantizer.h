#ifndef QB_QUANTIZER_H
#define QB_QUANTIZER_H
#include <stdint.h>

// Weight quantizers (GGML's reference algorithms for Q8_0/Q4_0/Q4_1/Q5_0/Q5_1; Q4_K by
// per-sub-block min/max with 6-bit scales), `n` a multiple of the block size.
void qb_quantize_row(int32_t type, const float *x, void *dst, int64_t n);
// MLX's affine quantizer (as mlx.core.quantize); bits 4 or 8, group 32/64/128.
void qb_quantize_row_mlx(int32_t bits, int64_t group, const float *x, uint32_t *q, float *scales, float *biases, int64_t n);

// The index of the first of `n` values whose magnitude is not <= `limit` (NaN, infinity,
// or beyond a range), or -1 when there is none. Quantizers clamp or round such values to
// finite codes, so callers check the source before and the decoded row after.
int64_t qb_first_beyond(const float *x, int64_t n, float limit);

#endif
