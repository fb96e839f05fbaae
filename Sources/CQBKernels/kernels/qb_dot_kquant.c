// Decode products of the formats with 256-value super-blocks (Q2_K to Q6_K, IQ4_XS),
// and of Q4_K's and Q6_K's 16-row decode groups, with activations quantized per 256 values (q8k).
#include "qb_dot_kquant.h"
#include "qb_blocks.h"
#include "qb_q6k_x16.h"
#include "qb_repack.h"
#include <math.h>
#include <string.h>

// Rounding must match GGML's and MLX's own code: a product, then a sum, each rounded (no
// fused multiply-add). The fast paths use explicit FMA intrinsics.
#pragma clang fp contract(off)

// These formats against activations quantized per 256 values (GGML's Q8_K): a whole
// super-block accumulates in int32 with its sub-block scales applied as integers, and is
// scaled to float once. Per-32 activation scales would need a float multiply-add per 32
// values, which kept the Q6_K output head (the largest matrix of a Q4_0 file) compute-bound
// at about 12 GB/s per core.

// Portable versions: the AVX2 and AVX-512 ones below are tested equal to them.
// Q4_K and Q5_K (`fifth`): d, dmin and the 12 scale bytes lead both blocks; Q5_K's 32 bytes
// of fifth bits (bit j of qh[l]: value l of sub-block j) come before its nibbles.
static inline __attribute__((always_inline)) const uint8_t *k45_block(const void *w, int fifth, int64_t i, float *d,
                                                                      float *dmin, const uint8_t **qh) {
    const uint8_t *blk = (const uint8_t *)w + i * (fifth ? (int64_t)sizeof(block_q5_K) : (int64_t)sizeof(block_q4_K));
    qb_half hd, hm;
    memcpy(&hd, blk, 2);
    memcpy(&hm, blk + 2, 2);
    *d = h2f(hd);
    *dmin = h2f(hm);
    *qh = blk + 16;
    return blk;
}

static inline __attribute__((always_inline)) float k45_q8k(const void *w, int fifth, const qb_q8k *a, int64_t nb) {
    float s = 0;
    for (int64_t i = 0; i < nb; i++) {
        float d, dmin;
        const uint8_t *qh, *blk = k45_block(w, fifth, i, &d, &dmin, &qh), *qs = blk + (fifth ? 48 : 16);
        int32_t isum = 0, msum = 0;
        for (int j = 0; j < 8; j++) {
            uint8_t sc, m;
            get_scale_min_k4(j, blk + 4, &sc, &m);
            const uint8_t *q = qs + 32 * (j / 2);
            int dot = 0;
            for (int l = 0; l < 32; l++) {
                int v = ((j & 1) ? q[l] >> 4 : q[l] & 0xF) | (fifth ? ((qh[l] >> j) & 1) << 4 : 0);
                dot += v * a[i].qs[32 * j + l];
            }
            isum += sc * dot;
            msum += m * (a[i].s16[2 * j] + a[i].s16[2 * j + 1]);
        }
        s += a[i].d * (d * (float)isum - dmin * (float)msum);
    }
    return s;
}

static float q4_K_q8k(const block_q4_K *w, const qb_q8k *a, int64_t nb) { return k45_q8k(w, 0, a, nb); }

static float q5_K_q8k(const block_q5_K *w, const qb_q8k *a, int64_t nb) { return k45_q8k(w, 1, a, nb); }

// IQ4_XS: each nibble indexes kvalues_iq4nl; sub-block ib's values are scaled by
// iq4xs_scale (signed).
static float iq4_xs_q8k(const block_iq4_xs *w, const qb_q8k *a, int64_t nb) {
    float s = 0;
    for (int64_t i = 0; i < nb; i++) {
        int32_t isum = 0;
        for (int ib = 0; ib < 8; ib++) {
            const uint8_t *qs = w[i].qs + 16 * ib;
            const int8_t *x = a[i].qs + 32 * ib;
            int dot = 0;
            for (int j = 0; j < 16; j++) dot += kvalues_iq4nl[qs[j] & 0xF] * x[j] + kvalues_iq4nl[qs[j] >> 4] * x[j + 16];
            isum += iq4xs_scale(w + i, ib) * dot;
        }
        s += a[i].d * h2f(w[i].d) * (float)isum;
    }
    return s;
}

static float q6_K_q8k(const block_q6_K *w, const qb_q8k *a, int64_t nb) {
    float s = 0;
    for (int64_t i = 0; i < nb; i++) {
        int32_t isum = 0;
        for (int n = 0; n < 2; n++) {
            const uint8_t *ql = w[i].ql + 64 * n, *qh = w[i].qh + 32 * n;
            const int8_t *sc = w[i].scales + 8 * n;
            const int8_t *aq = a[i].qs + 128 * n;
            for (int k = 0; k < 4; k++) {
                int sums[2] = {0, 0};
                for (int l = 0; l < 32; l++) {
                    uint8_t lo = (k & 1) ? ql[l + 32] : ql[l];
                    int q = ((k & 2) ? (lo >> 4) : (lo & 0xF)) | (((qh[l] >> (2 * k)) & 3) << 4);
                    sums[l / 16] += (q - 32) * aq[32 * k + l];
                }
                isum += sc[2 * k] * sums[0] + sc[2 * k + 1] * sums[1];
            }
        }
        s += a[i].d * h2f(w[i].d) * (float)isum;
    }
    return s;
}

// Q2_K: per sub-block of 16, w = d (sc & 15) q - dmin (sc >> 4), q two bits; the minimums
// meet the activations' sums per 16.
static float q2_K_q8k(const block_q2_K *w, const qb_q8k *a, int64_t nb) {
    float s = 0;
    for (int64_t i = 0; i < nb; i++) {
        int32_t isum = 0, msum = 0;
        for (int j = 0; j < 16; j++) {
            int dot = 0;
            for (int v = 16 * j; v < 16 * j + 16; v++) dot += k23_low_bits(w[i].qs, v) * a[i].qs[v];
            isum += (w[i].scales[j] & 0xF) * dot;
            msum += (w[i].scales[j] >> 4) * a[i].s16[j];
        }
        s += a[i].d * (h2f(w[i].d) * (float)isum - h2f(w[i].dmin) * (float)msum);
    }
    return s;
}

// Q3_K: per sub-block of 16, w = d sc (q - 4), q three bits (q3k_value), sc signed.
static float q3_K_q8k(const block_q3_K *w, const qb_q8k *a, int64_t nb) {
    float s = 0;
    for (int64_t i = 0; i < nb; i++) {
        int8_t sc[16];
        q3k_scales(w[i].scales, sc);
        int32_t isum = 0;
        for (int j = 0; j < 16; j++) {
            int dot = 0;
            for (int v = 16 * j; v < 16 * j + 16; v++) dot += (q3k_value(w + i, v) - 4) * a[i].qs[v];
            isum += sc[j] * dot;
        }
        s += a[i].d * h2f(w[i].d) * (float)isum;
    }
    return s;
}

#if defined(__AVX2__)
#define PREFETCH_K 4096

// pick[c]: the 16-bit element c of each 128-bit lane, repeated across the lane.
static inline __m256i repeat16(int c) { return _mm256_set1_epi16((short)(((2 * c + 1) << 8) | (2 * c))); }

// A Q4_K or Q5_K block's eight 6-bit scales (its 12 scale bytes at `scales`) as bytes
// (GGML's packing undone on three 32-bit words), and sum_j min_j x (activation sum of
// sub-block j) as eight int32 in `msum` (each minimum taken twice, against the activations'
// sums per 16).
static inline uint64_t kq_scales(const uint8_t *scales, const qb_q8k *a, __m256i *msum) {
    uint64_t sc, mn;
    q4k_unpack_scales(scales, &sc, &mn);
    __m128i mn8 = _mm_cvtsi64_si128((long long)mn);
    *msum = _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mn8, mn8)), _mm256_loadu_si256((const __m256i *)a->s16));
    return sc;
}

// Super-block i of a Q4_K or Q5_K row for the multi-row kernels, prefetched ahead: its d and
// dmin, its nibbles and fifth bits, its eight 6-bit scales as bytes (`sc`) and its minimums
// as 16-bit values, each taken twice (for the activations' sums per 16, as kq_scales).
static inline __attribute__((always_inline)) void k45_rows_block(const void *w, int fifth, int64_t i, float *d, float *dmin,
                                                                 const uint8_t **qs, const uint8_t **qh, uint64_t *sc,
                                                                 __m256i *mn16) {
    const uint8_t *blk = k45_block(w, fifth, i, d, dmin, qh);
    *qs = blk + (fifth ? 48 : 16);
    for (int l = 0; l < 3; l++) _mm_prefetch((const char *)blk + PREFETCH_K + 64 * l, _MM_HINT_T0);
    qb_prefetch_l2(blk, 3);
    uint64_t mn;
    q4k_unpack_scales(blk + 4, sc, &mn);
    const __m128i mn8 = _mm_cvtsi64_si128((long long)mn);
    *mn16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mn8, mn8));
}

// Q4_K and Q5_K (`fifth`: each value's fifth bit ORed onto its nibble; values up to 31, so
// a vpmaddubsw pair stays within 2 x 31 x 127).
static inline __attribute__((always_inline)) float k45_q8k_avx2(const void *w, int fifth, const qb_q8k *a, int64_t nb) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m256i pick[8];
    for (int c = 0; c < 8; c++) pick[c] = repeat16(c);
    __m256 acc = _mm256_setzero_ps(), accm = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        float d, dmin;
        const uint8_t *qh, *blk = k45_block(w, fifth, i, &d, &dmin, &qh), *qs = blk + (fifth ? 48 : 16);
        for (int l = 0; l < 3; l++) _mm_prefetch((const char *)blk + PREFETCH_K + 64 * l, _MM_HINT_T0);
        qb_prefetch_l2(blk, 3);
        __m256i msum;
        uint64_t sc = kq_scales(blk + 4, a + i, &msum);
        // The eight scales as 16-bit values in both lanes.
        __m256i sc16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long)sc)));
        __m256i hb = fifth ? _mm256_loadu_si256((const __m256i *)qh) : _mm256_setzero_si256();
        __m256i is0 = _mm256_setzero_si256(), is1 = _mm256_setzero_si256();
        for (int j = 0; j < 4; j++) {
            __m256i q = _mm256_loadu_si256((const __m256i *)(qs + 32 * j));
            __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            if (fifth) {
                lo = _mm256_or_si256(lo, bit_to_16(hb, 2 * j));
                hi = _mm256_or_si256(hi, bit_to_16(hb, 2 * j + 1));
            }
            __m256i p0 = _mm256_maddubs_epi16(lo, _mm256_loadu_si256((const __m256i *)(a[i].qs + 64 * j)));
            __m256i p1 = _mm256_maddubs_epi16(hi, _mm256_loadu_si256((const __m256i *)(a[i].qs + 64 * j + 32)));
            is0 = _mm256_add_epi32(is0, _mm256_madd_epi16(p0, _mm256_shuffle_epi8(sc16, pick[2 * j])));
            is1 = _mm256_add_epi32(is1, _mm256_madd_epi16(p1, _mm256_shuffle_epi8(sc16, pick[2 * j + 1])));
        }
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(is0, is1)), _mm256_set1_ps(d * a[i].d), acc);
        accm = _mm256_fmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_set1_ps(dmin * a[i].d), accm);
    }
    return hsum_ps(_mm256_sub_ps(acc, accm));
}

static float q4_K_q8k_avx2(const block_q4_K *w, const qb_q8k *a, int64_t nb) { return k45_q8k_avx2(w, 0, a, nb); }

static float q5_K_q8k_avx2(const block_q5_K *w, const qb_q8k *a, int64_t nb) { return k45_q8k_avx2(w, 1, a, nb); }

// The eight signed sub-block scales of an IQ4_XS super-block (iq4xs_scale) as 16-bit values,
// computed in one vector rather than extracted one by one into memory and read back. Bits
// 2 ib and 2 ib + 1 of scales_h reach the top of lane ib by a multiply (AVX2 has no variable
// 16-bit shift; pdep, which the AVX-512 kernel uses, is microcoded on Zen 2).
static inline __m128i iq4xs_scales16(const block_iq4_xs *b) {
    uint32_t l;
    memcpy(&l, b->scales_l, 4);
    const __m128i m4 = _mm_set1_epi8(0x0F), lv = _mm_cvtsi32_si128((int)l);
    __m128i low = _mm_unpacklo_epi8(_mm_and_si128(lv, m4), _mm_and_si128(_mm_srli_epi16(lv, 4), m4));
    __m128i high = _mm_mullo_epi16(_mm_set1_epi16((short)b->scales_h),
                                   _mm_setr_epi16(1 << 14, 1 << 12, 1 << 10, 1 << 8, 1 << 6, 1 << 4, 1 << 2, 1));
    high = _mm_slli_epi16(_mm_srli_epi16(high, 14), 4);
    return _mm_sub_epi16(_mm_or_si128(_mm_cvtepu8_epi16(low), high), _mm_set1_epi16(32));
}

