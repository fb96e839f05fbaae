// The AVX-512 decode tile of the four-row interleaved types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0;
// layout in qb_repack.h): four consecutive row groups, 16 rows, transposed once per block
// so each of the 16 lanes of a 64-byte vector is one weight row. An activation row then
// costs 8 vpdpbusd and a few float operations per block for all 16 rows, shared loads and
// transposes aside, so batched decode is bound by the vpdpbusd pipes rather than by
// per-row lane reductions. Four-row Q4_0 takes it through qb_matvec_q4_0_tiles
// (qb_matvec_tiles.c; this set and the AVX2 one repack Q4_0 in sixteen-row groups, whose
// blocks are the tile's steps as stored, wherever the row count allows), the other types
// through qb_matvec_repacked and qb_matvec_repacked_rows (qb_repack.c; one Q8_0 row takes a
// single-stream kernel there with the same arithmetic).
//
// Each row's block sum is one exact integer, and its float arithmetic the same short
// sequence whatever the batch and whatever rows share the tile, so a sequence's outputs do
// not depend on its neighbours:
//   Q4_0:                    acc = fma(I + offs[b], d x dx, acc)  (offs: -8 x the activations' sum)
//   Q4_1, Q5_0, Q5_1, Q8_0:  acc = fma(I, d x dx, acc); acc = fma(c, sx, acc)
// with c the row's minimum (Q4_1, Q5_1), -16 x d (Q5_0) or -128 x d (Q8_0, whose quants
// meet the activations stored + 128), both exact; sx the activations' float block sum.
// Every set's unit includes this; only the AVX-512 set compiles more than TILE_SCHEDULE.
#ifndef QB_TILE16_H
#define QB_TILE16_H

// Eight rows are bound by the two pipes that run vpdpbusd, which also run the multiply and
// the fma (convert, shuffles and nibble masks go elsewhere): 10 issue slots per 8
// vpdpbusd, so at best 80% of vpdpbusd's rate. Generic x86-64-v4 scheduling of the Q4_0
// loop reached ~95% of that bound on Zen 4 (8 rows, 2048 columns, cache-resident: 2.75 G
// vpdpbusd/s at 3.6 GHz); two blocks per iteration scheduled for Zen 4 reach ~99% (2.85,
// medians of 9 alternating runs; 2.62 -> 2.69 streaming a 148 MB matrix from memory),
// and neither alone did. Tuning changes only the instruction order, so the functions
// still run on any AVX-512 VNNI CPU.
#if defined(QB_AVX512) && defined(__x86_64__)
#define TILE_SCHEDULE __attribute__((target("tune=znver4")))
#else
#define TILE_SCHEDULE
#endif

// Prefetch. A tile reads four streams in step (one per group, cols / 32 x 72 bytes each for
// Q4_0: 4.6 KB at 2048 columns), too short and too many for the hardware prefetcher, which
// left one core at half the four-row kernel's bandwidth (one long stream). The tile's groups
// are contiguous, and so is the next tile: while a tile is computed, the next one is
// prefetched into L2 front to back, one tile's share of lines per block (a single linear
// stream from memory, a whole tile's time ahead); each stream then pulls its near lines from
// L2 into L1 a few blocks ahead.
enum { TILE_PREFETCH_L1 = 512 };

#if defined(QB_AVX512)
#include "qb_repack.h"
#include "qb_scalar.h"
#include <immintrin.h>
#include <string.h>

static inline __m512i tile_bcast32(const int8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
}

// Group-major lane 4i + r to row-major 4r + i; the same index takes it back.
static inline __m512i tile_swap(void) { return _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15); }

