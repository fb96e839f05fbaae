// Interleaved Q4_0 decode on 16-row tiles (qb_matvec_tiles.h). The scalar code is the
// definition; the AVX-512 path is the fast one and is tested bitwise equal to it.
//
// Why tiles (qb_tile16.h): the four-row kernel of qb_repack.c left each row's sum spread
// over four lanes and each block's scale spread to them, so every activation row paid a
// lane reduction's worth of float work per block, and batched decode was bound by that
// float work, not by the weights; on a tile an activation row costs 8 vpdpbusd and one
// convert, multiply and fma per block for 16 rows, the prefill tiles' arithmetic density
// with no packing pass.
#include "qb_matvec_tiles.h"
#include "qb_scalar.h"
#include "qb_tile16.h"
#include <string.h>

// The definition, one output at a time: an exact integer sum per block, rounded once to
// float, scaled by the product of the two scales and added with one rounding (fmaf). The
// sets without the vector path run it; QBKernels' Reference holds the same definition in
// Swift for the tests.
__attribute__((unused)) static void tiles_scalar(const uint8_t *w, const qb_q8a *const *xs, const int32_t *const *offs, float *const *ys,
                         int64_t n, int64_t g0, int64_t g1, int64_t nb) {
    for (int64_t g = g0; g < g1; g++) {
        const uint8_t *grp = w + g * nb * QB_X4_Q4_BYTES;
        for (int r = 0; r < 4; r++) {
            for (int64_t i = 0; i < n; i++) {
                float acc = 0;
                for (int64_t b = 0; b < nb; b++) {
                    const uint8_t *blk = grp + b * QB_X4_Q4_BYTES;
                    const uint8_t *q = blk + QB_X4_QS + 16 * r;
                    const qb_q8a *x = xs[i] + b;
                    qb_half hd;
                    memcpy(&hd, blk + 2 * r, 2);
                    int32_t sum = offs[i][b];
                    for (int j = 0; j < 16; j++) sum += (q[j] & 0xF) * x->qs[j] + (q[j] >> 4) * x->qs[j + 16];
                    const float scale = h2f(hd) * x->d;
                    acc = fmaf((float)sum, scale, acc);
                }
                ys[i][4 * g + r] = acc;
            }
        }
    }
}

int qb_matvec_q4_0x16_fast(void) {
#if defined(QB_AVX512)
    return 1;
#else
    return 0;
#endif
}

TILE_SCHEDULE void qb_matvec_q4_0x16(const void *w, const qb_q8a *const *xs, const int32_t *const *offs, float *const *ys,
                                     int64_t n, int64_t g0, int64_t g1, int64_t cols) {
    const int64_t nb = cols / 32;
#if defined(QB_AVX512)
    tile_groups((const uint8_t *)w, xs, offs, ys, n, g0, g1, nb, QB_Q4_0);
#else
    tiles_scalar((const uint8_t *)w, xs, offs, ys, n, g0, g1, nb);
#endif
}