// IQ4_XS: the nibbles index the table through one byte shuffle; the signed values meet the
// activations in vpmaddubsw through their magnitudes and signs (a pair stays within
// 2 x 127 x 127), and the eight signed sub-block scales weight the 16-bit sums in vpmaddwd,
// so a super-block is converted to float once.
static float iq4_xs_q8k_avx2(const block_iq4_xs *w, const qb_q8k *a, int64_t nb) {
    const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)kvalues_iq4nl));
    __m256i pick[8];
    for (int c = 0; c < 8; c++) pick[c] = repeat16(c);
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        for (int l = 0; l < 3; l++) _mm_prefetch((const char *)(w + i) + PREFETCH_K + 64 * l, _MM_HINT_T0);
        qb_prefetch_l2(w + i, 3);
        __m256i sc16 = _mm256_broadcastsi128_si256(iq4xs_scales16(w + i));
        __m256i is0 = _mm256_setzero_si256(), is1 = _mm256_setzero_si256();
        for (int ib = 0; ib < 8; ib += 2) {
            __m256i v0 = _mm256_shuffle_epi8(table, nibbles_lo_hi(w[i].qs + 16 * ib));
            __m256i v1 = _mm256_shuffle_epi8(table, nibbles_lo_hi(w[i].qs + 16 * ib + 16));
            __m256i x0 = _mm256_loadu_si256((const __m256i *)(a[i].qs + 32 * ib));
            __m256i x1 = _mm256_loadu_si256((const __m256i *)(a[i].qs + 32 * ib + 32));
            __m256i p0 = _mm256_maddubs_epi16(_mm256_sign_epi8(v0, v0), _mm256_sign_epi8(x0, v0));
            __m256i p1 = _mm256_maddubs_epi16(_mm256_sign_epi8(v1, v1), _mm256_sign_epi8(x1, v1));
            is0 = _mm256_add_epi32(is0, _mm256_madd_epi16(p0, _mm256_shuffle_epi8(sc16, pick[ib])));
            is1 = _mm256_add_epi32(is1, _mm256_madd_epi16(p1, _mm256_shuffle_epi8(sc16, pick[ib + 1])));
        }
        __m256 f = _mm256_cvtepi32_ps(_mm256_add_epi32(is0, is1));
        if (i & 1) acc1 = _mm256_fmadd_ps(f, _mm256_set1_ps(h2f(w[i].d) * a[i].d), acc1);
        else acc0 = _mm256_fmadd_ps(f, _mm256_set1_ps(h2f(w[i].d) * a[i].d), acc0);
    }
    return hsum_ps(_mm256_add_ps(acc0, acc1));
}

// A half super-block's 128 six-bit values (64 bytes of low nibbles, 32 of high bit pairs)
// as four vectors of 32: values 0..31, 32..63, 64..95, 96..127.
static inline __attribute__((always_inline)) void q6k_values_avx2(const uint8_t *ql, const uint8_t *qh, __m256i q[4]) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), m03 = _mm256_set1_epi8(0x03), m0c = _mm256_set1_epi8(0x0C),
                  m30 = _mm256_set1_epi8(0x30);
    const __m256i l0 = _mm256_loadu_si256((const __m256i *)ql), l1 = _mm256_loadu_si256((const __m256i *)(ql + 32));
    const __m256i h = _mm256_loadu_si256((const __m256i *)qh);
    q[0] = _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_slli_epi16(_mm256_and_si256(h, m03), 4));
    q[1] = _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_slli_epi16(_mm256_and_si256(h, m0c), 2));
    q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(h, m30));
    q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4), _mm256_and_si256(_mm256_srli_epi16(h, 2), m30));
}

static float q6_K_q8k_avx2(const block_q6_K *w, const qb_q8k *a, int64_t nb) {
    // Block k of a half takes scale 2k (its first 16 values, low lane) and 2k + 1 (high lane)
    // of the half's eight, which are held in both lanes.
    __m256i pick[4];
    for (int k = 0; k < 4; k++) pick[k] = _mm256_permute2x128_si256(repeat16(2 * k), repeat16(2 * k + 1), 0x20);
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        for (int l = 0; l < 4; l++) _mm_prefetch((const char *)(w + i) + PREFETCH_K + 64 * l, _MM_HINT_T0);
        qb_prefetch_l2(w + i, 4);
        __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)w[i].scales));
        // The -32 offset of every value, through the activations' sums per 16.
        __m256i corr = _mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *)a[i].s16));
        __m256i is0 = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(corr, 5)), is1 = _mm256_setzero_si256();
        for (int n = 0; n < 2; n++) {
            const uint8_t *ql = w[i].ql + 64 * n, *qh = w[i].qh + 32 * n;
            const int8_t *aq = a[i].qs + 128 * n;
            __m256i half = n ? _mm256_permute2x128_si256(sc16, sc16, 0x11) : _mm256_permute2x128_si256(sc16, sc16, 0x00);
            __m256i q[4];
            q6k_values_avx2(ql, qh, q);
            for (int k = 0; k < 4; k++) {
                __m256i p = _mm256_maddubs_epi16(q[k], _mm256_loadu_si256((const __m256i *)(aq + 32 * k)));
                __m256i m = _mm256_madd_epi16(p, _mm256_shuffle_epi8(half, pick[k]));
                if (k & 1) is1 = _mm256_add_epi32(is1, m);
                else is0 = _mm256_add_epi32(is0, m);
            }
        }
        // Two accumulators: consecutive super-blocks' multiply-adds do not wait on each other.
        __m256 f = _mm256_cvtepi32_ps(_mm256_add_epi32(is0, is1));
        if (i & 1) acc1 = _mm256_fmadd_ps(f, _mm256_set1_ps(h2f(w[i].d) * a[i].d), acc1);
        else acc0 = _mm256_fmadd_ps(f, _mm256_set1_ps(h2f(w[i].d) * a[i].d), acc0);
    }
    return hsum_ps(_mm256_add_ps(acc0, acc1));
}

// A Q2_K super-block's sixteen scales (low nibbles) as 16-bit values, and in *mins its
// minimums (high nibbles) against the activations' sums per 16, as eight int32 sums.
static inline __m256i q2k_scales_256(const block_q2_K *b, __m256i s16, __m256i *mins) {
    const __m128i raw = _mm_loadu_si128((const __m128i *)b->scales), lo4 = _mm_set1_epi8(0x0F);
    *mins = _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(raw, 4), lo4)), s16);
    return _mm256_cvtepu8_epi16(_mm_and_si128(raw, lo4));
}

// Q2_K and Q3_K (`three`): the 32 values of sub-blocks 8n + 2k and 8n + 2k + 1 are bits 2k..
// of the 32 quant bytes of half n (and, for Q3_K, bit 4n + k of the 32 hmask bytes adds 4),
// so one load per half serves its four pairs; the pairs meet their two scales as Q6_K's do.
// Q3_K's offset of -4 and Q2_K's minimums both go through the activations' sums per 16.
static inline __attribute__((always_inline)) float k23_q8k_avx2(const void *w, int three, const qb_q8k *a, int64_t nb) {
    __m256i pick[4];
    for (int k = 0; k < 4; k++) pick[k] = _mm256_permute2x128_si256(repeat16(2 * k), repeat16(2 * k + 1), 0x20);
    const __m256i m3 = _mm256_set1_epi8(3);
    const int64_t bytes = three ? (int64_t)sizeof(block_q3_K) : (int64_t)sizeof(block_q2_K);
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *blk = (const uint8_t *)w + i * bytes;
        for (int l = 0; l < 2; l++) _mm_prefetch((const char *)blk + PREFETCH_K + 64 * l, _MM_HINT_T0);
        const __m256i s16 = _mm256_loadu_si256((const __m256i *)a[i].s16);
        // off: Q3_K's offset of -4 (in the value sums' units) or Q2_K's minimums (in dmin's).
        __m256i sc16, off, hm = _mm256_setzero_si256();
        const uint8_t *qs;
        float d, dm = 0;
        if (three) {
            const block_q3_K *b = (const block_q3_K *)blk;
            sc16 = _mm256_cvtepi8_epi16(q3k_scales_128(b->scales));
            off = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(sc16, s16), 2));
            hm = _mm256_loadu_si256((const __m256i *)b->hmask);
            qs = b->qs;
            d = h2f(b->d);
        } else {
            const block_q2_K *b = (const block_q2_K *)blk;
            sc16 = q2k_scales_256(b, s16, &off);
            qs = b->qs;
            d = h2f(b->d);
            dm = h2f(b->dmin);
        }
        __m256i vs0 = _mm256_setzero_si256(), vs1 = _mm256_setzero_si256();
        for (int n = 0; n < 2; n++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(qs + 32 * n));
            const __m256i half = n ? _mm256_permute2x128_si256(sc16, sc16, 0x11) : _mm256_permute2x128_si256(sc16, sc16, 0x00);
            for (int k = 0; k < 4; k++) {
                __m256i v = _mm256_and_si256(_mm256_srli_epi16(q, 2 * k), m3);
                if (three) v = _mm256_or_si256(v, q3k_high_256(hm, 4 * n + k));
                __m256i p = _mm256_maddubs_epi16(v, _mm256_loadu_si256((const __m256i *)(a[i].qs + 128 * n + 32 * k)));
                __m256i m = _mm256_madd_epi16(p, _mm256_shuffle_epi8(half, pick[k]));
                if (k & 1) vs1 = _mm256_add_epi32(vs1, m);
                else vs0 = _mm256_add_epi32(vs0, m);
            }
        }
        __m256 f;
        if (three) {
            f = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(off, _mm256_add_epi32(vs0, vs1))), _mm256_set1_ps(d * a[i].d));
        } else {
            f = _mm256_fmsub_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(vs0, vs1)), _mm256_set1_ps(d * a[i].d),
                                _mm256_mul_ps(_mm256_cvtepi32_ps(off), _mm256_set1_ps(dm * a[i].d)));
        }
        // Two accumulators: consecutive super-blocks' adds do not wait on each other.
        if (i & 1) acc1 = _mm256_add_ps(acc1, f);
        else acc0 = _mm256_add_ps(acc0, f);
    }
    return hsum_ps(_mm256_add_ps(acc0, acc1));
}

static float q2_K_q8k_avx2(const block_q2_K *w, const qb_q8k *a, int64_t nb) { return k23_q8k_avx2(w, 0, a, nb); }

static float q3_K_q8k_avx2(const block_q3_K *w, const qb_q8k *a, int64_t nb) { return k23_q8k_avx2(w, 1, a, nb); }

#if !defined(QB_AVX512)
// Activation rows per pass over a super-block row in batched decode (as on AVX-512).
enum { KQ_BATCH = 4 };

// R activation rows (1..KQ_BATCH) against one Q4_K or Q5_K row: each activation row's
// arithmetic is k45_q8k_avx2's, operation for operation (exact integer sums, then the same
// float operations in the same order), so its result is bitwise that kernel's, while each
// super-block's values are unpacked and its scales spread once for all R.
static inline __attribute__((always_inline)) void k45_q8k_avx2_rows(const void *w, int fifth, const qb_q8k *const *xs, float *out,
                                                                    int64_t nb, const int R) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m256i pick[8];
    for (int c = 0; c < 8; c++) pick[c] = repeat16(c);
    __m256 acc[KQ_BATCH], accm[KQ_BATCH];
    for (int r = 0; r < R; r++) acc[r] = accm[r] = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        float d, dmin;
        const uint8_t *qh, *qs;
        uint64_t sc;
        __m256i mn16;
        k45_rows_block(w, fifth, i, &d, &dmin, &qs, &qh, &sc, &mn16);
        const __m256i sc16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long)sc)));
        const __m256i hb = fifth ? _mm256_loadu_si256((const __m256i *)qh) : _mm256_setzero_si256();
        __m256i v[8], sp[8];
        for (int j = 0; j < 4; j++) {
            __m256i q = _mm256_loadu_si256((const __m256i *)(qs + 32 * j));
            v[2 * j] = _mm256_and_si256(q, m4);
            v[2 * j + 1] = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            if (fifth) {
                v[2 * j] = _mm256_or_si256(v[2 * j], bit_to_16(hb, 2 * j));
                v[2 * j + 1] = _mm256_or_si256(v[2 * j + 1], bit_to_16(hb, 2 * j + 1));
            }
            sp[2 * j] = _mm256_shuffle_epi8(sc16, pick[2 * j]);
            sp[2 * j + 1] = _mm256_shuffle_epi8(sc16, pick[2 * j + 1]);
        }
        for (int r = 0; r < R; r++) {
            const qb_q8k *a = xs[r] + i;
            const __m256i msum = _mm256_madd_epi16(mn16, _mm256_loadu_si256((const __m256i *)a->s16));
            __m256i is0 = _mm256_setzero_si256(), is1 = _mm256_setzero_si256();
            for (int j = 0; j < 4; j++) {
                __m256i p0 = _mm256_maddubs_epi16(v[2 * j], _mm256_loadu_si256((const __m256i *)(a->qs + 64 * j)));
                __m256i p1 = _mm256_maddubs_epi16(v[2 * j + 1], _mm256_loadu_si256((const __m256i *)(a->qs + 64 * j + 32)));
                is0 = _mm256_add_epi32(is0, _mm256_madd_epi16(p0, sp[2 * j]));
                is1 = _mm256_add_epi32(is1, _mm256_madd_epi16(p1, sp[2 * j + 1]));
            }
            acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(is0, is1)), _mm256_set1_ps(d * a->d), acc[r]);
            accm[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_set1_ps(dmin * a->d), accm[r]);
        }
    }
    for (int r = 0; r < R; r++) out[r] = hsum_ps(_mm256_sub_ps(acc[r], accm[r]));
}

