// Q4_0 decode on 16-row tiles, from the four-row and the sixteen-row layouts
// (qb_matvec_tiles.h). The scalar code is the definition; the AVX-512 paths (and the AVX2
// one of the sixteen-row layout) are the fast ones and are tested bitwise equal to it.
//
// Why tiles (qb_tile16.h): the four-row kernel of qb_repack.c left each row's sum spread
// over four lanes and each block's scale spread to them, so every activation row paid a
// lane reduction's worth of float work per block, and batched decode was bound by that
// float work, not by the weights; on a tile an activation row costs 8 vpdpbusd and one
// convert, multiply and fma per block for 16 rows, the prefill tiles' arithmetic density
// with no packing pass.
#include "qb_matvec_tiles.h"
#include "qb_repack.h"
#include "qb_scalar.h"
#include "qb_tile16.h"
#include <string.h>

// The definition, one output at a time: an exact integer sum per block, rounded once to
// float, scaled by the product of the two scales and added with one rounding (fmaf). The
// sets without the vector path run it; QBKernels' Reference holds the same definition in
// Swift for the tests.
// Groups of `rows` rows (4 or 16, the two layouts of qb_repack.h), each block holding row
// r's f16 scale at byte 2r and its quant byte j (value j in the low nibble, 16 + j in the
// high one) where the layout puts it.
__attribute__((unused)) static void tiles_scalar(const uint8_t *w, const int rows, const qb_q8a *const *xs,
                                                 const int32_t *const *offs, float *const *ys, int64_t n, int64_t g0,
                                                 int64_t g1, int64_t nb) {
    const int64_t block = 18 * rows;
    for (int64_t g = g0; g < g1; g++) {
        const uint8_t *grp = w + g * nb * block;
        for (int r = 0; r < rows; r++) {
            for (int64_t i = 0; i < n; i++) {
                float acc = 0;
                for (int64_t b = 0; b < nb; b++) {
                    const uint8_t *blk = grp + b * block;
                    const qb_q8a *x = xs[i] + b;
                    qb_half hd;
                    memcpy(&hd, blk + 2 * r, 2);
                    int32_t sum = offs[i][b];
                    for (int j = 0; j < 16; j++) {
                        // Four-row groups: row r's 16 bytes after the scales; sixteen-row
                        // groups: bytes 4t..4t+3 as dword r of vector t (qb_repack.h).
                        const uint8_t q = rows == 4 ? blk[QB_X4_QS + 16 * r + j]
                                                    : blk[QB_Q40_X16_QS + 64 * (j / 4) + 4 * r + j % 4];
                        sum += (q & 0xF) * x->qs[j] + (q >> 4) * x->qs[j + 16];
                    }
                    const float scale = h2f(hd) * x->d;
                    acc = fmaf((float)sum, scale, acc);
                }
                ys[i][rows * g + r] = acc;
            }
        }
    }
}

int32_t qb_set_stream_prefetch(int32_t on) {
    return atomic_exchange_explicit(&qb_stream_prefetch_on, on != 0, memory_order_relaxed);
}

#if defined(__AVX2__)
// The next group's bytes at this block's place (`next`, one block's 288) to L2, and the
// block's lines 4 x TILE_PREFETCH_L1 (2 KiB) ahead (`blk`) to L1.
static inline __attribute__((always_inline)) void q40_x16_prefetch(const char *next, const char *blk) {
    for (int l = 0; l < QB_Q40_X16_BYTES; l += 64) {
        _mm_prefetch(next + l, _MM_HINT_T1);
        _mm_prefetch(blk + 4 * TILE_PREFETCH_L1 + l, _MM_HINT_T0);
    }
}
#endif

#if defined(QB_AVX512)
// Block b of a sixteen-row group unpacked into the tile's steps: low nibbles st[0..3], high
// ones st[4..7]; with `pf`, q40_x16_prefetch's lines (`next`: the following group) first.
static inline __attribute__((always_inline)) void x16_block_steps(const uint8_t *g, const char *next, int64_t b,
                                                                  __m512i st[8], const int pf) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const uint8_t *blk = g + b * QB_Q40_X16_BYTES;
    if (pf) q40_x16_prefetch(next + b * QB_Q40_X16_BYTES, (const char *)blk);
    for (int t = 0; t < 4; t++) {
        const __m512i v = _mm512_loadu_si512((const void *)(blk + QB_Q40_X16_QS + 64 * t));
        st[t] = _mm512_and_si512(v, m4);
        st[4 + t] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
    }
}

