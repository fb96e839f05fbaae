// Decode products of MLX affine-quantized rows (4 and 8 bits, groups of 32/64/128 values),
// plain or in the sixteen-row layout, with activations quantized per 32 values (q8a).
#include "qb_dot_mlx.h"
#include "qb_formats.h"
#include "qb_scalar.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

// Rounding must match GGML's and MLX's own code: a product, then a sum, each rounded (no
// fused multiply-add). The fast paths use explicit FMA intrinsics.
#pragma clang fp contract(off)

#if defined(__AVX2__)
// MLX 4-bit bytes hold (even, odd) value pairs: the activations are regrouped the same way
// once per product (all even positions of a block, then all odd ones), not once per row.
static const qb_q8a *mlx4_shuffle(const qb_q8a *x, int64_t blocks, qb_q8a *out) {
    const __m256i evens_odds = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,
                                                0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    for (int64_t b = 0; b < blocks; b++) {
        __m256i v = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)x[b].qs), evens_odds);
        _mm256_storeu_si256((__m256i *)out[b].qs, _mm256_permute4x64_epi64(v, 0xD8));
        out[b].d = x[b].d;
        out[b].s = x[b].s;
    }
    return out;
}

static float mlx_row_avx2(int32_t bits, int64_t group, const uint8_t *row, const void *scales, const void *biases,
                          int32_t sdtype, int64_t srow, const qb_q8a *a, const float *asum, int64_t groups) {
    __m256 acc = _mm256_setzero_ps();
    float bias_acc = 0;
    int64_t blocks = group / 32;
    for (int64_t g = 0; g < groups; g++) {
        float sc = load_scale(scales, sdtype, srow + g), bi = load_scale(biases, sdtype, srow + g);
        bias_acc += (bits == 8 ? bi + 128.0f * sc : bi) * asum[g];
        for (int64_t b = 0; b < blocks; b++) {
            const qb_q8a *ab = a + g * blocks + b;
            __m256i x = _mm256_loadu_si256((const __m256i *)ab->qs);
            __m256i p;
            if (bits == 4) {
                __m128i t = _mm_loadu_si128((const __m128i *)(row + (g * blocks + b) * 16));
                __m128i lo = _mm_and_si128(t, _mm_set1_epi8(0x0F));
                __m128i hi = _mm_and_si128(_mm_srli_epi16(t, 4), _mm_set1_epi8(0x0F));
                p = dot_u8(_mm256_set_m128i(hi, lo), x);
            } else {
                __m256i w = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(row + (g * blocks + b) * 32)),
                                             _mm256_set1_epi8((char)0x80));
                p = dot_s8(w, x);
            }
            acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(sc * ab->d), acc);
        }
    }
    return hsum_ps(acc) + bias_acc;
}
// Eight consecutive scales (or biases) of dtype `dtype` for blocks [b, b + 8) of a row whose
// groups span `bpg` blocks, widened to f32 and repeated per block. Reads only the
// 8 / bpg values those blocks use.
static inline __m256 mlx_block_scales(const void *p, int32_t dtype, int64_t first, int64_t bpg) {
    int n = (int)(8 / bpg);
    __m256 v;
    if (dtype == QB_F32) {
        __m128 lo = n >= 4 ? _mm_loadu_ps((const float *)p + first) : n == 2 ? _mm_castpd_ps(_mm_load_sd((const double *)((const float *)p + first))) : _mm_load_ss((const float *)p + first);
        v = n == 8 ? _mm256_loadu_ps((const float *)p + first) : _mm256_castps128_ps256(lo);
    } else {
        const uint16_t *h = (const uint16_t *)p + first;
        __m128i raw = n == 8 ? _mm_loadu_si128((const __m128i *)h)
                    : n == 4 ? _mm_loadl_epi64((const __m128i *)h)
                    : _mm_cvtsi32_si128((int32_t)((uint32_t)h[0] | (uint32_t)h[1] << 16));
        v = dtype == QB_F16 ? _mm256_cvtph_ps(raw) : _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(raw), 16));
    }
    if (bpg == 1) return v;
    const __m256i idx = bpg == 2 ? _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3)
                      : bpg == 4 ? _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1) : _mm256_setzero_si256();
    return _mm256_permutevar8x32_ps(v, idx);
}