// R activation rows (1..KQ_BATCH) against one IQ4_XS row, each bitwise iq4_xs_q8k_avx2's:
// each super-block's values, their magnitudes and its spread scales made once for all R.
static inline __attribute__((always_inline)) void iq4_xs_q8k_avx2_rows(const block_iq4_xs *w, const qb_q8k *const *xs, float *out,
                                                                       int64_t nb, const int R) {
    const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)kvalues_iq4nl));
    __m256i pick[8];
    for (int c = 0; c < 8; c++) pick[c] = repeat16(c);
    __m256 acc0[KQ_BATCH], acc1[KQ_BATCH];
    for (int r = 0; r < R; r++) acc0[r] = acc1[r] = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        for (int l = 0; l < 3; l++) _mm_prefetch((const char *)(w + i) + PREFETCH_K + 64 * l, _MM_HINT_T0);
        qb_prefetch_l2(w + i, 3);
        const __m256i sc16 = _mm256_broadcastsi128_si256(iq4xs_scales16(w + i));
        __m256i v[8], mag[8], sp[8];
        for (int ib = 0; ib < 8; ib++) {
            v[ib] = _mm256_shuffle_epi8(table, nibbles_lo_hi(w[i].qs + 16 * ib));
            mag[ib] = _mm256_sign_epi8(v[ib], v[ib]);
            sp[ib] = _mm256_shuffle_epi8(sc16, pick[ib]);
        }
        const float wd = h2f(w[i].d);
        for (int r = 0; r < R; r++) {
            const qb_q8k *a = xs[r] + i;
            __m256i is0 = _mm256_setzero_si256(), is1 = _mm256_setzero_si256();
            for (int ib = 0; ib < 8; ib += 2) {
                __m256i x0 = _mm256_loadu_si256((const __m256i *)(a->qs + 32 * ib));
                __m256i x1 = _mm256_loadu_si256((const __m256i *)(a->qs + 32 * ib + 32));
                __m256i p0 = _mm256_maddubs_epi16(mag[ib], _mm256_sign_epi8(x0, v[ib]));
                __m256i p1 = _mm256_maddubs_epi16(mag[ib + 1], _mm256_sign_epi8(x1, v[ib + 1]));
                is0 = _mm256_add_epi32(is0, _mm256_madd_epi16(p0, sp[ib]));
                is1 = _mm256_add_epi32(is1, _mm256_madd_epi16(p1, sp[ib + 1]));
            }
            __m256 f = _mm256_cvtepi32_ps(_mm256_add_epi32(is0, is1));
            if (i & 1) acc1[r] = _mm256_fmadd_ps(f, _mm256_set1_ps(wd * a->d), acc1[r]);
            else acc0[r] = _mm256_fmadd_ps(f, _mm256_set1_ps(wd * a->d), acc0[r]);
        }
    }
    for (int r = 0; r < R; r++) out[r] = hsum_ps(_mm256_add_ps(acc0[r], acc1[r]));
}

// R activation rows (1..KQ_BATCH) against one Q6_K row: each activation row's arithmetic is
// q6_K_q8k_avx2's, operation for operation, so its result is bitwise that kernel's, while
// each super-block's six-bit values are assembled and its scales spread once for all R
// (beyond the 16 registers they are read back from L1 as the multiplies' memory operands).
static inline __attribute__((always_inline)) void q6_K_q8k_avx2_rows(const block_q6_K *w, const qb_q8k *const *xs, float *out,
                                                                     int64_t nb, const int R) {
    __m256i pick[4];
    for (int k = 0; k < 4; k++) pick[k] = _mm256_permute2x128_si256(repeat16(2 * k), repeat16(2 * k + 1), 0x20);
    __m256 acc0[KQ_BATCH], acc1[KQ_BATCH];
    for (int k = 0; k < R; k++) acc0[k] = acc1[k] = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        for (int l = 0; l < 4; l++) _mm_prefetch((const char *)(w + i) + PREFETCH_K + 64 * l, _MM_HINT_T0);
        qb_prefetch_l2(w + i, 4);
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)w[i].scales));
        __m256i q[8], sp[8];
        for (int n = 0; n < 2; n++) {
            const uint8_t *ql = w[i].ql + 64 * n, *qh = w[i].qh + 32 * n;
            const __m256i half = n ? _mm256_permute2x128_si256(sc16, sc16, 0x11) : _mm256_permute2x128_si256(sc16, sc16, 0x00);
            q6k_values_avx2(ql, qh, q + 4 * n);
            for (int k = 0; k < 4; k++) sp[4 * n + k] = _mm256_shuffle_epi8(half, pick[k]);
        }
        const float wd = h2f(w[i].d);
        for (int r = 0; r < R; r++) {
            const qb_q8k *a = xs[r] + i;
            const __m256i corr = _mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *)a->s16));
            __m256i is0 = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(corr, 5)), is1 = _mm256_setzero_si256();
            for (int n = 0; n < 2; n++) {
                for (int k = 0; k < 4; k++) {
                    __m256i p = _mm256_maddubs_epi16(q[4 * n + k], _mm256_loadu_si256((const __m256i *)(a->qs + 128 * n + 32 * k)));
                    __m256i m = _mm256_madd_epi16(p, sp[4 * n + k]);
                    if (k & 1) is1 = _mm256_add_epi32(is1, m);
                    else is0 = _mm256_add_epi32(is0, m);
                }
            }
            __m256 f = _mm256_cvtepi32_ps(_mm256_add_epi32(is0, is1));
            if (i & 1) acc1[r] = _mm256_fmadd_ps(f, _mm256_set1_ps(wd * a->d), acc1[r]);
            else acc0[r] = _mm256_fmadd_ps(f, _mm256_set1_ps(wd * a->d), acc0[r]);
        }
    }
    for (int r = 0; r < R; r++) out[r] = hsum_ps(_mm256_add_ps(acc0[r], acc1[r]));
}

// The set's multi-row kernels, for the dispatch below.
static inline __attribute__((always_inline)) void k45_rows(const void *w, int fifth, const qb_q8k *const *xs, float *out, int64_t nb,
                                                          const int R) {
    k45_q8k_avx2_rows(w, fifth, xs, out, nb, R);
}

static inline __attribute__((always_inline)) void iq4_xs_rows(const block_iq4_xs *w, const qb_q8k *const *xs, float *out, int64_t nb,
                                                             const int R) {
    iq4_xs_q8k_avx2_rows(w, xs, out, nb, R);
}

static inline __attribute__((always_inline)) void q6_K_rows(const block_q6_K *w, const qb_q8k *const *xs, float *out, int64_t nb,
                                                           const int R) {
    q6_K_q8k_avx2_rows(w, xs, out, nb, R);
}
#endif
#endif

#if defined(QB_AVX512)
// The same products on 64-byte vectors. 16-bit products of quants and activations are
// scaled and summed into 32-bit lanes by one vpdpwssd (the sub-block scales spread over the
// lanes by a word permute), so each super-block is converted to float once.

// Word index vector: lanes 0..15 take word a, lanes 16..31 word b.
static inline __m512i pick_words(int a, int b) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16((short)a)), _mm256_set1_epi16((short)b), 1);
}

// Q4_K and Q5_K (`fifth`: each value's fifth bit added as 16). A 64-byte load of nibbles
// holds sub-blocks 4k and 4k + 2 (low nibbles) and 4k + 1 and 4k + 3 (high ones), whose
// fifth bits are bits 4k.. of qh (first 32 bytes) and of qh >> 2 (last 32).
static inline __attribute__((always_inline)) float k45_q8k_512(const void *w, int fifth, const qb_q8k *a, int64_t nb) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), sixteen = _mm512_set1_epi8(0x10);
    const __m512i pick[4] = {pick_words(0, 2), pick_words(1, 3), pick_words(4, 6), pick_words(5, 7)};
    __m512 acc = _mm512_setzero_ps();
    __m256 accm = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        float d, dmin;
        const uint8_t *qh, *blk = k45_block(w, fifth, i, &d, &dmin, &qh), *qs = blk + (fifth ? 48 : 16);
        for (int l = 0; l < 3; l++) _mm_prefetch((const char *)blk + PREFETCH_K + 64 * l, _MM_HINT_T0);
        qb_prefetch_l2(blk, 3);
        __m256i msum;
        uint64_t sc = kq_scales(blk + 4, a + i, &msum);
        __m512i sc16 = _mm512_castsi128_si512(_mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long)sc)));
        __m512i hl = _mm512_setzero_si512();
        if (fifth) {
            __m256i h = _mm256_loadu_si256((const __m256i *)qh);
            hl = _mm512_inserti64x4(_mm512_castsi256_si512(h), _mm256_srli_epi16(h, 2), 1);
        }
        __m512i is[2];
        for (int k = 0; k < 2; k++) {
            __m512i q = _mm512_loadu_si512((const void *)(qs + 64 * k));
            __m512i lo = _mm512_and_si512(q, m4), hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
            if (fifth) {
                lo = _mm512_mask_add_epi8(lo, _mm512_test_epi8_mask(hl, _mm512_set1_epi8((char)(1 << (4 * k)))), lo, sixteen);
                hi = _mm512_mask_add_epi8(hi, _mm512_test_epi8_mask(hl, _mm512_set1_epi8((char)(2 << (4 * k)))), hi, sixteen);
            }
            __m512i p0 = _mm512_maddubs_epi16(lo, _mm512_loadu_si512((const void *)(a[i].qs_q4k + 128 * k)));
            __m512i p1 = _mm512_maddubs_epi16(hi, _mm512_loadu_si512((const void *)(a[i].qs_q4k + 128 * k + 64)));
            is[k] = _mm512_dpwssd_epi32(_mm512_madd_epi16(p0, _mm512_permutexvar_epi16(pick[2 * k], sc16)), p1,
                                        _mm512_permutexvar_epi16(pick[2 * k + 1], sc16));
        }
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(is[0], is[1])), _mm512_set1_ps(d * a[i].d), acc);
        accm = _mm256_fmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_set1_ps(dmin * a[i].d), accm);
    }
    return _mm512_reduce_add_ps(acc) - hsum_ps(accm);
}

static float q4_K_q8k_512(const block_q4_K *w, const qb_q8k *a, int64_t nb) { return k45_q8k_512(w, 0, a, nb); }

static float q5_K_q8k_512(const block_q5_K *w, const qb_q8k *a, int64_t nb) { return k45_q8k_512(w, 1, a, nb); }