// A sixteen-row group against R activation rows (1..8): its four vectors per block are the
// tile's steps (low nibbles steps 0-3, high ones 4-7), met by the activations as in
// tile_rows, with the same integer sums and float sequence. One linear stream; with `pf` the
// next group goes to L2 a block's share at a time, the near lines to L1 as far ahead as the
// four-row tiles take their four streams together.
static inline __attribute__((always_inline)) void x16_rows(const uint8_t *g, const qb_q8a *const *xs,
                                                           const int32_t *const *offs, float *const *ys, int64_t y0,
                                                           int64_t nb, const int R, const int pf) {
    const char *next = (const char *)g + nb * QB_Q40_X16_BYTES;
    __m512 acc[8];
    for (int k = 0; k < R; k++) acc[k] = _mm512_setzero_ps();
#pragma clang loop unroll_count(2)
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *blk = g + b * QB_Q40_X16_BYTES;
        __m512i st[8];
        x16_block_steps(g, next, b, st, pf);
        const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)blk));
        for (int k = 0; k < R; k++) {
            const qb_q8a *x = xs[k] + b;
            const __m512i p = tile_sum(_mm512_set1_epi32(offs[k][b]), st, x->qs, R);
            acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_mul_ps(dw, _mm512_set1_ps(x->d)), acc[k]);
        }
    }
    for (int k = 0; k < R; k++) _mm512_storeu_ps(ys[k] + y0, acc[k]);
}

// R rows (a constant) of a group, in one pass.
static inline __attribute__((always_inline)) void x16_pass(const uint8_t *g, const qb_q8a *const *xs, const int32_t *const *offs,
                                                           float *const *ys, int64_t y0, int64_t nb, const int R, const int pf) {
    x16_rows(g, xs, offs, ys, y0, nb, R, pf);
}

// Two adjacent sixteen-row groups (the second `gb` bytes after `g`) against R activation
// rows (2..4), for batched decode: each activation dword is broadcast once for both groups'
// vpdpbusd, and both groups' next blocks stream in together. From memory, one thread, the
// 1B's 8192 x 2048 gate (results/batch-pairs-2026-12-01/): 2 rows 0-12% and 4 rows 8-21% faster
// than a group at a time. Not past four: eight rows in two passes over the pair ran 13%
// slower than one pass over a group (two unpacks of the values a block; the sixteen value
// vectors and eight accumulators of eight rows do not fit the 32 registers). Each output
// keeps x16_rows' integer sums (exact, in any order) and float sequence, so a batch's
// outputs stay bitwise those of its rows alone.
static inline __attribute__((always_inline)) void x16_pair_rows(const uint8_t *g, int64_t gb, const qb_q8a *const *xs,
                                                                const int32_t *const *offs, float *const *ys, int64_t y0,
                                                                int64_t nb, const int R) {
    const char *next = (const char *)g + 2 * gb;
    __m512 acc[4][2];
    for (int k = 0; k < R; k++) acc[k][0] = acc[k][1] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        __m512i st[2][8];
        __m512 dw[2];
        for (int j = 0; j < 2; j++) {
            x16_block_steps(g + j * gb, next + j * gb, b, st[j], 1);
            dw[j] = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(g + j * gb + b * QB_Q40_X16_BYTES)));
        }
        for (int k = 0; k < R; k++) {
            const qb_q8a *x = xs[k] + b;
            __m512i p[2];
            p[0] = p[1] = _mm512_set1_epi32(offs[k][b]);
            for (int t = 0; t < 8; t++) {
                const __m512i a = tile_bcast32(x->qs + 4 * t);
                p[0] = _mm512_dpbusd_epi32(p[0], st[0][t], a);
                p[1] = _mm512_dpbusd_epi32(p[1], st[1][t], a);
            }
            const __m512 xd = _mm512_set1_ps(x->d);
            for (int j = 0; j < 2; j++) acc[k][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p[j]), _mm512_mul_ps(dw[j], xd), acc[k][j]);
        }
    }
    for (int k = 0; k < R; k++)
        for (int j = 0; j < 2; j++) _mm512_storeu_ps(ys[k] + y0 + 16 * j, acc[k][j]);
}
#elif defined(__AVX2__)
// The AVX2 set reads the sixteen-row groups in 32-byte halves, rows 8h..8h+7 of each vector
// (dword r of half h: row 8h + r's values 4t..4t+3 and 16 + 4t..), with the same integer sums
// and float sequence as the definition: vpmaddubsw meets a half's eight steps with the row's
// values (two products per 16-bit lane; eight steps stay within 8 x 2 x 15 x 128 = 30720),
// vpmaddwd joins each row's two lanes, and the block's offset is added as an integer.
static inline __attribute__((always_inline)) void x16_half_steps(const uint8_t *blk, const int h, __m256i st[8]) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    for (int t = 0; t < 4; t++) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(blk + QB_Q40_X16_QS + 64 * t + 32 * h));
        st[t] = _mm256_and_si256(v, m4);
        st[4 + t] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
    }
}

