#ifndef QB_REPACK_H
#define QB_REPACK_H
#include <stdint.h>
#include "qb_activation.h"
#include "qb_formats.h"

// Decode-time layouts: GGML blocks of four rows interleaved so one pass streams four rows
// against a single read of the activations, with the four scales of a block gathered into
// one load. The values are GGML's own
// (repacking moves bytes and never rounds), so dequantizing a repacked matrix gives the
// original weights exactly.
//
// For each group of 4 rows and each block b along the row: the 4 f16 scales d of rows 0..3;
// Q4_1 and Q5_1 then their 4 f16 minimums m; Q5_0 and Q5_1 then the fifth bits: the 16 of
// values 0..15 of rows 0..3 as four 16-bit words, then those of values 16..31 (each eight
// bytes one mask of the four rows' 64 nibbles, in the quants' order); then the quants of
// block b of rows 0..3 (16 bytes each, Q8_0 32). 4 x 18, 20, 22, 24 and 34 bytes (Q4_0,
// Q4_1, Q5_0, Q5_1, Q8_0), the size of the plain blocks. The offsets inside one group-block
// for any of these types are qb_x4_qh, qb_x4_qs and qb_x4_bytes (qb_scalar.h); the Q4_0 and
// Q8_0 kernels' constants:
#define QB_X4_MIN 8       // Q4_1, Q5_1: the minimums of rows 0..3
#define QB_X4_QS 8        // Q4_0, Q8_0: the quants of rows 0..3
#define QB_X4_Q4_BYTES 72 // one Q4_0 group-block, 4 x 18
#define QB_X4_Q8_BYTES 136 // 4 x 34

//
// Q4_K takes groups of 16 rows (qb_matvec_q4_k_x16): for each group and super-block b, the
// 16 rows' f16 d, then their f16 dmin; then the sub-blocks' 6-bit scales sc and minimums mn
// split in two: lo[j][row] = (sc_j & 15) | (mn_j & 15) << 4, and per row a 32-bit word with
// sc_j >> 4 at bit 2j and mn_j >> 4 at bit 16 + 2j; then for each sub-block j four 64-byte
// vectors: byte 4 x row + k of vector t holds value 4t + k of the row's sub-block in its low
// nibble and value 16 + 4t + k in its high nibble. One 32-bit activation broadcast then
// meets four values of all 16 rows (vpdpbusd), and the 16 rows' scales of a sub-block come
// from one 16-byte load and a shift: 2304 bytes, the plain blocks' size.
#define QB_Q4K_X16_ROWS 16
#define QB_Q4K_X16_BYTES 2304
#define QB_Q4K_X16_DMIN 32
#define QB_Q4K_X16_LO 64
#define QB_Q4K_X16_HI 192
#define QB_Q4K_X16_QS 256

// Q6_K takes groups of 16 rows on the AVX-512 and AVX2 sets (qb_matvec_q6_k_x16,
// qb_dot_kquant.h): for each group and super-block b, the 16 rows' f16 d; then for each pair of
// sub-blocks (32 values) the two sub-blocks' int8 scales of the 16 rows (16 bytes each), two
// 64-byte vectors of high bits, byte 4 x row + k of vector h holding those of the pair's value
// 16h + 4t + k at bits 2t..2t+1, and four of low bits, byte 4 x row + k of vector t holding the
// low four bits of value 4t + k in its low nibble and of value 16 + 4t + k in its high one
// (Q4_K's order; offsets: qb_q6k_x16.h). One 32-bit activation broadcast meets four values of
// all 16 rows (vpdpbusd), a sub-block's 16 scales are one 16-byte load, and the kernel reads a
// group-block front to back: 3360 bytes, the plain blocks' size. With the high bits after the
// low ones, each pair's first loads were 256 bytes ahead of the next ones, and one Zen 4 core
// streamed the layout from memory at 0.75-0.83x the plain rows' rate; in this order at
// 0.99-1.14x, the read probe's (results/q6k-x16-zen4-2026-12-01/).
#define QB_Q6K_X16_ROWS 16
#define QB_Q6K_X16_BYTES 3360
#define QB_Q6K_X16_PAIR 416

// Q4_0 takes groups of 16 rows on the AVX-512 and AVX2 sets where the row count allows
// (qb_repack_group_rows; decode: qb_matvec_q4_0_x16, qb_matvec_tiles.h): for each group and
// block b, the 16 rows' f16 d, then four 64-byte vectors in Q4_K's order, byte 4 x row + k of
// vector t holding value 4t + k in its low nibble and 16 + 4t + k in its high one, which is
// the plain block's quant byte 4t + k as it is: 288 bytes, the plain blocks' size. A group
// is one linear stream whose vectors are the 16-row tile's steps as they stand, where the
// four-row layout's tiles transpose four groups' quants every block and read four streams
// (two threads from memory: 95-96% of a read of the same bytes against 91-92%,
// results/q4_0-x16-2026-12-01/; AVX2 reads each vector in two 32-byte halves, rows 0-7 and
// 8-15, one stream where its four-row kernel read two: results/q4_0-x16-avx2-2026-12-01/).
#define QB_Q40_X16_ROWS 16
#define QB_Q40_X16_BYTES 288
#define QB_Q40_X16_QS 32

