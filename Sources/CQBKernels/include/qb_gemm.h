#ifndef QB_GEMM_H
#define QB_GEMM_H
#include <stdint.h>
#include "qb_quant.h"

// Prefill products for 4-bit weights on int8 dot products. Every 4-bit format here is, per
// 32 values of a row, w = D * q + M with q in 0..15 (Q4_0: D = d, M = -8d; Q4_K: D = d * sc,
// M = -dmin * m; MLX: D = scale, M = bias). A tile of 8 rows is unpacked once per product
// into `QB_U4X8_BLOCK_BYTES` per 32 columns: D[8] and M[8] as f32, then 8 steps of 32
// bytes, step s holding values 4s..4s+3 of rows 0..7 (4 bytes per row), so one unsigned x
// signed byte multiply-add covers four values of eight rows against four broadcast bytes of
// an activation row, and the eight lanes of the result are the eight rows.
#define QB_U4X8_BLOCK_BYTES 320

// Unpacks rows [r0, r0 + 8) of a Q4_0 (plain or, when `interleaved`, the four-row layout of
// qb_repack.h) or Q4_K matrix into a tile of cols / 32 blocks.
void qb_pack_u4x8_ggml(int32_t type, int32_t interleaved, const void *w, int64_t r0, int64_t cols, uint8_t *tile);
// Likewise for 4-bit MLX rows (scales and biases of dtype `sdtype`, cols / group per row).
void qb_pack_u4x8_mlx(int64_t group, const uint32_t *w, const void *scales, const void *biases, int32_t sdtype,
                      int64_t r0, int64_t cols, uint8_t *tile);
// y[c * ystride + j] = row j of the tile dotted with activation row c, for c < count; the
// activations are q8a blocks, cols / 32 per row.
void qb_gemm_u4x8(const uint8_t *tile, const qb_q8a *x, int64_t count, int64_t cols, float *y, int64_t ystride);

// Q6_K tiles: per 32 columns, D[2][8] and M[2][8] as f32 (one pair per 16 values: D = d * sc,
// M = -32 d * sc), then the 8 steps of 6-bit values (0..63) as above. Products against
// activations need their sums per 16 values as well (`s16`: d * sum(q), cols / 16 per row).
#define QB_U6X8_BLOCK_BYTES 384
void qb_pack_u6x8_q6k(const void *w, int64_t r0, int64_t cols, uint8_t *tile);
void qb_gemm_u6x8(const uint8_t *tile, const qb_q8a *x, const float *s16, int64_t count, int64_t cols, float *y,
                  int64_t ystride);
// s16 for `count` rows of q8a activations.
void qb_q8a_sums16(const qb_q8a *x, int64_t blocks, float *s16);

#endif
