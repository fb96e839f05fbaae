// Decode products of GGML-format rows with 32-value blocks (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
// IQ4_NL) with activations quantized per 32 values (q8a). The scalar code is the definition;
// the AVX2 paths are the fast ones (Q4_1 ran the scalar loop, 30% of the read probe in
// decode, until 2026-11-28).
#include "qb_dot_ggml.h"
#include "qb_blocks.h"
#include <math.h>
#include <string.h>

// Rounding must match GGML's and MLX's own code: a product, then a sum, each rounded (no
// fused multiply-add). The fast paths use explicit FMA intrinsics.
#pragma clang fp contract(off)

// ---------------------------------------------------------------------------------------
// Dot products of one weight row with quantized activations.

// Q4_0 and IQ4_NL (the same block: a f16 scale, 16 bytes of nibbles): each nibble's value is
// table[nibble] (Q4_0's nibble - 8, IQ4_NL's kvalues_iq4nl), one byte shuffle on AVX2; the
// signed values meet the activations as Q8_0's do.
static const int8_t q4_0_values[16] = {-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7};

static float dot_nibble_table(const block_q4_0 *w, const int8_t table[16], const qb_q8a *a, int64_t nb) {
#if defined(__AVX2__)
    const __m256i values = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)table));
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        __m256i q = _mm256_shuffle_epi8(values, nibbles_lo_hi(w[i].qs));
        __m256i p = dot_s8(q, _mm256_loadu_si256((const __m256i *)a[i].qs));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(h2f(w[i].d) * a[i].d), acc);
    }
    return hsum_ps(acc);
#else
    float s = 0;
    for (int64_t i = 0; i < nb; i++) {
        int sum = 0;
        for (int j = 0; j < 16; j++) sum += table[w[i].qs[j] & 0xF] * a[i].qs[j] + table[w[i].qs[j] >> 4] * a[i].qs[j + 16];
        s += h2f(w[i].d) * a[i].d * sum;
    }
    return s;
#endif
}

static float dot_q8_0(const block_q8_0 *w, const qb_q8a *a, int64_t nb) {
#if defined(__AVX2__)
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        __m256i p = dot_s8(_mm256_loadu_si256((const __m256i *)w[i].qs), _mm256_loadu_si256((const __m256i *)a[i].qs));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(h2f(w[i].d) * a[i].d), acc);
    }
    return hsum_ps(acc);
#else
    float s = 0;
    for (int64_t i = 0; i < nb; i++) {
        int sum = 0;
        for (int j = 0; j < QK; j++) sum += w[i].qs[j] * a[i].qs[j];
        s += h2f(w[i].d) * a[i].d * sum;
    }
    return s;
#endif
}

static float dot_q4_1(const block_q4_1 *w, const qb_q8a *a, int64_t nb) {
#if defined(__AVX2__)
    __m256 acc = _mm256_setzero_ps();
    float off = 0;
    for (int64_t i = 0; i < nb; i++) {
        __m256i p = dot_u8(nibbles_lo_hi(w[i].qs), _mm256_loadu_si256((const __m256i *)a[i].qs));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(h2f(w[i].d) * a[i].d), acc);
        off += h2f(w[i].m) * a[i].s;
    }
    return hsum_ps(acc) + off;
#else
    float s = 0;
    for (int64_t i = 0; i < nb; i++) {
        int sum = 0;
        for (int j = 0; j < 16; j++) sum += (w[i].qs[j] & 0xF) * a[i].qs[j] + (w[i].qs[j] >> 4) * a[i].qs[j + 16];
        s += h2f(w[i].d) * a[i].d * sum + h2f(w[i].m) * a[i].s;
    }
    return s;
#endif
}

#if defined(__AVX2__)
// A Q5_0/Q5_1 block's products with its activations, (value - `offset`) x activation summed
// to 8 int32 lanes (exact). The values (0..31) are unsigned for vpmaddubsw, pairs of products
// fit 16 bits (2 x 31 x 127), and Q5_0's offset comes off in the same lanes.
static inline __m256i q5_products(const uint8_t qh[4], const uint8_t qs[16], const int8_t *xq, int offset) {
    uint32_t bits;
    memcpy(&bits, qh, 4);
    __m256i u = _mm256_or_si256(nibbles_lo_hi(qs), q5_fifth_bits(bits));
    __m256i x = _mm256_loadu_si256((const __m256i *)xq);
    __m256i p = _mm256_maddubs_epi16(u, x);
    if (offset) p = _mm256_sub_epi16(p, _mm256_maddubs_epi16(_mm256_set1_epi8((char)offset), x));
    return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}
#endif

static float dot_q5_0(const block_q5_0 *w, const qb_q8a *a, int64_t nb) {
#if defined(__AVX2__)
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        __m256i p = q5_products(w[i].qh, w[i].qs, a[i].qs, 16);
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(h2f(w[i].d) * a[i].d), acc);
    }
    return hsum_ps(acc);
