#ifndef QB_MATVEC_TILES_H
#define QB_MATVEC_TILES_H
#include <stdint.h>
#include "qb_activation.h"

// Decode of Q4_0 matrices on tiles of 16 rows, for one activation row or a batch of them
// (batched decode: several sequences' next positions against one read of the weights):
// from the four-row interleaved layout (qb_repack.h; a tile is four consecutive row groups)
// or from the sixteen-row layout, whose groups are the tiles.
//
// Every output is the same sequence of float operations whatever the batch and whatever
// rows share its tile, so a sequence's logits do not depend on its neighbours: for weight
// row r and activation row x, over blocks b in order,
//   acc = fmaf((float)(sum_j q[j] * x.qs[j] + offs[b]), h2f(d_r) * x.d, acc)
// with q the block's unsigned nibbles (0..15) and offs[b] = -8 * sum_j x.qs[j] (Q4_0's
// offset of 8 taken out in integers, so the block's sum is exact before it is rounded once).

// 1 when the active set computes qb_matvec_q4_0_tiles with vector code (AVX-512 VNNI); the
// other sets have only its scalar definition, which callers use in tests, not in decode.
// qb_matvec_q4_0_x16 has vector code on the AVX-512 and AVX2 sets (the sets that repack Q4_0
// in sixteen-row groups), the scalar definition on the portable one.
int qb_matvec_q4_0_tiles_fast(void);

// ys[i][4g .. 4g+3] for row groups g in [g0, g1) of a Q4_0 matrix in four-row groups of
// `cols` columns, for activation rows i < n (xs[i]: cols / 32 blocks, offs[i] from
// qb_q8a_offsets with width 32 and k = -8).
// Any group range: groups are taken four at a time, a last partial tile repeats its final
// group and stores only the rows it owns.
void qb_matvec_q4_0_tiles(const void *w, const qb_q8a *const *xs, const int32_t *const *offs, float *const *ys, int64_t n,
                          int64_t g0, int64_t g1, int64_t cols);

// The same for a Q4_0 matrix in sixteen-row groups: ys[i][16g .. 16g+15] for groups g in
// [g0, g1). Each output is bitwise what qb_matvec_q4_0_tiles gives for the same row.
void qb_matvec_q4_0_x16(const void *w, const qb_q8a *const *xs, const int32_t *const *offs, float *const *ys, int64_t n,
                        int64_t g0, int64_t g1, int64_t cols);

// Whether the one-row decode streams that were timed faster without their own prefetches on
// some CPU issue them (on) or leave the stream to the hardware prefetcher (off): Q4_0 from
// sixteen-row groups (qb_matvec_q4_0_x16; its prefetches a block's share of the next group
// to L2, the lines 2 KiB ahead to L1), Q4_K and 4-bit MLX from sixteen-row groups
// (qb_matvec_q4_k_x16, qb_matvec_mlx_x16), Q6_K from sixteen-row groups on the AVX-512 and
// AVX2 sets (qb_matvec_q6_k_x16) and, on the AVX-512 set, Q8_0 from four-row groups
// (qb_matvec_repacked). Off, the AVX2 set's Q4_K and Q6_K groups still hint each line into L2
// far ahead (no L1 prefetch). Batches always prefetch. The set's kernels read it on each call;
// qb_dispatch.c sets it for the CPU when it first chooses a set (QB_STREAM_PREFETCH=0 or 1
// overrides). Returns the setting it replaces.
int32_t qb_set_stream_prefetch(int32_t on);

#endif