static inline __attribute__((always_inline)) __m256i x16_half_sum(const int32_t start, const __m256i st[8], const int8_t *qs) {
    __m256i p[4];
    for (int t = 0; t < 4; t++) {
        int32_t lo, hi;
        memcpy(&lo, qs + 4 * t, 4);
        memcpy(&hi, qs + 16 + 4 * t, 4);
        p[t] = _mm256_add_epi16(_mm256_maddubs_epi16(st[t], _mm256_set1_epi32(lo)),
                                _mm256_maddubs_epi16(st[4 + t], _mm256_set1_epi32(hi)));
    }
    const __m256i s = _mm256_add_epi16(_mm256_add_epi16(p[0], p[1]), _mm256_add_epi16(p[2], p[3]));
    return _mm256_add_epi32(_mm256_set1_epi32(start), _mm256_madd_epi16(s, _mm256_set1_epi16(1)));
}

// Halves [h0, h1) of a sixteen-row group against R activation rows (1..8). One or two rows
// take both halves in one pass, a linear stream (with `pf`, prefetched as the AVX-512
// kernel's); more rows take a pass per half (its
// eight steps and up to eight accumulators fill the 16 registers; both halves' would need
// twice as many), the second pass reading the group from cache.
static inline __attribute__((always_inline)) void x16_rows(const uint8_t *g, const qb_q8a *const *xs,
                                                           const int32_t *const *offs, float *const *ys, int64_t y0,
                                                           int64_t nb, const int R, const int h0, const int h1,
                                                           const int pf) {
    const char *next = (const char *)g + nb * QB_Q40_X16_BYTES;
    __m256 acc[8][2];
    for (int k = 0; k < R; k++)
        for (int h = h0; h < h1; h++) acc[k][h] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *blk = g + b * QB_Q40_X16_BYTES;
        if (pf && h0 == 0) q40_x16_prefetch(next + b * QB_Q40_X16_BYTES, (const char *)blk);
        for (int h = h0; h < h1; h++) {
            __m256i st[8];
            x16_half_steps(blk, h, st);
            const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(blk + 16 * h)));
            // Unrolled: as a loop, clang kept the rows' accumulators in an array on the
            // stack indexed by the row, each row's fma reading and writing its slot in turn.
            // On an Intel Xeon (Emerald Rapids) the 1B Q4_0's eight-sequence step took 1.105x
            // this time that way (results/batch-unroll-avx2-2026-12-05-emr/).
#pragma clang loop unroll(full)
            for (int k = 0; k < R; k++) {
                const qb_q8a *x = xs[k] + b;
                const __m256i p = x16_half_sum(offs[k][b], st, x->qs);
                acc[k][h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(dw, _mm256_set1_ps(x->d)), acc[k][h]);
            }
        }
    }
    for (int k = 0; k < R; k++)
        for (int h = h0; h < h1; h++) _mm256_storeu_ps(ys[k] + y0 + 8 * h, acc[k][h]);
}

// R rows (a constant) of a group: both halves at once for one or two, else half by half.
static inline __attribute__((always_inline)) void x16_pass(const uint8_t *g, const qb_q8a *const *xs, const int32_t *const *offs,
                                                           float *const *ys, int64_t y0, int64_t nb, const int R,
                                                           const int pf) {
    if (R <= 2) return x16_rows(g, xs, offs, ys, y0, nb, R, 0, 2, pf);
    x16_rows(g, xs, offs, ys, y0, nb, R, 0, 1, pf);
    x16_rows(g, xs, offs, ys, y0, nb, R, 1, 2, pf);
}
#endif

