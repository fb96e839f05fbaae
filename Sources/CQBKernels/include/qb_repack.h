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
// For each group of 4 rows and each block b along the row: the 4 f16 scales of rows 0..3,
// then the quants of block b of rows 0..3 (Q4_0: 16 bytes each, Q8_0: 32 bytes each) —
// 4 x 18 and 4 x 34 bytes, the size of the plain blocks.

// Whether a matrix of this type and shape has a repacked form (Q4_0/Q8_0, rows % 4).
int qb_repack_supported(int32_t type, int64_t rows, int64_t cols);
// Bytes of the repacked matrix (the plain size: nothing is added).
int64_t qb_repack_bytes(int32_t type, int64_t rows, int64_t cols);
// Repacks row groups [g0, g1) (group g holds rows 4g..4g+3) from plain GGML rows.
void qb_repack(int32_t type, const void *src, void *dst, int64_t g0, int64_t g1, int64_t cols);
// Copies rows [r0, r1) of a repacked matrix back to plain GGML blocks (writers), contiguous.
void qb_unpack_repacked(int32_t type, const void *src, void *dst, int64_t r0, int64_t r1, int64_t cols);
// Dequantizes rows [r0, r1) of a repacked matrix to f32, contiguous (rows x cols).
void qb_dequantize_repacked(int32_t type, const void *w, float *dst, int64_t r0, int64_t r1, int64_t cols);
// y[4g..4g+3] for row groups [g0, g1) of a repacked matrix; x quantized (cols/32 q8a blocks).
void qb_matvec_repacked(int32_t type, const void *w, const qb_q8a *x, float *y, int64_t g0, int64_t g1, int64_t cols);
// The same for `n` activation rows at once (batched decode): ys[i][4g..4g+3] from xs[i],
// each bitwise what qb_matvec_repacked gives for xs[i] alone. On AVX-512 each Q4_0/Q8_0
// weight block is loaded and unpacked once for up to four activation rows.
void qb_matvec_repacked_rows(int32_t type, const void *w, const qb_q8a *const *xs, float *const *ys, int64_t n,
                             int64_t g0, int64_t g1, int64_t cols);

#endif