// MLX 4- and 8-bit matrices (groups of 32, 64 or 128 values; scales and biases f32, f16 or
// bf16) take groups of 16 rows as well (qb_matvec_mlx_x16, qb_dot_mlx.h): for each group of 16
// rows and each MLX group along the row, the 16 rows' scales, then their biases (as stored),
// then for each 32 values of the group the values of the 16 rows in 64-byte vectors, four
// values of each row per vector (bytes 4 x row .. 4 x row + 3). 8-bit: eight vectors, vector t
// holding values 4t..4t+3; 4-bit: four, Q4_K's order (value 4t + k in the low nibble of byte
// 4 x row + k of vector t, 16 + 4t + k in the high one). One row group is one linear stream,
// as many bytes as the plain rows with their scales and biases.
#define QB_MLX_X16_ROWS 16

// Whether a matrix of this type and shape has a repacked form on this kernel set
// (Q4_0/Q4_1/Q5_0/Q5_1/Q8_0 with rows % 4, Q4_K, and on the AVX-512 and AVX2 sets Q6_K, with
// rows % 16).
int qb_repack_supported(int32_t type, int64_t rows, int64_t cols);
// Rows per group of the form this kernel set repacks a matrix of this type and row count
// into: 4; 16 for Q4_K, and on the AVX-512 and AVX2 sets for Q6_K and for Q4_0 when
// rows % 16 == 0; 0 without one.
// A repacked matrix is read by every set (`group` below names its layout), so one repacked
// under one set stays correct after a switch to another.
int32_t qb_repack_group_rows(int32_t type, int64_t rows);
// Bytes of the repacked matrix (the plain size: nothing is added).
int64_t qb_repack_bytes(int32_t type, int64_t rows, int64_t cols);
// Repacks row groups [g0, g1) (group g holds rows group x g .. group x g + group - 1) from
// plain GGML rows into the layout of `group` rows (qb_repack_group_rows).
void qb_repack(int32_t type, int32_t group, const void *src, void *dst, int64_t g0, int64_t g1, int64_t cols);
// Copies rows [r0, r1) of a matrix repacked in groups of `group` rows back to plain GGML
// blocks (writers), contiguous.
void qb_unpack_repacked(int32_t type, int32_t group, const void *src, void *dst, int64_t r0, int64_t r1, int64_t cols);
// Dequantizes rows [r0, r1) of a matrix repacked in groups of `group` rows to f32, contiguous
// (rows x cols).
void qb_dequantize_repacked(int32_t type, int32_t group, const void *w, float *dst, int64_t r0, int64_t r1, int64_t cols);
// y[4g..4g+3] for row groups [g0, g1) of a repacked Q4_0/Q4_1/Q5_0/Q5_1/Q8_0 matrix; x quantized
// (cols/32 q8a blocks). (Q4_K's and Q6_K's groups: qb_matvec_q4_k_x16 and
// qb_matvec_q6_k_x16, qb_dot_kquant.h.)
void qb_matvec_repacked(int32_t type, const void *w, const qb_q8a *x, float *y, int64_t g0, int64_t g1, int64_t cols);
// The same for `n` activation rows at once (batched decode): ys[i][4g..4g+3] from xs[i],
// each bitwise what qb_matvec_repacked gives for xs[i] alone. Each weight block is loaded
// and unpacked once for up to four activation rows (on AVX2 the blocks of two groups at a
// time for up to eight).
void qb_matvec_repacked_rows(int32_t type, const void *w, const qb_q8a *const *xs, float *const *ys, int64_t n,
                             int64_t g0, int64_t g1, int64_t cols);

// Whether an MLX matrix of these bits, group size and shape has the 16-row layout.
int qb_mlx_x16_supported(int32_t bits, int64_t group, int64_t rows, int64_t cols);
// Bytes of one group-block (16 rows x one MLX group) and of the whole repacked matrix.
int64_t qb_mlx_x16_block_bytes(int32_t bits, int64_t group, int32_t sdtype);
int64_t qb_mlx_x16_bytes(int32_t bits, int64_t group, int32_t sdtype, int64_t rows, int64_t cols);
// Repacks row groups [g0, g1) (rows 16g..16g+15) of an MLX matrix: `w` its packed words,
// `scales`/`biases` its [rows][cols / group] arrays of dtype `sdtype`.
void qb_repack_mlx_x16(int32_t bits, int64_t group, int32_t sdtype, const uint32_t *w, const void *scales, const void *biases,
                       void *dst, int64_t g0, int64_t g1, int64_t cols);
// Dequantizes rows [r0, r1) of the 16-row layout to f32, contiguous: bitwise what
// qb_dequantize_row_mlx gives for the plain rows.
void qb_dequantize_mlx_x16(int32_t bits, int64_t group, int32_t sdtype, const void *w, float *dst, int64_t r0, int64_t r1,
                           int64_t cols);

#endif