// IQ4_XS. The 32 bytes of nibbles of sub-blocks 2k and 2k + 1 go to the lanes [first,
// first, second, second], the second and fourth shifted down a nibble, so one 64-byte vector
// holds the two sub-blocks' values in the activations' order. AVX-512 has no vpsignb: the
// activations take the values' signs under a mask and meet |v| in vpmaddubsw (a pair stays
// within 2 x 127 x 127). The eight signed scales, their 4- and 2-bit fields spread to bytes
// by pdep once per super-block, weight the 16-bit sums in vpdpwssd.
static float iq4_xs_q8k_512(const block_iq4_xs *w, const qb_q8k *a, int64_t nb) {
    const __m512i table = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)kvalues_iq4nl));
    const __m512i m4 = _mm512_set1_epi8(0x0F), zero = _mm512_setzero_si512();
    const __m512i pick[4] = {pick_words(0, 1), pick_words(2, 3), pick_words(4, 5), pick_words(6, 7)};
    __m512 acc = _mm512_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        for (int l = 0; l < 3; l++) _mm_prefetch((const char *)(w + i) + PREFETCH_K + 64 * l, _MM_HINT_T0);
        qb_prefetch_l2(w + i, 3);
        uint32_t sl;
        memcpy(&sl, w[i].scales_l, 4);
        // Byte ib: sub-block ib's scale + 32, bits 4ib.. of scales_l below bits 2ib.. of scales_h.
        uint64_t ls = _pdep_u64(sl, 0x0F0F0F0F0F0F0F0FULL) | _pdep_u64(w[i].scales_h, 0x3030303030303030ULL);
        __m512i sc16 = _mm512_castsi128_si512(_mm_sub_epi16(_mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long)ls)), _mm_set1_epi16(32)));
        __m512i is = _mm512_setzero_si512();
        for (int k = 0; k < 4; k++) {
            __m512i t = _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(w[i].qs + 32 * k)));
            __m512i z = _mm512_shuffle_i64x2(t, t, 0x50);
            __m512i v = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_mask_srli_epi16(z, 0xFF00FF00u, z, 4), m4));
            __m512i x = _mm512_loadu_si512((const void *)(a[i].qs + 64 * k));
            __m512i xs = _mm512_mask_sub_epi8(x, _mm512_movepi8_mask(v), zero, x);
            is = _mm512_dpwssd_epi32(is, _mm512_maddubs_epi16(_mm512_abs_epi8(v), xs), _mm512_permutexvar_epi16(pick[k], sc16));
        }
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is), _mm512_set1_ps(h2f(w[i].d) * a[i].d), acc);
    }
    return _mm512_reduce_add_ps(acc);
}

// Word index vector for Q6_K scales: lane j (0..31) takes scale base + j / 8.
static inline __m512i pick_scales(int base) {
    short v[32];
    for (int j = 0; j < 32; j++) v[j] = (short)(base + j / 8);
    return _mm512_loadu_si512((const void *)v);
}

static float q6_K_q8k_512(const block_q6_K *w, const qb_q8k *a, int64_t nb) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), m3 = _mm512_set1_epi8(0x03);
    const __m512i pick[4] = {pick_scales(0), pick_scales(4), pick_scales(8), pick_scales(12)};
    __m512 acc = _mm512_setzero_ps();
    __m256 accc = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        for (int l = 0; l < 4; l++) _mm_prefetch((const char *)(w + i) + PREFETCH_K + 64 * l, _MM_HINT_T0);
        qb_prefetch_l2(w + i, 4);
        __m256i sc256 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)w[i].scales));
        __m512i sc16 = _mm512_castsi256_si512(sc256);
        // The -32 offset of every value, through the activations' sums per 16.
        __m256i corr = _mm256_madd_epi16(sc256, _mm256_loadu_si256((const __m256i *)a[i].s16));
        __m512i is[2];
        for (int n = 0; n < 2; n++) {
            __m512i ql = _mm512_loadu_si512((const void *)(w[i].ql + 64 * n));
            __m256i h = _mm256_loadu_si256((const __m256i *)(w[i].qh + 32 * n));
            // High bits of values 0..63 of the half: h (first 32), h >> 2 (next 32); of 64..127: h >> 4, h >> 6.
            __m512i hl = _mm512_inserti64x4(_mm512_castsi256_si512(h), _mm256_srli_epi16(h, 2), 1);
            __m512i hh = _mm512_srli_epi16(hl, 4);
            __m512i qlo = _mm512_or_si512(_mm512_and_si512(ql, m4), _mm512_slli_epi16(_mm512_and_si512(hl, m3), 4));
            __m512i qhi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m4),
                                          _mm512_slli_epi16(_mm512_and_si512(hh, m3), 4));
            __m512i p0 = _mm512_maddubs_epi16(qlo, _mm512_loadu_si512((const void *)(a[i].qs + 128 * n)));
            __m512i p1 = _mm512_maddubs_epi16(qhi, _mm512_loadu_si512((const void *)(a[i].qs + 128 * n + 64)));
            is[n] = _mm512_dpwssd_epi32(_mm512_madd_epi16(p0, _mm512_permutexvar_epi16(pick[2 * n], sc16)), p1,
                                        _mm512_permutexvar_epi16(pick[2 * n + 1], sc16));
        }
        float dd = h2f(w[i].d) * a[i].d;
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(is[0], is[1])), _mm512_set1_ps(dd), acc);
        accc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(corr), _mm256_set1_ps(dd), accc);
    }
    return _mm512_reduce_add_ps(acc) - 32.0f * hsum_ps(accc);
}

// Q2_K and Q3_K (`three`) on 64-byte vectors: a half's 32 quant bytes in both 256-bit
// halves, shifted by 2k and 2k + 2 at once (vpsrlvw), give the values of two 32-value blocks
// k, k + 1 (four sub-blocks: their scales spread by a word permute, as Q6_K's), and so do
// the hmask's bits 4n + k and 4n + k + 1 for Q3_K. The offset of -4 (Q3_K) and the minimums
// (Q2_K) meet the activations' sums per 16 once per super-block.
static inline __attribute__((always_inline)) float k23_q8k_512(const void *w, int three, const qb_q8k *a, int64_t nb) {
    const __m512i m3 = _mm512_set1_epi8(3), m4 = _mm512_set1_epi8(4);
    const __m512i pick[4] = {pick_scales(0), pick_scales(4), pick_scales(8), pick_scales(12)};
    // Word shift counts per 256-bit half: the quants' (2k, 2k + 2) for k = 0, 2; the hmask's
    // to bring bit s = 4n + k to bit 2: left by 2 - s for s < 2, else right by s - 2.
    const __m512i qshift[2] = {_mm512_inserti64x4(_mm512_set1_epi16(0), _mm256_set1_epi16(2), 1),
                               _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(6), 1)};
    const __m512i hleft = _mm512_inserti64x4(_mm512_set1_epi16(2), _mm256_set1_epi16(1), 1);
    const __m512i hright[3] = {_mm512_inserti64x4(_mm512_set1_epi16(0), _mm256_set1_epi16(1), 1),
                               _mm512_inserti64x4(_mm512_set1_epi16(2), _mm256_set1_epi16(3), 1),
                               _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(5), 1)};
    const int64_t bytes = three ? (int64_t)sizeof(block_q3_K) : (int64_t)sizeof(block_q2_K);
    __m512 acc = _mm512_setzero_ps();
    __m256 accc = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *blk = (const uint8_t *)w + i * bytes;
        for (int l = 0; l < 2; l++) _mm_prefetch((const char *)blk + PREFETCH_K + 64 * l, _MM_HINT_T0);
        const __m256i s16 = _mm256_loadu_si256((const __m256i *)a[i].s16);
        __m256i sc256, off;
        __m512i hm = _mm512_setzero_si512();
        const uint8_t *qs;
        float d, dc;
        if (three) {
            const block_q3_K *b = (const block_q3_K *)blk;
            sc256 = _mm256_cvtepi8_epi16(q3k_scales_128(b->scales));
            off = _mm256_madd_epi16(sc256, s16);
            hm = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)b->hmask));
            qs = b->qs;
            d = h2f(b->d);
            dc = -4.0f * d;
        } else {
            const block_q2_K *b = (const block_q2_K *)blk;
            sc256 = q2k_scales_256(b, s16, &off);
            qs = b->qs;
            d = h2f(b->d);
            dc = -h2f(b->dmin);
        }
        const __m512i sc16 = _mm512_castsi256_si512(sc256);
        __m512i is = _mm512_setzero_si512();
        for (int n = 0; n < 2; n++) {
            const __m512i q = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(qs + 32 * n)));
            for (int p = 0; p < 2; p++) {
                __m512i v = _mm512_and_si512(_mm512_srlv_epi16(q, qshift[p]), m3);
                if (three) {
                    const __m512i h = n == 0 && p == 0 ? _mm512_sllv_epi16(hm, hleft) : _mm512_srlv_epi16(hm, hright[2 * n + p - 1]);
                    v = _mm512_or_si512(v, _mm512_and_si512(h, m4));
                }
                const __m512i prod = _mm512_maddubs_epi16(v, _mm512_loadu_si512((const void *)(a[i].qs + 128 * n + 64 * p)));
                is = _mm512_dpwssd_epi32(is, prod, _mm512_permutexvar_epi16(pick[2 * n + p], sc16));
            }
        }
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is), _mm512_set1_ps(d * a[i].d), acc);
        accc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(off), _mm256_set1_ps(dc * a[i].d), accc);
    }
    return _mm512_reduce_add_ps(acc) + hsum_ps(accc);
}

static float q2_K_q8k_512(const block_q2_K *w, const qb_q8k *a, int64_t nb) { return k23_q8k_512(w, 0, a, nb); }

static float q3_K_q8k_512(const block_q3_K *w, const qb_q8k *a, int64_t nb) { return k23_q8k_512(w, 1, a, nb); }

// Activation rows per pass over a super-block row in batched decode: each row's
// accumulators beside a super-block's unpacked value vectors and spread scales.
enum { KQ_BATCH = 4 };

// R activation rows (1..KQ_BATCH) against one Q4_K or Q5_K row, each bitwise k45_q8k_512's:
// each super-block's values unpacked and its scales spread once for all R.
static inline __attribute__((always_inline)) void k45_q8k_512_rows(const void *w, int fifth, const qb_q8k *const *xs, float *out,
                                                                   int64_t nb, const int R) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), sixteen = _mm512_set1_epi8(0x10);
    const __m512i pick[4] = {pick_words(0, 2), pick_words(1, 3), pick_words(4, 6), pick_words(5, 7)};
    __m512 acc[KQ_BATCH];
    __m256 accm[KQ_BATCH];
    for (int r = 0; r < R; r++) acc[r] = _mm512_setzero_ps(), accm[r] = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        float d, dmin;
        const uint8_t *qh, *qs;
        uint64_t sc;
        __m256i mn16;
        k45_rows_block(w, fifth, i, &d, &dmin, &qs, &qh, &sc, &mn16);
        const __m512i sc16 = _mm512_castsi128_si512(_mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long)sc)));
        __m512i hl = _mm512_setzero_si512();
        if (fifth) {
            __m256i h = _mm256_loadu_si256((const __m256i *)qh);
            hl = _mm512_inserti64x4(_mm512_castsi256_si512(h), _mm256_srli_epi16(h, 2), 1);
        }
        __m512i lo[2], hi[2], sp[4];
        for (int k = 0; k < 2; k++) {
            __m512i q = _mm512_loadu_si512((const void *)(qs + 64 * k));
            lo[k] = _mm512_and_si512(q, m4), hi[k] = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
            if (fifth) {
                lo[k] = _mm512_mask_add_epi8(lo[k], _mm512_test_epi8_mask(hl, _mm512_set1_epi8((char)(1 << (4 * k)))), lo[k], sixteen);
                hi[k] = _mm512_mask_add_epi8(hi[k], _mm512_test_epi8_mask(hl, _mm512_set1_epi8((char)(2 << (4 * k)))), hi[k], sixteen);
            }
            sp[2 * k] = _mm512_permutexvar_epi16(pick[2 * k], sc16);
            sp[2 * k + 1] = _mm512_permutexvar_epi16(pick[2 * k + 1], sc16);
        }
        for (int r = 0; r < R; r++) {
            const qb_q8k *a = xs[r] + i;
            const __m256i msum = _mm256_madd_epi16(mn16, _mm256_loadu_si256((const __m256i *)a->s16));
            __m512i is[2];
            for (int k = 0; k < 2; k++) {
                __m512i p0 = _mm512_maddubs_epi16(lo[k], _mm512_loadu_si512((const void *)(a->qs_q4k + 128 * k)));
                __m512i p1 = _mm512_maddubs_epi16(hi[k], _mm512_loadu_si512((const void *)(a->qs_q4k + 128 * k + 64)));
                is[k] = _mm512_dpwssd_epi32(_mm512_madd_epi16(p0, sp[2 * k]), p1, sp[2 * k + 1]);
            }
            acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(is[0], is[1])), _mm512_set1_ps(d * a->d), acc[r]);
            accm[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_set1_ps(dmin * a->d), accm[r]);
        }
    }
    for (int r = 0; r < R; r++) out[r] = _mm512_reduce_add_ps(acc[r]) - hsum_ps(accm[r]);
}