// Four groups' 64-byte vectors v[i] (128-bit lane r: row r of group i, dwords q = 0..3) to
// w[q], dword q of every row. Row-major (lane 4r + i of w[q] is row r of group i) is a 4x4
// dword transpose inside each 128-bit lane: four unpacks of dwords and four of qwords, each
// a one-cycle in-lane shuffle, where the group-major order 4i + r took four two-source
// permutes and four lane shuffles. One or two activation rows (single-sequence decode,
// bound by memory) keep the group-major order, which needs no permute of the scales and
// sums: the whole-step B=1 time was ~5% higher with the row-major order on one core.
static inline __attribute__((always_inline)) void tile_transpose(const __m512i v[4], __m512i w[4], const int row_major) {
    if (row_major) {
        const __m512i t0 = _mm512_unpacklo_epi32(v[0], v[1]), t1 = _mm512_unpackhi_epi32(v[0], v[1]);
        const __m512i t2 = _mm512_unpacklo_epi32(v[2], v[3]), t3 = _mm512_unpackhi_epi32(v[2], v[3]);
        w[0] = _mm512_unpacklo_epi64(t0, t2), w[1] = _mm512_unpackhi_epi64(t0, t2);
        w[2] = _mm512_unpacklo_epi64(t1, t3), w[3] = _mm512_unpackhi_epi64(t1, t3);
    } else {
        // Two groups' dwords (index 4r + q, from 0..15 and 16..31) regrouped by quad q: lanes
        // 8q' + 4i + r for q = q' (low half of the quads) or q' + 2 (high half).
        const __m512i pick_lo = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
        const __m512i pick_hi = _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31);
        const __m512i a01 = _mm512_permutex2var_epi32(v[0], pick_lo, v[1]), b01 = _mm512_permutex2var_epi32(v[0], pick_hi, v[1]);
        const __m512i a23 = _mm512_permutex2var_epi32(v[2], pick_lo, v[3]), b23 = _mm512_permutex2var_epi32(v[2], pick_hi, v[3]);
        // w[q]: lanes 0-7 from groups 0-1, lanes 8-15 from groups 2-3.
        w[0] = _mm512_shuffle_i64x2(a01, a23, 0x44), w[1] = _mm512_shuffle_i64x2(a01, a23, 0xEE);
        w[2] = _mm512_shuffle_i64x2(b01, b23, 0x44), w[3] = _mm512_shuffle_i64x2(b01, b23, 0xEE);
    }
}

// The 16 rows' f16 at byte `at` of each group's block (stored in order 4i + r) as f32 in the
// lanes' order.
static inline __m512 tile_halves(const uint8_t *const *grp, int64_t at, const int row_major) {
    const __m128i s01 = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(grp[0] + at)),
                                           _mm_loadl_epi64((const __m128i *)(grp[1] + at)));
    const __m128i s23 = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(grp[2] + at)),
                                           _mm_loadl_epi64((const __m128i *)(grp[3] + at)));
    const __m512 h = _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(s01), s23, 1));
    return row_major ? _mm512_permutexvar_ps(tile_swap(), h) : h;
}

// A block's integer sum for one activation row of R (1..8) in the tile's lanes: `start`
// plus its steps st[t] met by the row's values 4t..4t+3 (`qs`). Any order gives the same
// total. Up to seven rows: two independent chains per row, since R chains of eight
// dependent vpdpbusd each are too few to cover its latency at two a cycle (Intel Emerald
// Rapids, cache-resident: 3 to 6 rows 9-12% faster with two, 7 rows 4-7%). Eight rows keep
// one chain: with sixteen the loop runs out of the 32 registers beside the nibbles and
// accumulators, and was 8-15% slower.
static inline __attribute__((always_inline)) __m512i tile_sum(__m512i start, const __m512i st[8], const int8_t *qs,
                                                              const int R) {
    __m512i p = start;
    if (R > 7) {
        for (int t = 0; t < 8; t++) p = _mm512_dpbusd_epi32(p, st[t], tile_bcast32(qs + 4 * t));
        return p;
    }
    __m512i s = _mm512_setzero_si512();
    for (int t = 0; t < 8; t += 2) {
        p = _mm512_dpbusd_epi32(p, st[t], tile_bcast32(qs + 4 * t));
        s = _mm512_dpbusd_epi32(s, st[t + 1], tile_bcast32(qs + 4 * t + 4));
    }
    return _mm512_add_epi32(p, s);
}

