// Interleaved Q4_0 decode on 16-row tiles (qb_matvec_tiles.h). The scalar code is the
// definition; the AVX-512 path is the fast one and is tested bitwise equal to it.
//
// Why tiles: the four-row kernel of qb_repack.c leaves each row's sum spread over four
// lanes and each block's scale spread to them, so every activation row pays a lane
// reduction's worth of float work per block; batched decode is then bound by that float
// work, not by the weights. Here the four groups of a tile are transposed once per block
// (shared by every activation row) so each of the 16 lanes of a 64-byte vector is one
// weight row: an activation row costs 8 vpdpbusd and one convert, multiply and fma per
// block for 16 rows, which is the prefill tiles' arithmetic density with no packing pass.
#include "qb_matvec_tiles.h"
#include "qb_scalar.h"
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

#if defined(QB_AVX512)
// Prefetch. A tile reads four streams in step (one per group, cols / 32 x 72 bytes each:
// 4.6 KB at 2048 columns), too short and too many for the hardware prefetcher, which
// left one core at half the four-row kernel's bandwidth (one long stream, qb_repack.c).
// The tile's groups are contiguous, and so is the next tile: while a tile is computed, the
// next one is prefetched into L2 front to back, one tile's share of lines per block (a
// single linear stream from memory, a whole tile's time ahead); each stream then pulls
// its near lines from L2 into L1 a few blocks ahead.
enum { TILE_PREFETCH_L1 = 512 };

static inline __m512i tile_bcast32(const int8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
}

// Rows of a tile (4 groups, grp[i] the first block of each) against R activation rows
// (1..8), each's 16 outputs stored under `mask` at ys[k] + y0. Per block: the four groups'
// 64 quant bytes are transposed to W[q] and split into nibbles: lo[q] holds values
// 4q..4q+3, hi[q] values 16+4q..16+4q+3 of each row, each met by the matching four
// activation bytes broadcast to every lane. Lane 4r + i of W[q] is row r of group i (a 4x4
// dword transpose inside each 128-bit lane: four unpacks of dwords and four of qwords, each
// a one-cycle in-lane shuffle, where the group-major order 4i + r took four two-source
// permutes and four lane shuffles); the scales are put in the same order once per block
// and the sums back in row order once per tile. One or two rows (single-sequence decode,
// bound by memory) keep the group-major order 4i + r, which needs neither permute: the
// whole-step B=1 time was ~5% higher with the row-major order on one core.
static inline __attribute__((always_inline)) void tile_rows(const uint8_t *const *grp, const qb_q8a *const *xs,
                                                            const int32_t *const *offs, float *const *ys, int64_t y0,
                                                            int64_t nb, __mmask16 mask, const int R) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const int row_major = R > 2;
    // Group-major lane 4i + r to row-major 4r + i; the same index takes it back.
    const __m512i swap = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    // Group-major: two groups' dwords (index 4r + q, from 0..15 and 16..31) regrouped by
    // quad q: lanes 8q' + 4i + r for q = q' (low half of the quads) or q' + 2 (high half).
    const __m512i pick_lo = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
    const __m512i pick_hi = _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31);
    __m512 acc[8];
    for (int k = 0; k < R; k++) acc[k] = _mm512_setzero_ps();
    // The next tile (prefetching past the matrix is harmless: a prefetch never faults).
    const char *next = (const char *)grp[0] + 4 * nb * QB_X4_Q4_BYTES;
    // Two blocks per iteration (with TILE_SCHEDULE below): see there.