// R activation rows (1..KQ_BATCH) against one IQ4_XS row, each bitwise iq4_xs_q8k_512's:
// each super-block's values, their magnitudes and signs and its spread scales made once.
static inline __attribute__((always_inline)) void iq4_xs_q8k_512_rows(const block_iq4_xs *w, const qb_q8k *const *xs, float *out,
                                                                      int64_t nb, const int R) {
    const __m512i table = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)kvalues_iq4nl));
    const __m512i m4 = _mm512_set1_epi8(0x0F), zero = _mm512_setzero_si512();
    const __m512i pick[4] = {pick_words(0, 1), pick_words(2, 3), pick_words(4, 5), pick_words(6, 7)};
    __m512 acc[KQ_BATCH];
    for (int r = 0; r < R; r++) acc[r] = _mm512_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        for (int l = 0; l < 3; l++) _mm_prefetch((const char *)(w + i) + PREFETCH_K + 64 * l, _MM_HINT_T0);
        qb_prefetch_l2(w + i, 3);
        uint32_t sl;
        memcpy(&sl, w[i].scales_l, 4);
        uint64_t ls = _pdep_u64(sl, 0x0F0F0F0F0F0F0F0FULL) | _pdep_u64(w[i].scales_h, 0x3030303030303030ULL);
        const __m512i sc16 = _mm512_castsi128_si512(_mm_sub_epi16(_mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long)ls)), _mm_set1_epi16(32)));
        __m512i mag[4], sp[4];
        __mmask64 neg[4];
        for (int k = 0; k < 4; k++) {
            __m512i t = _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(w[i].qs + 32 * k)));
            __m512i z = _mm512_shuffle_i64x2(t, t, 0x50);
            __m512i v = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_mask_srli_epi16(z, 0xFF00FF00u, z, 4), m4));
            neg[k] = _mm512_movepi8_mask(v);
            mag[k] = _mm512_abs_epi8(v);
            sp[k] = _mm512_permutexvar_epi16(pick[k], sc16);
        }
        const float wd = h2f(w[i].d);
        for (int r = 0; r < R; r++) {
            const qb_q8k *a = xs[r] + i;
            __m512i is = _mm512_setzero_si512();
            for (int k = 0; k < 4; k++) {
                __m512i x = _mm512_loadu_si512((const void *)(a->qs + 64 * k));
                __m512i xn = _mm512_mask_sub_epi8(x, neg[k], zero, x);
                is = _mm512_dpwssd_epi32(is, _mm512_maddubs_epi16(mag[k], xn), sp[k]);
            }
            acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is), _mm512_set1_ps(wd * a->d), acc[r]);
        }
    }
    for (int r = 0; r < R; r++) out[r] = _mm512_reduce_add_ps(acc[r]);
}

// R activation rows (1..KQ_BATCH) against one Q6_K row: each activation row's arithmetic is
// q6_K_q8k_512's, operation for operation, so its result is bitwise that kernel's, while each
// super-block's six-bit values are assembled and its scales spread once for all R.
static inline __attribute__((always_inline)) void q6_K_q8k_512_rows(const block_q6_K *w, const qb_q8k *const *xs, float *out,
                                                                    int64_t nb, const int R) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), m3 = _mm512_set1_epi8(0x03);
    const __m512i pick[4] = {pick_scales(0), pick_scales(4), pick_scales(8), pick_scales(12)};
    __m512 acc[KQ_BATCH];
    __m256 accc[KQ_BATCH];
    for (int k = 0; k < R; k++) acc[k] = _mm512_setzero_ps(), accc[k] = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        for (int l = 0; l < 4; l++) _mm_prefetch((const char *)(w + i) + PREFETCH_K + 64 * l, _MM_HINT_T0);
        qb_prefetch_l2(w + i, 4);
        __m256i sc256 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)w[i].scales));
        __m512i sc16 = _mm512_castsi256_si512(sc256);
        __m512i qlo[2], qhi[2], sp[4];
        for (int n = 0; n < 2; n++) {
            __m512i ql = _mm512_loadu_si512((const void *)(w[i].ql + 64 * n));
            __m256i h = _mm256_loadu_si256((const __m256i *)(w[i].qh + 32 * n));
            __m512i hl = _mm512_inserti64x4(_mm512_castsi256_si512(h), _mm256_srli_epi16(h, 2), 1);
            __m512i hh = _mm512_srli_epi16(hl, 4);
            qlo[n] = _mm512_or_si512(_mm512_and_si512(ql, m4), _mm512_slli_epi16(_mm512_and_si512(hl, m3), 4));
            qhi[n] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m4), _mm512_slli_epi16(_mm512_and_si512(hh, m3), 4));
            sp[2 * n] = _mm512_permutexvar_epi16(pick[2 * n], sc16);
            sp[2 * n + 1] = _mm512_permutexvar_epi16(pick[2 * n + 1], sc16);
        }
        const float wd = h2f(w[i].d);
        for (int k = 0; k < R; k++) {
            const qb_q8k *a = xs[k] + i;
            __m256i corr = _mm256_madd_epi16(sc256, _mm256_loadu_si256((const __m256i *)a->s16));
            __m512i is[2];
            for (int n = 0; n < 2; n++) {
                __m512i p0 = _mm512_maddubs_epi16(qlo[n], _mm512_loadu_si512((const void *)(a->qs + 128 * n)));
                __m512i p1 = _mm512_maddubs_epi16(qhi[n], _mm512_loadu_si512((const void *)(a->qs + 128 * n + 64)));
                is[n] = _mm512_dpwssd_epi32(_mm512_madd_epi16(p0, sp[2 * n]), p1, sp[2 * n + 1]);
            }
            float dd = wd * a->d;
            acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(is[0], is[1])), _mm512_set1_ps(dd), acc[k]);
            accc[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(corr), _mm256_set1_ps(dd), accc[k]);
        }
    }
    for (int k = 0; k < R; k++) out[k] = _mm512_reduce_add_ps(acc[k]) - 32.0f * hsum_ps(accc[k]);
}

// The set's multi-row kernels, for the dispatch below.
static inline __attribute__((always_inline)) void k45_rows(const void *w, int fifth, const qb_q8k *const *xs, float *out, int64_t nb,
                                                          const int R) {
    k45_q8k_512_rows(w, fifth, xs, out, nb, R);
}

static inline __attribute__((always_inline)) void iq4_xs_rows(const block_iq4_xs *w, const qb_q8k *const *xs, float *out, int64_t nb,
                                                             const int R) {
    iq4_xs_q8k_512_rows(w, xs, out, nb, R);
}

static inline __attribute__((always_inline)) void q6_K_rows(const block_q6_K *w, const qb_q8k *const *xs, float *out, int64_t nb,
                                                           const int R) {
    q6_K_q8k_512_rows(w, xs, out, nb, R);
}
#endif

// ---------------------------------------------------------------------------------------
// Q4_K in the 16-row decode layout (qb_repack.h). Per super-block the row's result is
// d a.d sum_j sc_j (q_j . x_j) - dmin a.d sum_j mn_j S_j, S_j the activations' sum over
// sub-block j; both sums are exact in int32 (at most 63 x 15 x 127 x 256 and 63 x 127 x 256).

// The activations' sums per 32 values of super-block `a`.
static inline void q8k_sums32(const qb_q8k *a, int32_t s[8]) {
    for (int j = 0; j < 8; j++) s[j] = a->s16[2 * j] + a->s16[2 * j + 1];
}

#if !defined(__AVX2__)
// The definition, row by row: the portable row kernel's arithmetic (q4_K_q8k).
static void q4_K_x16(const uint8_t *g, const qb_q8k *a, float *y, int64_t nb) {
    float s[QB_Q4K_X16_ROWS] = {0};
    for (int64_t i = 0; i < nb; i++, g += QB_Q4K_X16_BYTES) {
        int32_t S[8];
        q8k_sums32(a + i, S);
        for (int r = 0; r < QB_Q4K_X16_ROWS; r++) {
            int32_t isum = 0, msum = 0;
            for (int j = 0; j < 8; j++) {
                const uint8_t *v = g + QB_Q4K_X16_QS + 256 * j + 4 * r;
                int dot = 0;
                for (int t = 0; t < 4; t++)
                    for (int k = 0; k < 4; k++)
                        dot += (v[64 * t + k] & 0xF) * a[i].qs[32 * j + 4 * t + k] + (v[64 * t + k] >> 4) * a[i].qs[32 * j + 16 + 4 * t + k];
                uint8_t sc, mn;
                q4k_x16_scale_min(g, j, r, &sc, &mn);
                isum += sc * dot;
                msum += mn * S[j];
            }
            qb_half d, dmin;
            memcpy(&d, g + 2 * r, 2);
            memcpy(&dmin, g + QB_Q4K_X16_DMIN + 2 * r, 2);
            s[r] += a[i].d * (h2f(d) * (float)isum - h2f(dmin) * (float)msum);
        }
    }
    memcpy(y, s, sizeof s);
}
#endif

// The 16-row group-blocks are one linear stream. On Zen 4 the hardware prefetcher alone kept
// it at the core's rate (26-30 GB/s), and a group-block's 36 line prefetches issued together
// halved it; one Intel core (Emerald Rapids) streamed it at 8.8 GB/s without software
// prefetch, where the plain row kernels, which prefetch, reached 12.6-13.5. So the
// group-block two ahead is fetched spread over the eight sub-blocks, lines 4j..4j+3 at
// sub-block j and the last four at sub-block 0: 12.8 GB/s on that core
// (results/x16-prefetch-2026-11-27/). Spread so, they still took 15% of a one-thread 1B
// Q4_K_M token's time on Zen 4's AVX-512 set, so one-row decode skips them where
// qb_set_stream_prefetch says (AMD CPUs); batches keep them
// (results/x16-prefetch-q4k-mlx-zen4-2026-12-01/).
#if defined(__AVX2__)
enum { X16_AHEAD = 2 * QB_Q4K_X16_BYTES };
static inline __attribute__((always_inline)) void x16_prefetch(const uint8_t *g, int j) {
    const char *at = (const char *)g + X16_AHEAD;
    for (int l = 0; l < 4; l++) _mm_prefetch(at + 256 * j + 64 * l, _MM_HINT_T0);
    qb_prefetch_l2(g + 256 * j, 4);
    if (j == 0) {
        for (int l = 0; l < 4; l++) _mm_prefetch(at + 2048 + 64 * l, _MM_HINT_T0);
        qb_prefetch_l2(g + 2048, 4);
    }
}

// Where the streams leave the rest to the hardware prefetcher (qb_set_stream_prefetch off, AMD
// CPUs), the AVX2 set's one-row Q4_K and Q6_K group kernels still hint each line into L2
// X16_FAR bytes ahead, with no L1 prefetch. On Zen 4, one thread streaming the 1B's layer
// matrices (Q4_K) and head (Q6_K) from memory read 1.05-1.12x and 0.97-1.16x as fast so, in
// three and two runs; a one-thread 1B Q4_K_M decode ran 1.064x as fast [1.027, 1.101], two
// threads the same (0.986 [0.901, 1.088]). The AVX-512 set's kernels read 0.71-0.83x as fast
// with such hints and go without (results/decode-far-l2-zen4-2026-12-06/).
enum { X16_FAR = 24576 };
static inline __attribute__((always_inline)) void x16_prefetch_far(const uint8_t *g, int j) {
    for (int l = 0; l < 4; l++) _mm_prefetch((const char *)g + X16_FAR + 256 * j + 64 * l, _MM_HINT_T1);
    if (j == 0)
        for (int l = 0; l < 4; l++) _mm_prefetch((const char *)g + X16_FAR + 2048 + 64 * l, _MM_HINT_T1);
}

// vpshufb indices copying each 32-bit lane's low 16 bits into both its halves (each index
// plus 2: its high 16 bits), for the AVX2 kernels' per-row scale pairs.
static inline __m256i lane_low16_twice(void) {
    return _mm256_setr_epi8(0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13, 0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13);
}
#endif

#if defined(QB_AVX512)
// v >> n for n >= 0, v << -n otherwise (n a constant once the loop unrolls).
static inline __m512i shift_bits(__m512i v, int n) { return n >= 0 ? _mm512_srli_epi32(v, n) : _mm512_slli_epi32(v, -n); }