// 4-bit MLX rows, eight blocks per step. Bytes hold (even, odd) value pairs, so 32 bytes
// (two blocks) give the even values of both blocks in their low nibbles and the odd ones
// in their high nibbles; `xe`/`xo` hold the activations regrouped the same way, once per
// call. Each block's scale times its activation scale multiplies its four integer lanes;
// biases times the activation block sums accumulate on the side.
static float mlx4_row(const uint8_t *row, const void *scales, const void *biases, int32_t sdtype, int64_t srow,
                      int64_t bpg, const __m256i *xe, const __m256i *xo, const float *xd, const float *xs, int64_t blocks) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
    __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    __m256 accb = _mm256_setzero_ps();
    for (int64_t b = 0; b < blocks; b += 8) {
        _mm_prefetch((const char *)(row + 16 * b) + 1024, _MM_HINT_T0);
        _mm_prefetch((const char *)(row + 16 * b) + 1088, _MM_HINT_T0);
        qb_prefetch_l2(row + 16 * b, 2);
        int64_t g = srow + b / bpg;
        __m256 sd = _mm256_mul_ps(mlx_block_scales(scales, sdtype, g, bpg), _mm256_loadu_ps(xd + b));
        accb = _mm256_fmadd_ps(mlx_block_scales(biases, sdtype, g, bpg), _mm256_loadu_ps(xs + b), accb);
        for (int k = 0; k < 4; k++) {
            __m256i q = _mm256_loadu_si256((const __m256i *)(row + 16 * b + 32 * k));
            int64_t pr = b / 2 + k;
            __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(_mm256_and_si256(q, m4), xe[pr]),
                                         _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), xo[pr]));
            __m256 lanes = _mm256_permutevar8x32_ps(sd, _mm256_setr_epi32(2 * k, 2 * k, 2 * k, 2 * k, 2 * k + 1, 2 * k + 1, 2 * k + 1, 2 * k + 1));
            acc[k & 1] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(p, ones)), lanes, acc[k & 1]);
        }
    }
    return hsum_ps(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), accb));
}

#if defined(QB_AVX512)
// mlx4_row on 64-byte steps: a load holds four blocks, whose even (odd) activations are two
// consecutive entries of `xe` (`xo`); vpdpbusd sums both halves into each block's 4 lanes.
static float mlx4_row512(const uint8_t *row, const void *scales, const void *biases, int32_t sdtype, int64_t srow,
                         int64_t bpg, const __m256i *xe, const __m256i *xo, const float *xd, const float *xs, int64_t blocks) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const __m512i first = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    const __m512i second = _mm512_add_epi32(first, _mm512_set1_epi32(4));
    __m512 acc[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
    __m256 accb = _mm256_setzero_ps();
    for (int64_t b = 0; b < blocks; b += 8) {
        // 4 KiB ahead: a row is 1-4 KiB, and at 1 KiB the loads still waited on memory.
        _mm_prefetch((const char *)(row + 16 * b) + 4096, _MM_HINT_T0);
        _mm_prefetch((const char *)(row + 16 * b) + 4160, _MM_HINT_T0);
        qb_prefetch_l2(row + 16 * b, 2);
        int64_t g = srow + b / bpg;
        __m512 sd = _mm512_castps256_ps512(_mm256_mul_ps(mlx_block_scales(scales, sdtype, g, bpg), _mm256_loadu_ps(xd + b)));
        accb = _mm256_fmadd_ps(mlx_block_scales(biases, sdtype, g, bpg), _mm256_loadu_ps(xs + b), accb);
        for (int k = 0; k < 2; k++) {
            __m512i q = _mm512_loadu_si512((const void *)(row + 16 * b + 64 * k));
            int64_t pr = b / 2 + 2 * k;
            __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_and_si512(q, m4), _mm512_loadu_si512((const void *)(xe + pr)));
            p = _mm512_dpbusd_epi32(p, _mm512_and_si512(_mm512_srli_epi16(q, 4), m4), _mm512_loadu_si512((const void *)(xo + pr)));
            acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_permutexvar_ps(k ? second : first, sd), acc[k]);
        }
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(acc[0], acc[1])) + hsum_ps(accb);
}
#endif