// Rows of a tile of `type` (a constant; 4 groups, grp[i] the first block of each) against
// R activation rows (1..8), each's 16 outputs stored under `mask` at ys[k] + y0. Per block
// the four groups' values become st[t], values 4t..4t+3 of every row, each met by the
// matching four activation bytes broadcast to every lane. Q4_0 and Q4_1 transpose the
// quant bytes and split the nibbles after (st[q] the low nibbles, values 4q.., st[4 + q]
// the high ones, 16 + 4q..); Q5_0 and Q5_1 split them and add the fifth bits (as 16, under
// their eight-byte masks, whose bits follow the bytes of the untransposed vector) before,
// and transpose both halves. Q8_0's quants are made unsigned by adding 128 (an xor of the
// sign bit; the 128 x sum(activations) this adds is taken out through sx, as an offset)
// and its two vectors per group, rows 0-1 and 2-3 with each row's two halves in adjacent
// lanes, are transposed in-lane and their lanes regrouped by step; it takes the row-major
// order at every R. `offs` is Q4_0's only.
static inline __attribute__((always_inline)) void tile_rows(const uint8_t *const *grp, const qb_q8a *const *xs,
                                                            const int32_t *const *offs, float *const *ys, int64_t y0,
                                                            int64_t nb, __mmask16 mask, const int R, const int32_t type) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), sixteen = _mm512_set1_epi8(16);
    const int q8 = type == QB_Q8_0, row_major = R > 2 || q8, five = qb_q32_has_fifth(type), minimum = qb_q32_has_min(type);
    const int q4_0 = type == QB_Q4_0, offset = q8 ? -128 : qb_q32_offset(type);
    const int64_t step = qb_x4_bytes(type), qs = qb_x4_qs(type), qh = qb_x4_qh(type);
    // Near lines per group and block: one for Q4_0 (measured), every line a block spans else;
    // as many blocks ahead as Q4_0's TILE_PREFETCH_L1 (one Q8_0 row from memory 2-3% less
    // time than at 512 bytes, the others within +-2%: Intel Xeon, 2048 x 8192).
    const int lines = step > QB_X4_Q4_BYTES ? (int)((step + 63) / 64) : 1;
    const int64_t near = TILE_PREFETCH_L1 * step / QB_X4_Q4_BYTES;
    __m512 acc[8];
    for (int k = 0; k < R; k++) acc[k] = _mm512_setzero_ps();
    // The next tile (prefetching past the matrix is harmless: a prefetch never faults).
    const char *next = (const char *)grp[0] + 4 * nb * step;
    // Two blocks per iteration (with TILE_SCHEDULE): see there.