// One vpdpbusd per four values of the 16 rows (their lanes) against a broadcast of four
// activations; a sub-block's low and high nibbles (values 0..15 and 16..31) summed apart,
// then scaled by the rows' sc_j in int32. With `pf` the group-block ahead is prefetched four
// lines per sub-block (x16_prefetch).
static inline __attribute__((always_inline)) void q4_K_x16_512(const uint8_t *g, const qb_q8k *a, float *y, int64_t nb,
                                                               const int pf) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    __m512 acc = _mm512_setzero_ps();
    for (int64_t i = 0; i < nb; i++, g += QB_Q4K_X16_BYTES) {
        int32_t S[8];
        q8k_sums32(a + i, S);
        __m512i isum = _mm512_setzero_si512(), msum = _mm512_setzero_si512();
        const __m512i top = _mm512_loadu_si512((const void *)(g + QB_Q4K_X16_HI)), m0f = _mm512_set1_epi32(0x0F),
                      m30 = _mm512_set1_epi32(0x30);
        for (int j = 0; j < 8; j++) {
            if (pf) x16_prefetch(g, j);
            const uint8_t *q = g + QB_Q4K_X16_QS + 256 * j;
            const int8_t *x = a[i].qs + 32 * j;
            __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
            for (int t = 0; t < 4; t++) {
                __m512i v = _mm512_loadu_si512((const void *)(q + 64 * t));
                lo = _mm512_dpbusd_epi32(lo, _mm512_and_si512(v, m4), _mm512_set1_epi32(act4(x + 4 * t)));
                hi = _mm512_dpbusd_epi32(hi, _mm512_and_si512(_mm512_srli_epi16(v, 4), m4), _mm512_set1_epi32(act4(x + 16 + 4 * t)));
            }
            // The 16 rows' sc_j and mn_j: low four bits from one byte each, high two from the rows' words.
            __m512i lo4 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(g + QB_Q4K_X16_LO + 16 * j)));
            __m512i sc = _mm512_ternarylogic_epi32(lo4, _mm512_and_si512(shift_bits(top, 2 * j - 4), m30), m0f, 0xEC);
            __m512i mn = _mm512_or_si512(_mm512_srli_epi32(lo4, 4), _mm512_and_si512(_mm512_srli_epi32(top, 12 + 2 * j), m30));
            isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(_mm512_add_epi32(lo, hi), sc));
            msum = _mm512_add_epi32(msum, _mm512_mullo_epi32(mn, _mm512_set1_epi32(S[j])));
        }
        __m512 ad = _mm512_set1_ps(a[i].d);
        __m512 d = _mm512_mul_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)g)), ad);
        __m512 dmin = _mm512_mul_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(g + QB_Q4K_X16_DMIN))), ad);
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), d, acc);
        acc = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum), dmin, acc);
    }
    _mm512_storeu_ps(y, acc);
}

// Activation rows per pass over a group: eight rows' sums and accumulators beside the
// sub-block's eight nibble vectors nearly fill the 32 registers. Eight rather than four: the
// 1B llama's batched step of 8 sequences 101-122 against 131-135 ms, two threads, Intel
// Emerald Rapids (results/batch-x16-2026-11-29/).
enum { QB_Q4K_X16_BATCH = 8 };

// R activation rows (1..QB_Q4K_X16_BATCH) against one group: each row's arithmetic is
// q4_K_x16_512's (exact int32 sums, then the same float operations in the same order), so
// its outputs are bitwise that kernel's, while each sub-block's 16 rows are loaded and split
// into nibbles once for all R. Batched decode ran the one-row kernel R times over a group
// in cache: the nibble masks, shifts and loads, a third of its vector work, R times over.
// The minimums' sums (mn_j S_j) are taken after the products, so that only the products'
// sums are live beside the nibbles.
static inline __attribute__((always_inline)) void q4_K_x16_512_rows(const uint8_t *g, const qb_q8k *const *xs, float *const *ys,
                                                                    int64_t y0, int64_t nb, const int R) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), m0f = _mm512_set1_epi32(0x0F), m30 = _mm512_set1_epi32(0x30);
    __m512 acc[QB_Q4K_X16_BATCH];
    for (int k = 0; k < R; k++) acc[k] = _mm512_setzero_ps();
    for (int64_t i = 0; i < nb; i++, g += QB_Q4K_X16_BYTES) {
        __m512i isum[QB_Q4K_X16_BATCH], msum[QB_Q4K_X16_BATCH];
        for (int k = 0; k < R; k++) isum[k] = msum[k] = _mm512_setzero_si512();
        const __m512i top = _mm512_loadu_si512((const void *)(g + QB_Q4K_X16_HI));
        for (int j = 0; j < 8; j++) {
            x16_prefetch(g, j);
            const uint8_t *q = g + QB_Q4K_X16_QS + 256 * j;
            __m512i wl[4], wh[4];
            for (int t = 0; t < 4; t++) {
                const __m512i v = _mm512_loadu_si512((const void *)(q + 64 * t));
                wl[t] = _mm512_and_si512(v, m4);
                wh[t] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
            }
            const __m512i lo4 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(g + QB_Q4K_X16_LO + 16 * j)));
            const __m512i sc = _mm512_ternarylogic_epi32(lo4, _mm512_and_si512(shift_bits(top, 2 * j - 4), m30), m0f, 0xEC);
            for (int k = 0; k < R; k++) {
                const int8_t *x = xs[k][i].qs + 32 * j;
                __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
                for (int t = 0; t < 4; t++) {
                    lo = _mm512_dpbusd_epi32(lo, wl[t], _mm512_set1_epi32(act4(x + 4 * t)));
                    hi = _mm512_dpbusd_epi32(hi, wh[t], _mm512_set1_epi32(act4(x + 16 + 4 * t)));
                }
                isum[k] = _mm512_add_epi32(isum[k], _mm512_mullo_epi32(_mm512_add_epi32(lo, hi), sc));
            }
        }
        for (int j = 0; j < 8; j++) {
            const __m512i lo4 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(g + QB_Q4K_X16_LO + 16 * j)));
            const __m512i mn = _mm512_or_si512(_mm512_srli_epi32(lo4, 4), _mm512_and_si512(_mm512_srli_epi32(top, 12 + 2 * j), m30));
            for (int k = 0; k < R; k++) {
                const int32_t S = xs[k][i].s16[2 * j] + xs[k][i].s16[2 * j + 1];
                msum[k] = _mm512_add_epi32(msum[k], _mm512_mullo_epi32(mn, _mm512_set1_epi32(S)));
            }
        }
        const __m512 dh = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)g));
        const __m512 mh = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(g + QB_Q4K_X16_DMIN)));
        for (int k = 0; k < R; k++) {
            const __m512 ad = _mm512_set1_ps(xs[k][i].d);
            acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[k]), _mm512_mul_ps(dh, ad), acc[k]);
            acc[k] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum[k]), _mm512_mul_ps(mh, ad), acc[k]);
        }
    }
    for (int k = 0; k < R; k++) _mm512_storeu_ps(ys[k] + y0, acc[k]);
}
// The set's multi-row kernel, for the dispatch below.
static inline __attribute__((always_inline)) void q4_K_x16_rows(const uint8_t *g, const qb_q8k *const *xs, float *const *ys, int64_t y0,
                                                               int64_t nb, const int R) {
    q4_K_x16_512_rows(g, xs, ys, y0, nb, R);
}
#elif defined(__AVX2__)
// Activation rows per pass over a group, as on AVX-512; the sums and accumulators beyond
// the 16 registers live in L1.
enum { QB_Q4K_X16_BATCH = 8 };

// v >> n for n >= 0, v << -n otherwise, in 16-bit lanes (n a constant once the loop unrolls).
static inline __m256i shift16_avx2(__m256i v, int n) { return n >= 0 ? _mm256_srli_epi16(v, n) : _mm256_slli_epi16(v, -n); }

// A group-block's scales, made once before its products: sc2[j][h] holds the (sc_j, sc_j)
// 16-bit pair of each row of half h (rows 8h..8h + 7), for the products' vpmaddwd, and
// mn2[m][h] the pair (mn_2m, mn_2m+1), for the minimums' (q4k_x16_mins_avx2). The 16 rows'
// sc_j and mn_j are made in 16-bit lanes in the order rows 0-3, 8-11 | 4-7, 12-15: unpacking
// such a vector with itself, or with the next sub-block's, then gives half 0 from each
// 128-bit lane's low words and half 1 from its high ones. Made inside the product loop, per
// sub-block and half, they took more operations and spilled registers: the one-row kernel
// took 1.16x this one's time in L2 and 1.04-1.05x from memory, one thread on Intel Emerald
// Rapids (results/q4k-scales-avx2-2026-12-05-emr/).
static inline __attribute__((always_inline)) void q4k_x16_scales_avx2(const uint8_t *g, __m256i sc2[8][2], __m256i mn2[4][2]) {
    const __m256i top0 = _mm256_loadu_si256((const __m256i *)(g + QB_Q4K_X16_HI));
    const __m256i top1 = _mm256_loadu_si256((const __m256i *)(g + QB_Q4K_X16_HI + 32));
    const __m256i low = _mm256_set1_epi32(0xFFFF), m0f = _mm256_set1_epi16(0x0F), m30 = _mm256_set1_epi16(0x30);
    // The rows' high two bits of every sc_j (bits 2j, 2j + 1) and of every mn_j, one word a row.
    const __m256i tsc = _mm256_packus_epi32(_mm256_and_si256(top0, low), _mm256_and_si256(top1, low));
    const __m256i tmn = _mm256_packus_epi32(_mm256_srli_epi32(top0, 16), _mm256_srli_epi32(top1, 16));
    const __m256i order = _mm256_setr_epi8(0, -1, 1, -1, 2, -1, 3, -1, 8, -1, 9, -1, 10, -1, 11, -1, //
                                           4, -1, 5, -1, 6, -1, 7, -1, 12, -1, 13, -1, 14, -1, 15, -1);
    __m256i prev = _mm256_setzero_si256();
#pragma clang loop unroll(full)
    for (int j = 0; j < 8; j++) {
        const __m128i lo = _mm_loadu_si128((const __m128i *)(g + QB_Q4K_X16_LO + 16 * j));
        const __m256i l16 = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(lo), order);
        const __m256i sc = _mm256_or_si256(_mm256_and_si256(l16, m0f), _mm256_and_si256(shift16_avx2(tsc, 2 * j - 4), m30));
        sc2[j][0] = _mm256_unpacklo_epi16(sc, sc);
        sc2[j][1] = _mm256_unpackhi_epi16(sc, sc);
        const __m256i mn = _mm256_or_si256(_mm256_srli_epi16(l16, 4), _mm256_and_si256(shift16_avx2(tmn, 2 * j - 4), m30));
        if (j % 2 == 0) {
            prev = mn;
        } else {
            mn2[j / 2][0] = _mm256_unpacklo_epi16(prev, mn);
            mn2[j / 2][1] = _mm256_unpackhi_epi16(prev, mn);
        }
    }
}

// Each row's sum of mn_j S_j over one activation row's super-block (S_j the sum of its
// sub-block's 32 activations, |S_j| <= 32 x 127): one vpmaddwd a pair of sub-blocks and half.
static inline void q4k_x16_mins_avx2(const __m256i mn2[4][2], const qb_q8k *a, __m256i msum[2]) {
    int16_t S[8];
    for (int j = 0; j < 8; j++) S[j] = (int16_t)(a->s16[2 * j] + a->s16[2 * j + 1]);
    int32_t pairs[4];
    memcpy(pairs, S, sizeof pairs);
    msum[0] = msum[1] = _mm256_setzero_si256();
    for (int m = 0; m < 4; m++) {
        const __m256i s = _mm256_set1_epi32(pairs[m]);
        for (int h = 0; h < 2; h++) msum[h] = _mm256_add_epi32(msum[h], _mm256_madd_epi16(mn2[m][h], s));
    }
}

// A super-block's float step for half h of a group-block: the products' sum scaled by d, less
// the minimums' scaled by dmin, each times the activation row's scale `ad`.
static inline __m256 q4k_x16_step_avx2(__m256 acc, __m256i isum, __m256i msum, const uint8_t *g, int h, float ad) {
    const __m256 a = _mm256_set1_ps(ad);
    const __m256 dh = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(g + 16 * h)));
    const __m256 mh = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(g + QB_Q4K_X16_DMIN + 16 * h)));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(dh, a), acc);
    return _mm256_fnmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_mul_ps(mh, a), acc);
}