// Activations for mlx4_row: for each pair of blocks, their even values then their odd ones.
static void mlx4_regroup(const qb_q8a *x, int64_t blocks, __m256i *xe, __m256i *xo, float *xd, float *xs) {
    const __m256i evens_odds = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,
                                                0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    for (int64_t b = 0; b < blocks; b += 2) {
        // Within each block: 16 evens then 16 odds (per 128-bit lane: 8 + 8).
        __m256i a0 = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)x[b].qs), evens_odds), 0xD8);
        __m256i a1 = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)x[b + 1].qs), evens_odds), 0xD8);
        xe[b / 2] = _mm256_permute2x128_si256(a0, a1, 0x20);
        xo[b / 2] = _mm256_permute2x128_si256(a0, a1, 0x31);
    }
    for (int64_t b = 0; b < blocks; b++) {
        xd[b] = x[b].d;
        xs[b] = x[b].s;
    }
}
#endif

// Sum over one group of q * a (integer, per 32-value block scaled by the block's d).
static float mlx_group_dot(int32_t bits, const uint8_t *qb, const qb_q8a *a, int64_t blocks) {
#if defined(__AVX2__)
    __m256 acc = _mm256_setzero_ps();
    if (bits == 4) {
        // Bytes hold (even, odd) value pairs; gather the activations the same way.
        const __m256i evens_odds = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,
                                                    0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
        for (int64_t b = 0; b < blocks; b++) {
            __m128i t = _mm_loadu_si128((const __m128i *)(qb + 16 * b));
            __m128i lo = _mm_and_si128(t, _mm_set1_epi8(0x0F));
            __m128i hi = _mm_and_si128(_mm_srli_epi16(t, 4), _mm_set1_epi8(0x0F));
            __m256i w = _mm256_set_m128i(hi, lo);
            __m256i x = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)a[b].qs), evens_odds);
            x = _mm256_permute4x64_epi64(x, 0xD8);  // (0, 2, 1, 3): all evens, then all odds
            acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot_u8(w, x)), _mm256_set1_ps(a[b].d), acc);
        }
    } else {
        for (int64_t b = 0; b < blocks; b++) {
            // q - 128 is a signed byte; the 128 * sum(a) it removes is added back by the caller.
            __m256i w = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(qb + 32 * b)), _mm256_set1_epi8((char)0x80));
            __m256i p = dot_s8(w, _mm256_loadu_si256((const __m256i *)a[b].qs));
            acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(a[b].d), acc);
        }
    }
    return hsum_ps(acc);
#else
    float s = 0;
    for (int64_t b = 0; b < blocks; b++) {
        int sum = 0;
        for (int j = 0; j < 32; j++) {
            int v = bits == 4 ? ((qb[16 * b + j / 2] >> (4 * (j & 1))) & 0xF) : (int)qb[32 * b + j] - 128;
            sum += v * a[b].qs[j];
        }
        s += a[b].d * sum;
    }
    return s;
#endif
}