#pragma clang loop unroll_count(2)
    for (int64_t b = 0; b < nb; b++) {
        const int64_t o = b * QB_X4_Q4_BYTES;
        for (int64_t l = 4 * o; l < 4 * (o + QB_X4_Q4_BYTES); l += 64) _mm_prefetch(next + l, _MM_HINT_T1);
        for (int i = 0; i < 4; i++) _mm_prefetch((const char *)grp[i] + o + TILE_PREFETCH_L1, _MM_HINT_T0);
        const __m512i v0 = _mm512_loadu_si512((const void *)(grp[0] + o + QB_X4_QS));
        const __m512i v1 = _mm512_loadu_si512((const void *)(grp[1] + o + QB_X4_QS));
        const __m512i v2 = _mm512_loadu_si512((const void *)(grp[2] + o + QB_X4_QS));
        const __m512i v3 = _mm512_loadu_si512((const void *)(grp[3] + o + QB_X4_QS));
        __m512i w0, w1, w2, w3;
        if (row_major) {
            // 128-bit lane r of v_i is row r of group i (its dwords q = 0..3).
            const __m512i t0 = _mm512_unpacklo_epi32(v0, v1), t1 = _mm512_unpackhi_epi32(v0, v1);
            const __m512i t2 = _mm512_unpacklo_epi32(v2, v3), t3 = _mm512_unpackhi_epi32(v2, v3);
            w0 = _mm512_unpacklo_epi64(t0, t2), w1 = _mm512_unpackhi_epi64(t0, t2);
            w2 = _mm512_unpacklo_epi64(t1, t3), w3 = _mm512_unpackhi_epi64(t1, t3);
        } else {
            const __m512i a01 = _mm512_permutex2var_epi32(v0, pick_lo, v1), b01 = _mm512_permutex2var_epi32(v0, pick_hi, v1);
            const __m512i a23 = _mm512_permutex2var_epi32(v2, pick_lo, v3), b23 = _mm512_permutex2var_epi32(v2, pick_hi, v3);
            // W[q]: lanes 0-7 from groups 0-1, lanes 8-15 from groups 2-3.
            w0 = _mm512_shuffle_i64x2(a01, a23, 0x44), w1 = _mm512_shuffle_i64x2(a01, a23, 0xEE);
            w2 = _mm512_shuffle_i64x2(b01, b23, 0x44), w3 = _mm512_shuffle_i64x2(b01, b23, 0xEE);
        }
        const __m512i lo0 = _mm512_and_si512(w0, m4), hi0 = _mm512_and_si512(_mm512_srli_epi16(w0, 4), m4);
        const __m512i lo1 = _mm512_and_si512(w1, m4), hi1 = _mm512_and_si512(_mm512_srli_epi16(w1, 4), m4);
        const __m512i lo2 = _mm512_and_si512(w2, m4), hi2 = _mm512_and_si512(_mm512_srli_epi16(w2, 4), m4);
        const __m512i lo3 = _mm512_and_si512(w3, m4), hi3 = _mm512_and_si512(_mm512_srli_epi16(w3, 4), m4);
        // The 16 rows' scales, stored in order 4i + r (put in the order 4r + i when the lanes are).
        const __m128i s01 = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(grp[0] + o)),
                                               _mm_loadl_epi64((const __m128i *)(grp[1] + o)));
        const __m128i s23 = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(grp[2] + o)),
                                               _mm_loadl_epi64((const __m128i *)(grp[3] + o)));
        __m512 dw = _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(s01), s23, 1));
        if (row_major) dw = _mm512_permutexvar_ps(swap, dw);
        for (int k = 0; k < R; k++) {
            const qb_q8a *x = xs[k] + b;
            // Integer sums: any order gives the same total. Up to seven rows: two
            // independent chains per row, since R chains of eight dependent vpdpbusd
            // each are too few to cover its latency at two a cycle (Intel Emerald Rapids,
            // cache-resident: 3 to 6 rows 9-12% faster with two, 7 rows 4-7%). Eight rows
            // keep one chain: with sixteen the loop runs out of the 32 registers beside the
            // nibbles and accumulators, and was 8-15% slower.
            __m512i p = _mm512_set1_epi32(offs[k][b]);
            if (R > 7) {
                p = _mm512_dpbusd_epi32(p, lo0, tile_bcast32(x->qs + 0));
                p = _mm512_dpbusd_epi32(p, lo1, tile_bcast32(x->qs + 4));
                p = _mm512_dpbusd_epi32(p, lo2, tile_bcast32(x->qs + 8));
                p = _mm512_dpbusd_epi32(p, lo3, tile_bcast32(x->qs + 12));
                p = _mm512_dpbusd_epi32(p, hi0, tile_bcast32(x->qs + 16));
                p = _mm512_dpbusd_epi32(p, hi1, tile_bcast32(x->qs + 20));
                p = _mm512_dpbusd_epi32(p, hi2, tile_bcast32(x->qs + 24));
                p = _mm512_dpbusd_epi32(p, hi3, tile_bcast32(x->qs + 28));
            } else {
                __m512i s = _mm512_setzero_si512();
                p = _mm512_dpbusd_epi32(p, lo0, tile_bcast32(x->qs + 0));
                s = _mm512_dpbusd_epi32(s, lo1, tile_bcast32(x->qs + 4));
                p = _mm512_dpbusd_epi32(p, lo2, tile_bcast32(x->qs + 8));
                s = _mm512_dpbusd_epi32(s, lo3, tile_bcast32(x->qs + 12));
                p = _mm512_dpbusd_epi32(p, hi0, tile_bcast32(x->qs + 16));
                s = _mm512_dpbusd_epi32(s, hi1, tile_bcast32(x->qs + 20));
                p = _mm512_dpbusd_epi32(p, hi2, tile_bcast32(x->qs + 24));
                s = _mm512_dpbusd_epi32(s, hi3, tile_bcast32(x->qs + 28));
                p = _mm512_add_epi32(p, s);
            }
            const __m512 scale = _mm512_mul_ps(dw, _mm512_set1_ps(x->d));
            acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), scale, acc[k]);
        }
    }
    for (int k = 0; k < R; k++) _mm512_mask_storeu_ps(ys[k] + y0, mask, row_major ? _mm512_permutexvar_ps(swap, acc[k]) : acc[k]);
}
#endif