// Without VNNI: rows 0..7 and 8..15 as two 32-byte halves. A sub-block's eight unsigned x
// signed byte products per row (vpmaddubsw, pairs) are summed in 16 bits (at most
// 8 x 2 x 15 x 127 = 30480, no saturation), then scaled by sc_j and summed in pairs by one
// vpmaddwd against (sc_j, sc_j) per row; the minimums' sums come from q4k_x16_mins_avx2.
// R activation rows (2..QB_Q4K_X16_BATCH) at once: each half sub-block is loaded and split
// into nibbles once for all R, and each row's arithmetic is the same whatever R (exact int32
// sums, then the same float operations in the same order), so a row's outputs are bitwise
// what it gets alone from q4_K_x16_avx2, the one-row kernel below (single-sequence decode,
// and a batch's remainder of one row).
static inline __attribute__((always_inline)) void q4_K_x16_avx2_rows(const uint8_t *g, const qb_q8k *const *xs, float *const *ys,
                                                                     int64_t y0, int64_t nb, const int R) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m256 acc[2][QB_Q4K_X16_BATCH];
    for (int h = 0; h < 2; h++)
        for (int k = 0; k < R; k++) acc[h][k] = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++, g += QB_Q4K_X16_BYTES) {
        __m256i sc2[8][2], mn2[4][2], msum[QB_Q4K_X16_BATCH][2];
        q4k_x16_scales_avx2(g, sc2, mn2);
        for (int k = 0; k < R; k++) q4k_x16_mins_avx2(mn2, xs[k] + i, msum[k]);
        for (int h = 0; h < 2; h++) {
            __m256i isum[QB_Q4K_X16_BATCH];
            for (int k = 0; k < R; k++) isum[k] = _mm256_setzero_si256();
            for (int j = 0; j < 8; j++) {
                if (h == 0) x16_prefetch(g, j);
                const uint8_t *q = g + QB_Q4K_X16_QS + 256 * j + 32 * h;
                __m256i wl[4], wh[4];
                for (int t = 0; t < 4; t++) {
                    const __m256i v = _mm256_loadu_si256((const __m256i *)(q + 64 * t));
                    wl[t] = _mm256_and_si256(v, m4);
                    wh[t] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
                }
                // Unrolled, as qb_matvec_tiles.c's x16_rows: the 1B Q4_K_M's eight-row step
                // took 0.95x the time (results/batch-unroll-avx2-2026-12-05-emr/). Unrolling
                // q6_K_x16_avx2_rows' loop too made that step slower, 1.02x.
#pragma clang loop unroll(full)
                for (int k = 0; k < R; k++) {
                    const int8_t *x = xs[k][i].qs + 32 * j;
                    __m256i p = _mm256_setzero_si256();
                    for (int t = 0; t < 4; t++) {
                        p = _mm256_add_epi16(p, _mm256_maddubs_epi16(wl[t], _mm256_set1_epi32(act4(x + 4 * t))));
                        p = _mm256_add_epi16(p, _mm256_maddubs_epi16(wh[t], _mm256_set1_epi32(act4(x + 16 + 4 * t))));
                    }
                    isum[k] = _mm256_add_epi32(isum[k], _mm256_madd_epi16(p, sc2[j][h]));
                }
            }
            for (int k = 0; k < R; k++) acc[h][k] = q4k_x16_step_avx2(acc[h][k], isum[k], msum[k][h], g, h, xs[k][i].d);
        }
    }
    for (int k = 0; k < R; k++) {
        _mm256_storeu_ps(ys[k] + y0, acc[0][k]);
        _mm256_storeu_ps(ys[k] + y0 + 8, acc[1][k]);
    }
}

// One activation row: each row's arithmetic of q4_K_x16_avx2_rows (the same exact int32
// sums, then the same float operations in the same order, so the same outputs), but both
// halves in one pass over the sub-blocks, each activation broadcast serving both
// and each half's vectors split into nibbles as they are used. On Zen 4, against a pass per
// half: 11% more GB/s in L2, two-thread 1B Q4_K_M decode 7-8% faster; streaming one matrix
// alone from memory on one thread, 0.89-0.94x in one hour and 1.08-1.11x in another
// (results/q4k-x16-halves-avx2-zen4-2026-12-02/). With `pf` the kernel's own prefetches
// (x16_prefetch), without far L2 hints only (x16_prefetch_far).
static inline __attribute__((always_inline)) void q4_K_x16_avx2(const uint8_t *g, const qb_q8k *a, float *y, int64_t nb, const int pf) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int64_t i = 0; i < nb; i++, g += QB_Q4K_X16_BYTES) {
        __m256i sc2[8][2], mn2[4][2], msum[2], isum[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
        q4k_x16_scales_avx2(g, sc2, mn2);
        q4k_x16_mins_avx2(mn2, a + i, msum);
        for (int j = 0; j < 8; j++) {
            if (pf) x16_prefetch(g, j);
            else x16_prefetch_far(g, j);
            const uint8_t *q = g + QB_Q4K_X16_QS + 256 * j;
            const int8_t *x = a[i].qs + 32 * j;
            __m256i p[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
            for (int t = 0; t < 4; t++) {
                const __m256i v[2] = {_mm256_loadu_si256((const __m256i *)(q + 64 * t)),
                                      _mm256_loadu_si256((const __m256i *)(q + 64 * t + 32))};
                const __m256i xl = _mm256_set1_epi32(act4(x + 4 * t)), xh = _mm256_set1_epi32(act4(x + 16 + 4 * t));
                for (int h = 0; h < 2; h++) p[h] = _mm256_add_epi16(p[h], _mm256_maddubs_epi16(_mm256_and_si256(v[h], m4), xl));
                for (int h = 0; h < 2; h++)
                    p[h] = _mm256_add_epi16(p[h], _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v[h], 4), m4), xh));
            }
            for (int h = 0; h < 2; h++) isum[h] = _mm256_add_epi32(isum[h], _mm256_madd_epi16(p[h], sc2[j][h]));
        }
        for (int h = 0; h < 2; h++) acc[h] = q4k_x16_step_avx2(acc[h], isum[h], msum[h], g, h, a[i].d);
    }
    _mm256_storeu_ps(y, acc[0]);
    _mm256_storeu_ps(y + 8, acc[1]);
}
// The set's multi-row kernel, for the dispatch below.
static inline __attribute__((always_inline)) void q4_K_x16_rows(const uint8_t *g, const qb_q8k *const *xs, float *const *ys, int64_t y0,
                                                               int64_t nb, const int R) {
    if (R == 1) q4_K_x16_avx2(g, xs[0], ys[0] + y0, nb, 1);
    else q4_K_x16_avx2_rows(g, xs, ys, y0, nb, R);
}
#endif

void qb_matvec_q4_k_x16(const void *w, const qb_q8k *x, float *y, int64_t g0, int64_t g1, int64_t cols) {
    int64_t nb = cols / 256;
#if defined(__AVX2__)
    const int pf = qb_stream_prefetch();
#endif
    for (int64_t g = g0; g < g1; g++) {
        const uint8_t *grp = (const uint8_t *)w + g * nb * QB_Q4K_X16_BYTES;
        float *out = y + QB_Q4K_X16_ROWS * g;
#if defined(QB_AVX512)
        if (pf) q4_K_x16_512(grp, x, out, nb, 1);
        else q4_K_x16_512(grp, x, out, nb, 0);
#elif defined(__AVX2__)
        if (pf) q4_K_x16_avx2(grp, x, out, nb, 1);
        else q4_K_x16_avx2(grp, x, out, nb, 0);
#else
        q4_K_x16(grp, x, out, nb);
#endif
    }
}

// ---------------------------------------------------------------------------------------
// Q6_K in the 16-row decode layout (qb_repack.h). Per super-block the row's result is
// d a.d sum_j sc_j (q_j . x_j - 32 S_j), S_j the activations' sum over sub-block j (16
// values), exact in int32 (at most 16 x 32 x 127 x 128 per sub-block, sixteen of them).

#if !defined(__AVX2__)
// The definition, row by row, in those integers. Every set reads the layout; the portable
// set does not repack into it.
static void q6_K_x16(const uint8_t *g, const qb_q8k *a, float *y, int64_t nb) {
    float s[QB_Q6K_X16_ROWS] = {0};
    for (int64_t i = 0; i < nb; i++, g += QB_Q6K_X16_BYTES) {
        for (int r = 0; r < QB_Q6K_X16_ROWS; r++) {
            uint8_t q[256];
            int8_t sc[16];
            const qb_half d = q6k_x16_row(g, r, q, sc);
            int32_t isum = 0;
            for (int j = 0; j < 16; j++) {
                int32_t dot = -32 * a[i].s16[j];
                for (int v = 16 * j; v < 16 * j + 16; v++) dot += q[v] * a[i].qs[v];
                isum += sc[j] * dot;
            }
            s[r] += (float)isum * (h2f(d) * a[i].d);
        }
    }
    memcpy(y, s, sizeof s);
}
#endif

#if defined(__AVX2__)
// The group-block two ahead, seven lines a pair of sub-blocks (as x16_prefetch spreads Q4_K's).
static inline __attribute__((always_inline)) void q6k_x16_prefetch(const uint8_t *g, int p) {
    const char *at = (const char *)g + 2 * QB_Q6K_X16_BYTES + 448 * p;
    for (int l = 0; l < 7; l++) _mm_prefetch(at + 64 * l, _MM_HINT_T0);
    qb_prefetch_l2(g + 448 * p, 7);
}

// Where the stream is left to the hardware prefetcher: the same seven lines into L2 only,
// X16_FAR ahead (as x16_prefetch_far for Q4_K).
static inline __attribute__((always_inline)) void q6k_x16_prefetch_far(const uint8_t *g, int p) {
    for (int l = 0; l < 7; l++) _mm_prefetch((const char *)g + X16_FAR + 448 * p + 64 * l, _MM_HINT_T1);
}
#endif

#if defined(QB_AVX512)
// One vpdpbusd per four values of the 16 rows (their lanes) against a broadcast of four
// activations, each sub-block's sum started at its offset term (-32 S_j) and scaled by the
// rows' sc_j in int32. R activation rows (1..QB_Q4K_X16_BATCH) at once: a pair's eight value
// vectors are assembled once for all R, and each row's arithmetic is the same whatever R
// (exact int32 sums, then one rounding per super-block), so its outputs are bitwise what it
// gets alone. With `pf` the group-block two ahead is prefetched (q6k_x16_prefetch).
static inline __attribute__((always_inline)) void q6_K_x16_512_rows(const uint8_t *g, const qb_q8k *const *xs, float *const *ys,
                                                                    int64_t y0, int64_t nb, const int R, const int pf) {
    __m512 acc[QB_Q4K_X16_BATCH];
    for (int k = 0; k < R; k++) acc[k] = _mm512_setzero_ps();
    for (int64_t i = 0; i < nb; i++, g += QB_Q6K_X16_BYTES) {
        __m512i isum[QB_Q4K_X16_BATCH];
        for (int k = 0; k < R; k++) isum[k] = _mm512_setzero_si512();
        for (int p = 0; p < 8; p++) {
            if (pf) q6k_x16_prefetch(g, p);
            __m512i v[8];
            q6k_x16_values_512(g + q6k_x16_qs(p), v);
            for (int h = 0; h < 2; h++) {
                const int j = 2 * p + h;
                const __m512i sc = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(g + q6k_x16_sc(j))));
                for (int k = 0; k < R; k++) {
                    const int8_t *x = xs[k][i].qs + 16 * j;
                    __m512i sum = _mm512_set1_epi32(-32 * xs[k][i].s16[j]);
                    for (int t = 0; t < 4; t++) sum = _mm512_dpbusd_epi32(sum, v[4 * h + t], _mm512_set1_epi32(act4(x + 4 * t)));
                    isum[k] = _mm512_add_epi32(isum[k], _mm512_mullo_epi32(sum, sc));
                }
            }
        }
        const __m512 dh = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)g));
        for (int k = 0; k < R; k++)
            acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[k]), _mm512_mul_ps(dh, _mm512_set1_ps(xs[k][i].d)), acc[k]);
    }
    for (int k = 0; k < R; k++) _mm512_storeu_ps(ys[k] + y0, acc[k]);
}
#elif defined(__AVX2__)
// Without VNNI: rows 0..7 and 8..15 as two 32-byte halves, as q4_K_x16_avx2_rows takes
// Q4_K's. Two steps' pairs of products (vpmaddubsw) are summed in 16 bits (at most
// 2 x 2 x 63 x 127 = 32004, no saturation), then scaled by sc_j and summed in pairs by one
// vpmaddwd against (sc_j, sc_j) per row. The offset term takes one vpmaddwd per pair of
// sub-blocks: the rows' (sc_2p, sc_2p+1) against (S_2p, S_2p+1). R activation rows
// (1..QB_Q4K_X16_BATCH) at once, each row's arithmetic the same whatever R, so its outputs
// are bitwise what it gets alone. With `pf` the group-block two ahead is prefetched
// (q6k_x16_prefetch), without each line only into L2, far ahead (q6k_x16_prefetch_far).
static inline __attribute__((always_inline)) void q6_K_x16_avx2_rows(const uint8_t *g, const qb_q8k *const *xs, float *const *ys,
                                                                     int64_t y0, int64_t nb, const int R, const int pf) {
    const __m256i first = lane_low16_twice(), second = _mm256_add_epi8(first, _mm256_set1_epi8(2));
    __m256 acc[2][QB_Q4K_X16_BATCH];
    for (int h = 0; h < 2; h++)
        for (int k = 0; k < R; k++) acc[h][k] = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++, g += QB_Q6K_X16_BYTES) {
        __m256i isum[2][QB_Q4K_X16_BATCH], off[2][QB_Q4K_X16_BATCH];
        for (int h = 0; h < 2; h++)
            for (int k = 0; k < R; k++) isum[h][k] = off[h][k] = _mm256_setzero_si256();
        for (int p = 0; p < 8; p++) {
            if (pf) q6k_x16_prefetch(g, p);
            else q6k_x16_prefetch_far(g, p);
            for (int h = 0; h < 2; h++) {
                __m256i v[8];
                q6k_x16_values_256(g + q6k_x16_qs(p) + 32 * h, v);
                const __m128i s0 = _mm_loadl_epi64((const __m128i *)(g + q6k_x16_sc(2 * p) + 8 * h));
                const __m128i s1 = _mm_loadl_epi64((const __m128i *)(g + q6k_x16_sc(2 * p + 1) + 8 * h));
                const __m256i sc = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(s0, s1));
                const __m256i sa = _mm256_shuffle_epi8(sc, first), sb = _mm256_shuffle_epi8(sc, second);
                for (int k = 0; k < R; k++) {
                    const int8_t *x = xs[k][i].qs + 32 * p;
                    __m256i s = _mm256_setzero_si256();
                    for (int t = 0; t < 4; t += 2) {
                        const __m256i pa = _mm256_add_epi16(_mm256_maddubs_epi16(v[t], _mm256_set1_epi32(act4(x + 4 * t))),
                                                            _mm256_maddubs_epi16(v[t + 1], _mm256_set1_epi32(act4(x + 4 * t + 4))));
                        const __m256i pb = _mm256_add_epi16(_mm256_maddubs_epi16(v[4 + t], _mm256_set1_epi32(act4(x + 16 + 4 * t))),
                                                            _mm256_maddubs_epi16(v[5 + t], _mm256_set1_epi32(act4(x + 20 + 4 * t))));
                        s = _mm256_add_epi32(s, _mm256_add_epi32(_mm256_madd_epi16(pa, sa), _mm256_madd_epi16(pb, sb)));
                    }
                    isum[h][k] = _mm256_add_epi32(isum[h][k], s);
                    int32_t pair;  // (S_2p, S_2p+1), adjacent int16
                    memcpy(&pair, xs[k][i].s16 + 2 * p, 4);
                    off[h][k] = _mm256_add_epi32(off[h][k], _mm256_madd_epi16(sc, _mm256_set1_epi32(pair)));
                }
            }
        }
        for (int h = 0; h < 2; h++) {
            const __m256 dh = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(g + 16 * h)));
            for (int k = 0; k < R; k++) {
                const __m256i is = _mm256_sub_epi32(isum[h][k], _mm256_slli_epi32(off[h][k], 5));
                acc[h][k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(is), _mm256_mul_ps(dh, _mm256_set1_ps(xs[k][i].d)), acc[h][k]);
            }
        }
    }
    for (int k = 0; k < R; k++) {
        _mm256_storeu_ps(ys[k] + y0, acc[0][k]);
        _mm256_storeu_ps(ys[k] + y0 + 8, acc[1][k]);
    }
}
#endif