void qb_matvec_mlx(int32_t bits, int64_t group, const uint32_t *w, const void *scales, const void *biases, int32_t sdtype,
                   const qb_q8a *x, float *y, int64_t r0, int64_t r1, int64_t cols) {
    int64_t groups = cols / group, words = cols * bits / 32, blocks = group / 32;
    int64_t group_bytes = group * bits / 8;
    float offset = bits == 8 ? 128.0f : 0.0f;
#if defined(__AVX2__)
    if (bits == 4 && blocks <= 8 && (cols / 32) % 8 == 0 && cols <= 65536) {
        int64_t nblk = cols / 32;
        __m256i *xe = aligned_alloc(32, (size_t)nblk * 32), *xo = aligned_alloc(32, (size_t)nblk * 32);
        float *xd = malloc((size_t)nblk * 2 * sizeof(float));
        if (xe && xo && xd) {
            mlx4_regroup(x, nblk, xe, xo, xd, xd + nblk);
            for (int64_t r = r0; r < r1; r++)
#if defined(QB_AVX512)
                y[r] = mlx4_row512((const uint8_t *)(w + r * words), scales, biases, sdtype, r * groups, blocks, xe, xo, xd, xd + nblk, nblk);
#else
                y[r] = mlx4_row((const uint8_t *)(w + r * words), scales, biases, sdtype, r * groups, blocks, xe, xo, xd, xd + nblk, nblk);
#endif
        }
        free(xe);
        free(xo);
        free(xd);
        if (xe && xo && xd) return;
    }
    if (groups <= 4096) {
        // Per-group activation sums and (4-bit) regrouped activations, once per call.
        float asum[4096];
        qb_q8a shuffled[bits == 4 ? cols / 32 : 1];
        for (int64_t g = 0; g < groups; g++) {
            float t = 0;
            for (int64_t k = 0; k < blocks; k++) t += x[g * blocks + k].s;
            asum[g] = t;
        }
        const qb_q8a *xa = bits == 4 ? mlx4_shuffle(x, cols / 32, shuffled) : x;
        for (int64_t r = r0; r < r1; r++)
            y[r] = mlx_row_avx2(bits, group, (const uint8_t *)(w + r * words), scales, biases, sdtype, r * groups, xa, asum, groups);
        return;
    }
#endif
    for (int64_t r = r0; r < r1; r++) {
        const uint8_t *row = (const uint8_t *)(w + r * words);
        float v = 0;
        for (int64_t g = 0; g < groups; g++) {
            float sc = load_scale(scales, sdtype, r * groups + g), b = load_scale(biases, sdtype, r * groups + g);
            const qb_q8a *a = x + g * blocks;
            float asum = 0;
            for (int64_t k = 0; k < blocks; k++) asum += a[k].s;
            v += sc * mlx_group_dot(bits, row + g * group_bytes, a, blocks) + (b + offset * sc) * asum;
        }
        y[r] = v;
    }
}

// ---------------------------------------------------------------------------------------
// MLX rows in the 16-row decode layout (qb_repack.h). Per MLX group the 16 rows' results
// gain scale x sum_b a.d_b (q_b . x_b) + bias x sum_b a.s_b; the integer products take one
// vpdpbusd per four values of all 16 rows against a broadcast of four activations (Q4_K's
// sixteen-row scheme; MLX values are unsigned, as vpdpbusd wants them), and the scales and
// biases are loaded once per group for all 16 rows. The row kernels spend a conversion, a
// permute and a multiply-add per 64 bytes (4-bit), which kept one Intel core at about
// 25 GB/s from cache, under twice its memory rate; 8-bit rows went through 32-byte steps
// with the scale of every block broadcast apart.
// `bits` is a constant where these are called (the dispatcher passes 4 or 8 literally).

// L1 prefetch distance: the 4-bit row kernel's (4 KiB, as its comment explains). One-row
// 4-bit decode skips these prefetches where qb_set_stream_prefetch says (`pf` 0: AMD CPUs,
// where without them a one-thread 1B q4-g64 token took 0.78x the time on Zen 4's AVX-512
// set, results/x16-prefetch-q4k-mlx-zen4-2026-12-01/); 8-bit rows and batches keep them.
enum { MLX_X16_AHEAD = 4096 };

#if defined(__AVX2__)
// `lines` cache lines from `p`, MLX_X16_AHEAD ahead into L1 and QB_L2_AHEAD ahead into L2: a
// group-block's scale and bias lines at its start, each block's vectors as it is reached.
static inline __attribute__((always_inline)) void mlx_x16_prefetch(const uint8_t *p, int lines) {
    for (int l = 0; l < lines; l++) _mm_prefetch((const char *)p + MLX_X16_AHEAD + 64 * l, _MM_HINT_T0);
    qb_prefetch_l2(p, lines);
}
#endif