#pragma clang loop unroll_count(2)
    for (int64_t b = 0; b < nb; b++) {
        const int64_t o = b * step;
        for (int64_t l = 4 * o; l < 4 * (o + step); l += 64) _mm_prefetch(next + l, _MM_HINT_T1);
        for (int i = 0; i < 4; i++)
            for (int l = 0; l < lines; l++) _mm_prefetch((const char *)grp[i] + o + near + 64 * l, _MM_HINT_T0);
        __m512i st[8];
        if (q8) {
            const __m512i sign = _mm512_set1_epi8((char)0x80);
            __m512i t[2][4];
            for (int a = 0; a < 2; a++) {
                __m512i v[4];
                for (int i = 0; i < 4; i++) v[i] = _mm512_xor_si512(_mm512_loadu_si512((const void *)(grp[i] + o + qs + 64 * a)), sign);
                // Lane L of t[a][q]: row 2a + L / 2, step q (L even) or 4 + q (L odd).
                tile_transpose(v, t[a], 1);
            }
            for (int q = 0; q < 4; q++) {
                st[q] = _mm512_shuffle_i64x2(t[0][q], t[1][q], 0x88);
                st[4 + q] = _mm512_shuffle_i64x2(t[0][q], t[1][q], 0xDD);
            }
        } else if (five) {
            __m512i a[4], c[4];
            for (int i = 0; i < 4; i++) {
                const __m512i v = _mm512_loadu_si512((const void *)(grp[i] + o + qs));
                uint64_t ml, mh;
                memcpy(&ml, grp[i] + o + qh, 8);
                memcpy(&mh, grp[i] + o + qh + 8, 8);
                a[i] = _mm512_and_si512(v, m4);
                c[i] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
                a[i] = _mm512_mask_add_epi8(a[i], (__mmask64)ml, a[i], sixteen);
                c[i] = _mm512_mask_add_epi8(c[i], (__mmask64)mh, c[i], sixteen);
            }
            tile_transpose(a, st, row_major);
            tile_transpose(c, st + 4, row_major);
        } else {
            __m512i v[4], w[4];
            for (int i = 0; i < 4; i++) v[i] = _mm512_loadu_si512((const void *)(grp[i] + o + qs));
            tile_transpose(v, w, row_major);
            for (int q = 0; q < 4; q++) {
                st[q] = _mm512_and_si512(w[q], m4);
                st[4 + q] = _mm512_and_si512(_mm512_srli_epi16(w[q], 4), m4);
            }
        }
        const __m512 dw = tile_halves(grp, o, row_major);
        const __m512 cw = minimum ? tile_halves(grp, o + QB_X4_MIN, row_major) : _mm512_mul_ps(dw, _mm512_set1_ps((float)offset));
        for (int k = 0; k < R; k++) {
            const qb_q8a *x = xs[k] + b;
            const __m512i p = tile_sum(q4_0 ? _mm512_set1_epi32(offs[k][b]) : _mm512_setzero_si512(), st, x->qs, R);
            const __m512 scale = _mm512_mul_ps(dw, _mm512_set1_ps(x->d));
            acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), scale, acc[k]);
            if (!q4_0) acc[k] = _mm512_fmadd_ps(cw, _mm512_set1_ps(x->s), acc[k]);
        }
    }
    for (int k = 0; k < R; k++) _mm512_mask_storeu_ps(ys[k] + y0, mask, row_major ? _mm512_permutexvar_ps(tile_swap(), acc[k]) : acc[k]);
}

// Groups [g0, g1) of an interleaved matrix of `type` (a constant) against n activation
// rows: ys[i][4g .. 4g+3]. Groups are taken four at a time, a last partial tile repeating
// its final group and storing only the rows it owns; activation rows eight per pass over a
// tile (eight accumulators and the eight nibble vectors fit the 32 registers), more rows
// reading the tile again from cache.
static inline __attribute__((always_inline)) void tile_groups(const uint8_t *w, const qb_q8a *const *xs,
                                                              const int32_t *const *offs, float *const *ys, int64_t n,
                                                              int64_t g0, int64_t g1, int64_t nb, const int32_t type) {
    const int64_t gb = nb * qb_x4_bytes(type);
    for (int64_t g = g0; g < g1; g += 4) {
        const int m = g1 - g < 4 ? (int)(g1 - g) : 4;
        const uint8_t *grp[4];
        for (int i = 0; i < 4; i++) grp[i] = w + (g + (i < m ? i : m - 1)) * gb;
        const __mmask16 mask = m == 4 ? (__mmask16)0xFFFF : (__mmask16)((1u << (4 * m)) - 1);
        for (int64_t i = 0; i < n; i += 8) {
            const int32_t *const *o = offs ? offs + i : NULL;
            switch (n - i < 8 ? n - i : 8) {
            case 8: tile_rows(grp, xs + i, o, ys + i, 4 * g, nb, mask, 8, type); break;
            case 7: tile_rows(grp, xs + i, o, ys + i, 4 * g, nb, mask, 7, type); break;
            case 6: tile_rows(grp, xs + i, o, ys + i, 4 * g, nb, mask, 6, type); break;
            case 5: tile_rows(grp, xs + i, o, ys + i, 4 * g, nb, mask, 5, type); break;
            case 4: tile_rows(grp, xs + i, o, ys + i, 4 * g, nb, mask, 4, type); break;
            case 3: tile_rows(grp, xs + i, o, ys + i, 4 * g, nb, mask, 3, type); break;
            case 2: tile_rows(grp, xs + i, o, ys + i, 4 * g, nb, mask, 2, type); break;
            default: tile_rows(grp, xs + i, o, ys + i, 4 * g, nb, mask, 1, type); break;
            }
        }
    }
}
#endif
#endif