void qb_matvec_q6_k_x16(const void *w, const qb_q8k *x, float *y, int64_t g0, int64_t g1, int64_t cols) {
    const int64_t nb = cols / 256;
#if defined(__AVX2__)
    const int pf = qb_stream_prefetch();
#endif
    for (int64_t g = g0; g < g1; g++) {
        const uint8_t *grp = (const uint8_t *)w + g * nb * QB_Q6K_X16_BYTES;
        float *out = y + QB_Q6K_X16_ROWS * g;
#if defined(QB_AVX512)
        if (pf) q6_K_x16_512_rows(grp, &x, &out, 0, nb, 1, 1);
        else q6_K_x16_512_rows(grp, &x, &out, 0, nb, 1, 0);
#elif defined(__AVX2__)
        if (pf) q6_K_x16_avx2_rows(grp, &x, &out, 0, nb, 1, 1);
        else q6_K_x16_avx2_rows(grp, &x, &out, 0, nb, 1, 0);
#else
        q6_K_x16(grp, x, out, nb);
#endif
    }
}

// Whether the set has a multi-row kernel for this type's sixteen-row groups.
static inline int x16_batched(int32_t type) {
#if defined(__AVX2__)
    return type == QB_Q4_K || type == QB_Q6_K;
#else
    (void)type;
    return 0;
#endif
}

#if defined(__AVX2__)
// R activation rows against one group of `type` (Q4_K or Q6_K).
static inline __attribute__((always_inline)) void x16_rows_r(int32_t type, const uint8_t *g, const qb_q8k *const *xs,
                                                            float *const *ys, int64_t y0, int64_t nb, const int R) {
#if defined(QB_AVX512)
    if (type == QB_Q6_K) return q6_K_x16_512_rows(g, xs, ys, y0, nb, R, 1);
#else
    if (type == QB_Q6_K) return q6_K_x16_avx2_rows(g, xs, ys, y0, nb, R, 1);
#endif
    q4_K_x16_rows(g, xs, ys, y0, nb, R);
}
#endif

// Batched decode over the sixteen-row groups of Q4_K or Q6_K (qb_matvec_q4_k_x16_rows,
// qb_matvec_q6_k_x16_rows).
static void x16_matvec_rows(int32_t type, const void *w, const qb_q8k *const *xs, float *const *ys, int64_t n, int64_t g0,
                            int64_t g1, int64_t cols) {
    const int64_t nb = cols / 256, bytes = type == QB_Q6_K ? QB_Q6K_X16_BYTES : QB_Q4K_X16_BYTES;
    for (int64_t g = g0; g < g1; g++) {
        const uint8_t *grp = (const uint8_t *)w + g * nb * bytes;
        const int64_t y0 = QB_Q4K_X16_ROWS * g;
#if defined(__AVX2__)
        if (x16_batched(type)) {
            for (int64_t i = 0; i < n; i += QB_Q4K_X16_BATCH) {
                switch (n - i < QB_Q4K_X16_BATCH ? n - i : QB_Q4K_X16_BATCH) {
                case 8: x16_rows_r(type, grp, xs + i, ys + i, y0, nb, 8); break;
                case 7: x16_rows_r(type, grp, xs + i, ys + i, y0, nb, 7); break;
                case 6: x16_rows_r(type, grp, xs + i, ys + i, y0, nb, 6); break;
                case 5: x16_rows_r(type, grp, xs + i, ys + i, y0, nb, 5); break;
                case 4: x16_rows_r(type, grp, xs + i, ys + i, y0, nb, 4); break;
                case 3: x16_rows_r(type, grp, xs + i, ys + i, y0, nb, 3); break;
                case 2: x16_rows_r(type, grp, xs + i, ys + i, y0, nb, 2); break;
                default: x16_rows_r(type, grp, xs + i, ys + i, y0, nb, 1); break;
                }
            }
            continue;
        }
#endif
        // One row at a time over the group while it is in cache.
        for (int64_t i = 0; i < n; i++) {
            if (type == QB_Q6_K) qb_matvec_q6_k_x16(w, xs[i], ys[i], g, g + 1, cols);
            else qb_matvec_q4_k_x16(w, xs[i], ys[i], g, g + 1, cols);
        }
    }
}

void qb_matvec_q4_k_x16_rows(const void *w, const qb_q8k *const *xs, float *const *ys, int64_t n, int64_t g0, int64_t g1,
                             int64_t cols) {
    x16_matvec_rows(QB_Q4_K, w, xs, ys, n, g0, g1, cols);
}

void qb_matvec_q6_k_x16_rows(const void *w, const qb_q8k *const *xs, float *const *ys, int64_t n, int64_t g0, int64_t g1,
                             int64_t cols) {
    x16_matvec_rows(QB_Q6_K, w, xs, ys, n, g0, g1, cols);
}

// One row by the kernel set's best code, or by the portable C versions.
static inline float kquant_row(int32_t type, const void *row, const qb_q8k *x, int64_t nb, int portable) {
    if (portable) {
        switch (type) {
        case QB_Q2_K: return q2_K_q8k(row, x, nb);
        case QB_Q3_K: return q3_K_q8k(row, x, nb);
        case QB_Q4_K: return q4_K_q8k(row, x, nb);
        case QB_Q5_K: return q5_K_q8k(row, x, nb);
        case QB_Q6_K: return q6_K_q8k(row, x, nb);
        case QB_IQ4_XS: return iq4_xs_q8k(row, x, nb);
        default: return NAN;
        }
    }
    switch (type) {
#if defined(QB_AVX512)
    case QB_Q2_K: return q2_K_q8k_512(row, x, nb);
    case QB_Q3_K: return q3_K_q8k_512(row, x, nb);
    case QB_Q4_K: return q4_K_q8k_512(row, x, nb);
    case QB_Q5_K: return q5_K_q8k_512(row, x, nb);
    case QB_Q6_K: return q6_K_q8k_512(row, x, nb);
    case QB_IQ4_XS: return iq4_xs_q8k_512(row, x, nb);
#elif defined(__AVX2__)
    case QB_Q2_K: return q2_K_q8k_avx2(row, x, nb);
    case QB_Q3_K: return q3_K_q8k_avx2(row, x, nb);
    case QB_Q4_K: return q4_K_q8k_avx2(row, x, nb);
    case QB_Q5_K: return q5_K_q8k_avx2(row, x, nb);
    case QB_Q6_K: return q6_K_q8k_avx2(row, x, nb);
    case QB_IQ4_XS: return iq4_xs_q8k_avx2(row, x, nb);
#endif
    default: return kquant_row(type, row, x, nb, 1);
    }
}

void qb_matvec_kquant(int32_t type, const void *w, const qb_q8k *x, float *y, int64_t r0, int64_t r1, int64_t cols) {
    int64_t nb = cols / 256, row_bytes = nb * qb_block_bytes(type);
    for (int64_t r = r0; r < r1; r++) y[r] = kquant_row(type, (const uint8_t *)w + r * row_bytes, x, nb, 0);
}

#if defined(__AVX2__)
// R activation rows (1..KQ_BATCH) against one row of `type` (a super-block format) by the
// set's multi-row kernel.
static inline __attribute__((always_inline)) void kquant_rows_r(int32_t type, const uint8_t *row, const qb_q8k *const *xs, float *out,
                                                               int64_t nb, const int R) {
    switch (type) {
    case QB_Q4_K: k45_rows(row, 0, xs, out, nb, R); break;
    case QB_Q5_K: k45_rows(row, 1, xs, out, nb, R); break;
    case QB_Q6_K: q6_K_rows((const block_q6_K *)row, xs, out, nb, R); break;
    default: iq4_xs_rows((const block_iq4_xs *)row, xs, out, nb, R); break;
    }
}
#endif

void qb_matvec_kquant_rows(int32_t type, const void *w, const qb_q8k *const *xs, float *const *ys, int64_t n, int64_t r0,
                           int64_t r1, int64_t cols) {
    int64_t nb = cols / 256, row_bytes = nb * qb_block_bytes(type);
    for (int64_t r = r0; r < r1; r++) {
        const uint8_t *row = (const uint8_t *)w + r * row_bytes;
#if defined(__AVX2__)
        if (type == QB_Q4_K || type == QB_Q5_K || type == QB_Q6_K || type == QB_IQ4_XS) {
            for (int64_t i = 0; i < n; i += KQ_BATCH) {
                float out[KQ_BATCH];
                const int m = n - i < KQ_BATCH ? (int)(n - i) : KQ_BATCH;
                switch (m) {
                case 4: kquant_rows_r(type, row, xs + i, out, nb, 4); break;
                case 3: kquant_rows_r(type, row, xs + i, out, nb, 3); break;
                case 2: kquant_rows_r(type, row, xs + i, out, nb, 2); break;
                default: kquant_rows_r(type, row, xs + i, out, nb, 1); break;
                }
                for (int k = 0; k < m; k++) ys[i + k][r] = out[k];
            }
            continue;
        }
#endif
        // One activation row at a time over the row while it is in cache.
        for (int64_t i = 0; i < n; i++) ys[i][r] = kquant_row(type, row, xs[i], nb, 0);
    }
}

float qb_dot_kquant_portable(int32_t type, const void *w, const qb_q8k *x, int64_t cols) {
    return kquant_row(type, w, x, cols / 256, 1);
}