#if defined(QB_AVX512)
// The 16 rows' scales (or biases) widened to f32.
static inline __m512 mlx_x16_scales512(const uint8_t *p, int32_t dtype) {
    if (dtype == QB_F32) return _mm512_loadu_ps(p);
    __m256i h = _mm256_loadu_si256((const __m256i *)p);
    return dtype == QB_F16 ? _mm512_cvtph_ps(h) : _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

static inline __attribute__((always_inline)) void mlx_x16_512(int32_t bits, const uint8_t *o, int64_t group, int32_t sdtype,
                                                              const qb_q8a *a, float *y, int64_t groups, const int pf) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    int64_t sz = mlx_scale_bytes(sdtype), nsub = group / 32, bb = qb_mlx_x16_block_bytes(bits, group, sdtype);
    __m512 acc = _mm512_setzero_ps(), accb = _mm512_setzero_ps();
    for (int64_t j = 0; j < groups; j++, o += bb, a += nsub) {
        if (pf) mlx_x16_prefetch(o, (int)(sz / 2));
        const uint8_t *q = o + 2 * QB_MLX_X16_ROWS * sz;
        __m512 t = _mm512_setzero_ps();
        float asum = 0;
        for (int64_t s = 0; s < nsub; s++) {
            const uint8_t *v = q + 64 * bits * s;
            if (pf) mlx_x16_prefetch(v, bits);
            // Values 0..15 of the block in `lo`, 16..31 in `hi`.
            __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
            for (int k = 0; k < 4; k++) {
                __m512i w = _mm512_loadu_si512((const void *)(v + 64 * k));
                __m512i wl = bits == 4 ? _mm512_and_si512(w, m4) : w;
                __m512i wh = bits == 4 ? _mm512_and_si512(_mm512_srli_epi16(w, 4), m4) : _mm512_loadu_si512((const void *)(v + 256 + 64 * k));
                lo = _mm512_dpbusd_epi32(lo, wl, _mm512_set1_epi32(act4(a[s].qs + 4 * k)));
                hi = _mm512_dpbusd_epi32(hi, wh, _mm512_set1_epi32(act4(a[s].qs + 16 + 4 * k)));
            }
            t = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(lo, hi)), _mm512_set1_ps(a[s].d), t);
            asum += a[s].s;
        }
        acc = _mm512_fmadd_ps(t, mlx_x16_scales512(o, sdtype), acc);
        accb = _mm512_fmadd_ps(mlx_x16_scales512(o + QB_MLX_X16_ROWS * sz, sdtype), _mm512_set1_ps(asum), accb);
    }
    _mm512_storeu_ps(y, _mm512_add_ps(acc, accb));
}

// Activation rows per pass over a group: their three accumulators each beside a block's
// eight weight vectors fit the 32 registers for four.
enum { MLX_X16_BATCH = 4 };

// R activation rows (1..MLX_X16_BATCH) against one group: each row's arithmetic is
// mlx_x16_512's, operation for operation, so its outputs are bitwise that kernel's, while
// each block's 16 rows are loaded (and split into nibbles) once for all R.
static inline __attribute__((always_inline)) void mlx_x16_512_rows(int32_t bits, const uint8_t *o, int64_t group, int32_t sdtype,
                                                                   const qb_q8a *const *xs, float *const *ys, int64_t y0,
                                                                   int64_t groups, const int R) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    int64_t sz = mlx_scale_bytes(sdtype), nsub = group / 32, bb = qb_mlx_x16_block_bytes(bits, group, sdtype);
    __m512 acc[MLX_X16_BATCH], accb[MLX_X16_BATCH];
    for (int k = 0; k < R; k++) acc[k] = accb[k] = _mm512_setzero_ps();
    for (int64_t j = 0; j < groups; j++, o += bb) {
        mlx_x16_prefetch(o, (int)(sz / 2));
        const uint8_t *q = o + 2 * QB_MLX_X16_ROWS * sz;
        __m512 t[MLX_X16_BATCH];
        float asum[MLX_X16_BATCH];
        for (int k = 0; k < R; k++) t[k] = _mm512_setzero_ps(), asum[k] = 0;
        for (int64_t s = 0; s < nsub; s++) {
            const uint8_t *v = q + 64 * bits * s;
            mlx_x16_prefetch(v, bits);
            __m512i wl[4], wh[4];
            for (int c = 0; c < 4; c++) {
                __m512i w = _mm512_loadu_si512((const void *)(v + 64 * c));
                wl[c] = bits == 4 ? _mm512_and_si512(w, m4) : w;
                wh[c] = bits == 4 ? _mm512_and_si512(_mm512_srli_epi16(w, 4), m4) : _mm512_loadu_si512((const void *)(v + 256 + 64 * c));
            }
            for (int k = 0; k < R; k++) {
                const qb_q8a *a = xs[k] + j * nsub + s;
                __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
                for (int c = 0; c < 4; c++) {
                    lo = _mm512_dpbusd_epi32(lo, wl[c], _mm512_set1_epi32(act4(a->qs + 4 * c)));
                    hi = _mm512_dpbusd_epi32(hi, wh[c], _mm512_set1_epi32(act4(a->qs + 16 + 4 * c)));
                }
                t[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(lo, hi)), _mm512_set1_ps(a->d), t[k]);
                asum[k] += a->s;
            }
        }
        const __m512 sc = mlx_x16_scales512(o, sdtype), bi = mlx_x16_scales512(o + QB_MLX_X16_ROWS * sz, sdtype);
        for (int k = 0; k < R; k++) {
            acc[k] = _mm512_fmadd_ps(t[k], sc, acc[k]);
            accb[k] = _mm512_fmadd_ps(bi, _mm512_set1_ps(asum[k]), accb[k]);
        }
    }
    for (int k = 0; k < R; k++) _mm512_storeu_ps(ys[k] + y0, _mm512_add_ps(acc[k], accb[k]));
}