int qb_matvec_q4_0_tiles_fast(void) {
#if defined(QB_AVX512)
    return 1;
#else
    return 0;
#endif
}

TILE_SCHEDULE void qb_matvec_q4_0_tiles(const void *w, const qb_q8a *const *xs, const int32_t *const *offs, float *const *ys,
                                        int64_t n, int64_t g0, int64_t g1, int64_t cols) {
    const int64_t nb = cols / 32;
#if defined(QB_AVX512)
    tile_groups((const uint8_t *)w, xs, offs, ys, n, g0, g1, nb, QB_Q4_0);
#else
    tiles_scalar((const uint8_t *)w, 4, xs, offs, ys, n, g0, g1, nb);
#endif
}

#if defined(__AVX2__)
// Groups [g0, g1) against n activation rows, with the kernels' own prefetches.
static inline __attribute__((always_inline)) void x16_groups(const void *w, const qb_q8a *const *xs,
                                                             const int32_t *const *offs, float *const *ys, int64_t n,
                                                             int64_t g0, int64_t g1, int64_t nb) {
#if defined(QB_AVX512)
    // Two to four rows take the groups in pairs (x16_pair_rows); one row, whose decode
    // streams the weights from memory, keeps one linear stream, and more than four keep the
    // one-group passes.
    if (n >= 2 && n <= 4) {
        const int64_t gb = nb * QB_Q40_X16_BYTES;
        for (; g0 + 1 < g1; g0 += 2) {
            const uint8_t *grp = (const uint8_t *)w + g0 * gb;
            switch (n) {
            case 4: x16_pair_rows(grp, gb, xs, offs, ys, 16 * g0, nb, 4); break;
            case 3: x16_pair_rows(grp, gb, xs, offs, ys, 16 * g0, nb, 3); break;
            default: x16_pair_rows(grp, gb, xs, offs, ys, 16 * g0, nb, 2); break;
            }
        }
    }
#endif
    for (int64_t g = g0; g < g1; g++) {
        const uint8_t *grp = (const uint8_t *)w + g * nb * QB_Q40_X16_BYTES;
        for (int64_t i = 0; i < n; i += 8) {
            const int32_t *const *o = offs + i;
            switch (n - i < 8 ? n - i : 8) {
            case 8: x16_pass(grp, xs + i, o, ys + i, 16 * g, nb, 8, 1); break;
            case 7: x16_pass(grp, xs + i, o, ys + i, 16 * g, nb, 7, 1); break;
            case 6: x16_pass(grp, xs + i, o, ys + i, 16 * g, nb, 6, 1); break;
            case 5: x16_pass(grp, xs + i, o, ys + i, 16 * g, nb, 5, 1); break;
            case 4: x16_pass(grp, xs + i, o, ys + i, 16 * g, nb, 4, 1); break;
            case 3: x16_pass(grp, xs + i, o, ys + i, 16 * g, nb, 3, 1); break;
            case 2: x16_pass(grp, xs + i, o, ys + i, 16 * g, nb, 2, 1); break;
            default: x16_pass(grp, xs + i, o, ys + i, 16 * g, nb, 1, 1); break;
            }
        }
    }
}
#endif

TILE_SCHEDULE void qb_matvec_q4_0_x16(const void *w, const qb_q8a *const *xs, const int32_t *const *offs, float *const *ys,
                                      int64_t n, int64_t g0, int64_t g1, int64_t cols) {
    const int64_t nb = cols / 32;
#if defined(__AVX2__)
    // Batches keep the prefetches whatever the setting: on AMD's Zen 4, without them 4 rows
    // took 1.2x and 8 rows 1.4x the time (results/x16-prefetch-zen4-2026-12-01/).
    if (n == 1 && !qb_stream_prefetch()) {
        for (int64_t g = g0; g < g1; g++)
            x16_pass((const uint8_t *)w + g * nb * QB_Q40_X16_BYTES, xs, offs, ys, 16 * g, nb, 1, 0);
        return;
    }
    x16_groups(w, xs, offs, ys, n, g0, g1, nb);
#else
    tiles_scalar((const uint8_t *)w, QB_Q40_X16_ROWS, xs, offs, ys, n, g0, g1, nb);
#endif
}
