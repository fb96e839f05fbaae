#ifndef QB_DOT_MLX_H
#define QB_DOT_MLX_H
#include <stdint.h>
#include "qb_activation.h"

// y[r] = dot(W[r], x) for rows [r0, r1) of an MLX-quantized matrix (layout as
// qb_dequantize_row_mlx in qb_formats.h); x is given quantized (q8a, cols/32 blocks).
void qb_matvec_mlx(int32_t bits, int64_t group, const uint32_t *w, const void *scales, const void *biases, int32_t sdtype,
                   const qb_q8a *x, float *y, int64_t r0, int64_t r1, int64_t cols);

// y[16g..16g+15] for row groups [g0, g1) of an MLX matrix in the 16-row layout
// (qb_repack_mlx_x16, qb_repack.h); x quantized (q8a, cols/32 blocks).
void qb_matvec_mlx_x16(int32_t bits, int64_t group, int32_t sdtype, const void *w, const qb_q8a *x, float *y, int64_t g0,
                       int64_t g1, int64_t cols);
// Batched decode: ys[i][16g..16g+15] = the groups [g0, g1) against xs[i] for i < n, each
// output bitwise what qb_matvec_mlx_x16 gives for xs[i] alone; each group is loaded (and
// unpacked) once for up to four rows at a time (AVX-512), or read row by row while in cache.
void qb_matvec_mlx_x16_rows(int32_t bits, int64_t group, int32_t sdtype, const void *w, const qb_q8a *const *xs,
                            float *const *ys, int64_t n, int64_t g0, int64_t g1, int64_t cols);

#endif