// The set's multi-row kernel, for the batch loop below.
static inline __attribute__((always_inline)) void mlx_x16_rows(int32_t bits, const uint8_t *o, int64_t group, int32_t sdtype,
                                                               const qb_q8a *const *xs, float *const *ys, int64_t y0, int64_t groups,
                                                               const int R) {
    mlx_x16_512_rows(bits, o, group, sdtype, xs, ys, y0, groups, R);
}
#elif defined(__AVX2__)
// Rows 8h..8h+7's scales (or biases) widened to f32.
static inline __m256 mlx_x16_scales256(const uint8_t *p, int32_t dtype, int h) {
    if (dtype == QB_F32) return _mm256_loadu_ps((const float *)p + 8 * h);
    __m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * h));
    return dtype == QB_F16 ? _mm256_cvtph_ps(v) : _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16));
}

// Activation rows per pass over a group, as on AVX-512.
enum { MLX_X16_BATCH = 4 };

// Without VNNI: rows 0..7 and 8..15 as two 32-byte halves of each vector. 4-bit: a block's
// eight unsigned x signed byte pair sums (vpmaddubsw) add up in 16 bits (at most
// 8 x 2 x 15 x 127 = 30480) before one vpmaddwd widens them. 8-bit: values less 128 as signed
// bytes (dot_s8, each step widened), the 128 x scale x sum(a) they drop added to the bias term.
// R activation rows (1..MLX_X16_BATCH) at once: each half block is loaded (and split into
// nibbles) once for all R, and each row's arithmetic is the same whatever R, so its outputs
// are bitwise what it gets alone.
static inline __attribute__((always_inline)) void mlx_x16_avx2_rows(int32_t bits, const uint8_t *o, int64_t group, int32_t sdtype,
                                                                    const qb_q8a *const *xs, float *const *ys, int64_t y0,
                                                                    int64_t groups, const int R, const int pf) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1), flip = _mm256_set1_epi8((char)0x80);
    int64_t sz = mlx_scale_bytes(sdtype), nsub = group / 32, bb = qb_mlx_x16_block_bytes(bits, group, sdtype);
    __m256 acc[2][MLX_X16_BATCH], accb[2][MLX_X16_BATCH];
    for (int h = 0; h < 2; h++)
        for (int k = 0; k < R; k++) acc[h][k] = accb[h][k] = _mm256_setzero_ps();
    for (int64_t j = 0; j < groups; j++, o += bb) {
        if (pf) mlx_x16_prefetch(o, (int)(sz / 2));
        const uint8_t *q = o + 2 * QB_MLX_X16_ROWS * sz;
        float asum[MLX_X16_BATCH];
        for (int k = 0; k < R; k++) {
            asum[k] = 0;
            for (int64_t s = 0; s < nsub; s++) asum[k] += xs[k][j * nsub + s].s;
        }
        for (int h = 0; h < 2; h++) {
            __m256 t[MLX_X16_BATCH];
            for (int k = 0; k < R; k++) t[k] = _mm256_setzero_ps();
            for (int64_t s = 0; s < nsub; s++) {
                const uint8_t *v = q + 64 * bits * s + 32 * h;
                if (h == 0 && pf) mlx_x16_prefetch(v, bits);
                __m256i w[8];
                for (int c = 0; c < 8; c++) {
                    if (bits == 4 && c < 4) w[c] = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(v + 64 * c)), m4);
                    else if (bits == 4) w[c] = _mm256_and_si256(_mm256_srli_epi16(_mm256_loadu_si256((const __m256i *)(v + 64 * (c - 4))), 4), m4);
                    else w[c] = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(v + 64 * c)), flip);
                }
                for (int k = 0; k < R; k++) {
                    const qb_q8a *a = xs[k] + j * nsub + s;
                    __m256i p;
                    if (bits == 4) {
                        __m256i p16 = _mm256_setzero_si256();
                        for (int c = 0; c < 4; c++) {
                            p16 = _mm256_add_epi16(p16, _mm256_maddubs_epi16(w[c], _mm256_set1_epi32(act4(a->qs + 4 * c))));
                            p16 = _mm256_add_epi16(p16, _mm256_maddubs_epi16(w[4 + c], _mm256_set1_epi32(act4(a->qs + 16 + 4 * c))));
                        }
                        p = _mm256_madd_epi16(p16, ones);
                    } else {
                        p = _mm256_setzero_si256();
                        for (int c = 0; c < 8; c++) p = _mm256_add_epi32(p, dot_s8(w[c], _mm256_set1_epi32(act4(a->qs + 4 * c))));
                    }
                    t[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(a->d), t[k]);
                }
            }
            __m256 sc = mlx_x16_scales256(o, sdtype, h), bi = mlx_x16_scales256(o + QB_MLX_X16_ROWS * sz, sdtype, h);
            if (bits == 8) bi = _mm256_fmadd_ps(sc, _mm256_set1_ps(128.0f), bi);
            for (int k = 0; k < R; k++) {
                acc[h][k] = _mm256_fmadd_ps(t[k], sc, acc[h][k]);
                accb[h][k] = _mm256_fmadd_ps(bi, _mm256_set1_ps(asum[k]), accb[h][k]);
            }
        }
    }
    for (int k = 0; k < R; k++) {
        _mm256_storeu_ps(ys[k] + y0, _mm256_add_ps(acc[0][k], accb[0][k]));
        _mm256_storeu_ps(ys[k] + y0 + 8, _mm256_add_ps(acc[1][k], accb[1][k]));
    }
}