#else
    float s = 0;
    for (int64_t i = 0; i < nb; i++) {
        uint32_t qh;
        memcpy(&qh, w[i].qh, 4);
        int sum = 0;
        for (int j = 0; j < 16; j++) {
            int h0 = ((qh >> j) << 4) & 0x10, h1 = (qh >> (j + 12)) & 0x10;
            sum += (((w[i].qs[j] & 0xF) | h0) - 16) * a[i].qs[j] + (((w[i].qs[j] >> 4) | h1) - 16) * a[i].qs[j + 16];
        }
        s += h2f(w[i].d) * a[i].d * sum;
    }
    return s;
#endif
}

static float dot_q5_1(const block_q5_1 *w, const qb_q8a *a, int64_t nb) {
#if defined(__AVX2__)
    __m256 acc = _mm256_setzero_ps();
    float off = 0;
    for (int64_t i = 0; i < nb; i++) {
        __m256i p = q5_products(w[i].qh, w[i].qs, a[i].qs, 0);
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(h2f(w[i].d) * a[i].d), acc);
        off += h2f(w[i].m) * a[i].s;
    }
    return hsum_ps(acc) + off;
#else
    float s = 0;
    for (int64_t i = 0; i < nb; i++) {
        uint32_t qh;
        memcpy(&qh, w[i].qh, 4);
        int sum = 0;
        for (int j = 0; j < 16; j++) {
            int h0 = ((qh >> j) << 4) & 0x10, h1 = (qh >> (j + 12)) & 0x10;
            sum += ((w[i].qs[j] & 0xF) | h0) * a[i].qs[j] + ((w[i].qs[j] >> 4) | h1) * a[i].qs[j + 16];
        }
        s += h2f(w[i].d) * a[i].d * sum + h2f(w[i].m) * a[i].s;
    }
    return s;
#endif
}


#if defined(__AVX2__)
// Two Q4_0 rows against the same activations: the nibbles are used unsigned (0..15) and
// the -8 offset is taken out afterwards with the activations' block sums, which saves the
// sign juggling a signed product needs; sharing each activation load between two rows
// halves the activation traffic.
static void q4_0_two_rows(const block_q4_0 *w0, const block_q4_0 *w1, const qb_q8a *a, int64_t nb, float *y0, float *y1) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    float off0 = 0, off1 = 0;
    for (int64_t i = 0; i < nb; i++) {
        __m256i x = _mm256_loadu_si256((const __m256i *)a[i].qs);
        float d0 = h2f(w0[i].d), d1 = h2f(w1[i].d), dx = a[i].d;
        __m256 p0 = _mm256_cvtepi32_ps(dot_u8(nibbles_lo_hi(w0[i].qs), x));
        __m256 p1 = _mm256_cvtepi32_ps(dot_u8(nibbles_lo_hi(w1[i].qs), x));
        acc0 = _mm256_fmadd_ps(p0, _mm256_set1_ps(d0 * dx), acc0);
        acc1 = _mm256_fmadd_ps(p1, _mm256_set1_ps(d1 * dx), acc1);
        off0 += d0 * a[i].s;
        off1 += d1 * a[i].s;
    }
    *y0 = hsum_ps(acc0) - 8 * off0;
    *y1 = hsum_ps(acc1) - 8 * off1;
}
#endif


void qb_matvec_ggml(int32_t type, const void *w, const qb_q8a *x, float *y, int64_t r0, int64_t r1, int64_t cols) {
    int64_t bs = qb_block_size(type), bb = qb_block_bytes(type);
    if (bs <= 1) return;
    int64_t nb = cols / bs, row_bytes = nb * bb;
#if defined(__AVX2__)
    if (type == QB_Q4_0) {
        for (; r0 + 1 < r1; r0 += 2) {
            const block_q4_0 *a = (const block_q4_0 *)((const uint8_t *)w + r0 * row_bytes);
            q4_0_two_rows(a, a + nb, x, nb, y + r0, y + r0 + 1);
        }
    }
#endif
    for (int64_t r = r0; r < r1; r++) {
        const void *row = (const uint8_t *)w + r * row_bytes;
        float v = 0;
        switch (type) {
        case QB_Q4_0: v = dot_nibble_table(row, q4_0_values, x, nb); break;
        case QB_Q4_1: v = dot_q4_1(row, x, nb); break;
        case QB_Q5_0: v = dot_q5_0(row, x, nb); break;
        case QB_Q5_1: v = dot_q5_1(row, x, nb); break;
        case QB_Q8_0: v = dot_q8_0(row, x, nb); break;
        case QB_IQ4_NL: v = dot_nibble_table(row, kvalues_iq4nl, x, nb); break;  // block_q4_0's layout
        default: v = NAN; break; // K-quants and IQ4_XS take q8k activations: qb_matvec_kquant
        }
        y[r] = v;
    }
}