// Eight rows are bound by the two pipes that run vpdpbusd, which also run the multiply and
// the fma (convert, shuffles and nibble masks go elsewhere): 10 issue slots per 8
// vpdpbusd, so at best 80% of vpdpbusd's rate. Generic x86-64-v4 scheduling of the loop
// reached ~95% of that bound on Zen 4 (8 rows, 2048 columns, cache-resident: 2.75 G
// vpdpbusd/s at 3.6 GHz); two blocks per iteration scheduled for Zen 4 reach ~99% (2.85,
// medians of 9 alternating runs; 2.62 -> 2.69 streaming a 148 MB matrix from memory),
// and neither alone did. Tuning changes only the instruction order, so the function
// still runs on any AVX-512 VNNI CPU.
#if defined(QB_AVX512) && defined(__x86_64__)
#define TILE_SCHEDULE __attribute__((target("tune=znver4")))
#else
#define TILE_SCHEDULE
#endif

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
    for (int64_t g = g0; g < g1; g += 4) {
        const int m = g1 - g < 4 ? (int)(g1 - g) : 4;
        const uint8_t *grp[4];
        for (int i = 0; i < 4; i++) grp[i] = (const uint8_t *)w + (g + (i < m ? i : m - 1)) * nb * QB_X4_Q4_BYTES;
        const __mmask16 mask = m == 4 ? (__mmask16)0xFFFF : (__mmask16)((1u << (4 * m)) - 1);
        // Eight activation rows per pass over the tile (eight accumulators and the eight
        // nibble vectors fit the 32 registers); more rows read the tile again from cache.
        for (int64_t i = 0; i < n; i += 8) {
            switch (n - i < 8 ? n - i : 8) {
            case 8: tile_rows(grp, xs + i, offs + i, ys + i, 4 * g, nb, mask, 8); break;
            case 7: tile_rows(grp, xs + i, offs + i, ys + i, 4 * g, nb, mask, 7); break;
            case 6: tile_rows(grp, xs + i, offs + i, ys + i, 4 * g, nb, mask, 6); break;
            case 5: tile_rows(grp, xs + i, offs + i, ys + i, 4 * g, nb, mask, 5); break;
            case 4: tile_rows(grp, xs + i, offs + i, ys + i, 4 * g, nb, mask, 4); break;
            case 3: tile_rows(grp, xs + i, offs + i, ys + i, 4 * g, nb, mask, 3); break;
            case 2: tile_rows(grp, xs + i, offs + i, ys + i, 4 * g, nb, mask, 2); break;
            default: tile_rows(grp, xs + i, offs + i, ys + i, 4 * g, nb, mask, 1); break;
            }
        }
    }
#else
    tiles_scalar((const uint8_t *)w, xs, offs, ys, n, g0, g1, nb);
#endif
}