static inline __attribute__((always_inline)) void mlx_x16_avx2(int32_t bits, const uint8_t *o, int64_t group, int32_t sdtype,
                                                               const qb_q8a *a, float *y, int64_t groups, const int pf) {
    mlx_x16_avx2_rows(bits, o, group, sdtype, &a, &y, 0, groups, 1, pf);
}

// The set's multi-row kernel, for the batch loop below.
static inline __attribute__((always_inline)) void mlx_x16_rows(int32_t bits, const uint8_t *o, int64_t group, int32_t sdtype,
                                                               const qb_q8a *const *xs, float *const *ys, int64_t y0, int64_t groups,
                                                               const int R) {
    mlx_x16_avx2_rows(bits, o, group, sdtype, xs, ys, y0, groups, R, 1);
}
#else
// The definition, row by row: per group, scale x sum_b d_b (q_b . x_b) + bias x sum_b s_b.
static void mlx_x16(int32_t bits, const uint8_t *o, int64_t group, int32_t sdtype, const qb_q8a *a, float *y, int64_t groups) {
    int64_t sz = mlx_scale_bytes(sdtype), nsub = group / 32, bb = qb_mlx_x16_block_bytes(bits, group, sdtype);
    float acc[QB_MLX_X16_ROWS] = {0};
    for (int64_t j = 0; j < groups; j++, o += bb, a += nsub) {
        const uint8_t *q = o + 2 * QB_MLX_X16_ROWS * sz;
        for (int r = 0; r < QB_MLX_X16_ROWS; r++) {
            float t = 0, asum = 0;
            for (int64_t s = 0; s < nsub; s++) {
                const uint8_t *v = q + 64 * bits * s + 4 * r;
                int dot = 0;
                for (int i = 0; i < 32; i++) {
                    int value = bits == 8 ? v[64 * (i / 4) + i % 4] : (v[64 * ((i % 16) / 4) + i % 4] >> (i >= 16 ? 4 : 0)) & 0xF;
                    dot += value * a[s].qs[i];
                }
                t += a[s].d * (float)dot;
                asum += a[s].s;
            }
            acc[r] += load_scale(o, sdtype, r) * t + load_scale(o + QB_MLX_X16_ROWS * sz, sdtype, r) * asum;
        }
    }
    memcpy(y, acc, sizeof acc);
}
#endif

#if defined(__AVX2__)
// Rows [i, n) of a batch, MLX_X16_BATCH at a time, against the group at `o`.
static inline __attribute__((always_inline)) void mlx_x16_batch(int32_t bits, const uint8_t *o, int64_t group, int32_t sdtype,
                                                                const qb_q8a *const *xs, float *const *ys, int64_t y0,
                                                                int64_t groups, int64_t n) {
    for (int64_t i = 0; i < n; i += MLX_X16_BATCH) {
        switch (n - i < MLX_X16_BATCH ? n - i : MLX_X16_BATCH) {
        case 4: mlx_x16_rows(bits, o, group, sdtype, xs + i, ys + i, y0, groups, 4); break;
        case 3: mlx_x16_rows(bits, o, group, sdtype, xs + i, ys + i, y0, groups, 3); break;
        case 2: mlx_x16_rows(bits, o, group, sdtype, xs + i, ys + i, y0, groups, 2); break;
        default: mlx_x16_rows(bits, o, group, sdtype, xs + i, ys + i, y0, groups, 1); break;
        }
    }
}
#endif

void qb_matvec_mlx_x16(int32_t bits, int64_t group, int32_t sdtype, const void *w, const qb_q8a *x, float *y, int64_t g0,
                       int64_t g1, int64_t cols) {
    int64_t groups = cols / group, bytes = groups * qb_mlx_x16_block_bytes(bits, group, sdtype);
#if defined(__AVX2__)
    const int pf = qb_stream_prefetch();
#endif
    for (int64_t g = g0; g < g1; g++) {
        const uint8_t *o = (const uint8_t *)w + g * bytes;
        float *out = y + QB_MLX_X16_ROWS * g;
#if defined(QB_AVX512)
        if (bits == 8) mlx_x16_512(8, o, group, sdtype, x, out, groups, 1);
        else if (pf) mlx_x16_512(4, o, group, sdtype, x, out, groups, 1);
        else mlx_x16_512(4, o, group, sdtype, x, out, groups, 0);
#elif defined(__AVX2__)
        if (bits == 8) mlx_x16_avx2(8, o, group, sdtype, x, out, groups, 1);
        else if (pf) mlx_x16_avx2(4, o, group, sdtype, x, out, groups, 1);
        else mlx_x16_avx2(4, o, group, sdtype, x, out, groups, 0);
#else
        mlx_x16(bits, o, group, sdtype, x, out, groups);
#endif
    }
}

void qb_matvec_mlx_x16_rows(int32_t bits, int64_t group, int32_t sdtype, const void *w, const qb_q8a *const *xs,
                            float *const *ys, int64_t n, int64_t g0, int64_t g1, int64_t cols) {
    int64_t groups = cols / group, bytes = groups * qb_mlx_x16_block_bytes(bits, group, sdtype);
    for (int64_t g = g0; g < g1; g++) {
#if defined(__AVX2__)
        const uint8_t *o = (const uint8_t *)w + g * bytes;
        if (bits == 8) mlx_x16_batch(8, o, group, sdtype, xs, ys, QB_MLX_X16_ROWS * g, groups, n);
        else mlx_x16_batch(4, o, group, sdtype, xs, ys, QB_MLX_X16_ROWS * g, groups, n);
#else
        // One row at a time over the group while it is in cache.
        for (int64_t i = 0; i < n; i++) qb_matvec_mlx_x16(bits, group, sdtype, w, xs[i], ys[i], g, g + 1, cols);
#endif
    }
}
