// Activations quantized for integer dot products: q8a (per 32 values, every format but
// Q4_K and Q6_K, and prefill), q8k (per 256 values, GGML's Q8_K, for Q4_K and Q6_K) and q8s
// (per 256 values with a power-of-two step per 32: the vector sets' Q4_K prefill).
#include "qb_activation.h"
#include "qb_formats.h"
#include "qb_blocks.h"
#include <math.h>
#include <string.h>

// Rounding must match GGML's and MLX's own code: a product, then a sum, each rounded (no
// fused multiply-add). The fast paths use explicit FMA intrinsics.
#pragma clang fp contract(off)

void qb_q8a_offsets(const qb_q8a *x, int64_t blocks, int32_t width, int32_t k, int32_t *offs) {
    int64_t b = 0;
#if defined(__AVX2__)
    // The loop below as compiled took ~28 cycles a block: each prefill product runs it over
    // every activation row (a third of the activations' quantizing time). Here the bytes,
    // biased by 128 to unsigned, are summed eight at a time by vpsadbw.
    if (width == 32 || width == 16) {
        const __m256i bias = _mm256_set1_epi8((char)0x80);
        for (; b < blocks; b++) {
            __m256i s = _mm256_sad_epu8(_mm256_xor_si256(_mm256_loadu_si256((const __m256i *)x[b].qs), bias), _mm256_setzero_si256());
            __m128i lo = _mm256_castsi256_si128(s), hi = _mm256_extracti128_si256(s, 1);
            int32_t s0 = _mm_cvtsi128_si32(_mm_add_epi64(lo, _mm_unpackhi_epi64(lo, lo))) - 16 * 128;
            int32_t s1 = _mm_cvtsi128_si32(_mm_add_epi64(hi, _mm_unpackhi_epi64(hi, hi))) - 16 * 128;
            if (width == 32) *offs++ = k * (s0 + s1);
            else *offs++ = k * s0, *offs++ = k * s1;
        }
    }
#endif
    for (; b < blocks; b++)
        for (int j0 = 0; j0 < 32; j0 += width) {
            int32_t s = 0;
            for (int j = j0; j < j0 + width; j++) s += x[b].qs[j];
            *offs++ = k * s;
        }
}

// ---------------------------------------------------------------------------------------
// Activations: round-to-nearest int8 per 32 values, scale = max|x| / 127.

#if defined(QB_AVX512)
// 16 values scaled by `id`, rounded to nearest even (the default rounding mode, as lrintf),
// stored as int8; returns their sum.
static inline __m512i round16(__m512 v, __m512 id, int8_t *out) {
    __m512i q = _mm512_cvtps_epi32(_mm512_mul_ps(v, id));
    _mm_storeu_si128((__m128i *)out, _mm512_cvtsepi32_epi8(q));
    return q;
}
#elif defined(__AVX2__)
// The same for 32 values on 8-float vectors (the scalar loops' lrintf is a libm call per
// value: 7% of an AVX2 prefill). Values are within +-127, so the saturating packs never
// saturate; packs work per 128-bit lane, so their dwords come out in the order 0,4,1,5,...
static inline __m256i round32(const float *v, __m256 id, int8_t *out) {
    __m256i q[4];
    for (int k = 0; k < 4; k++) q[k] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(v + 8 * k), id));
    __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
    _mm256_storeu_si256((__m256i *)out, _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
    return _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
}

// The sum of a vector's eight int32 lanes.
static inline int32_t hsum_epi32(__m256i t) {
    __m128i t4 = _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
    t4 = _mm_add_epi32(t4, _mm_shuffle_epi32(t4, 0x4E));
    t4 = _mm_add_epi32(t4, _mm_shuffle_epi32(t4, 0xB1));
    return _mm_cvtsi128_si32(t4);
}
#endif

// max |v[j]| over 32 values, on the set's vectors.
static inline float amax32(const float *v) {
#if defined(QB_AVX512)
    const __m512 absmask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
    return _mm512_reduce_max_ps(_mm512_max_ps(_mm512_and_ps(_mm512_loadu_ps(v), absmask),
                                              _mm512_and_ps(_mm512_loadu_ps(v + 16), absmask)));
#elif defined(__AVX2__)
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256 m = _mm256_setzero_ps();
    for (int j = 0; j < 32; j += 8) m = _mm256_max_ps(m, _mm256_and_ps(_mm256_loadu_ps(v + j), absmask));
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    return _mm_cvtss_f32(_mm_max_ss(m4, _mm_movehdup_ps(m4)));
#else
    float m = 0;
    for (int j = 0; j < 32; j++) m = fmaxf(m, fabsf(v[j]));
    return m;
#endif
}

// 32 values scaled by `id` and rounded to nearest even into q; returns their sum. The
// vector paths give the scalar loop's bytes (lrintf is a libm call per value: 7% of an AVX2
// prefill; a decode step quantizes every matrix's input on one thread while the others wait).
static inline int32_t round_sum32(const float *v, float id, int8_t *q) {
#if defined(QB_AVX512)
    const __m512 idv = _mm512_set1_ps(id);
    return _mm512_reduce_add_epi32(_mm512_add_epi32(round16(_mm512_loadu_ps(v), idv, q), round16(_mm512_loadu_ps(v + 16), idv, q + 16)));
#elif defined(__AVX2__)
    return hsum_epi32(round32(v, _mm256_set1_ps(id), q));
#else
    int32_t sum = 0;
    for (int j = 0; j < 32; j++) {
        q[j] = (int8_t)lrintf(v[j] * id);
        sum += q[j];
    }
    return sum;
#endif
}

void qb_quantize_q8a(const float *x, qb_q8a *y, int64_t n) {
    for (int64_t i = 0; i < n / QK; i++) {
        float d = amax32(x + i * QK) / 127.0f, id = d != 0 ? 1.0f / d : 0;
        const int32_t sum = round_sum32(x + i * QK, id, y[i].qs);
        y[i].d = d;
        y[i].s = d * (float)sum;
    }
}

int32_t qb_activation_block(int32_t type) { return qb_block_size(type) == 256 ? 256 : 32; }

void qb_quantize_q8k(const float *x, qb_q8k *y, int64_t n) {
    for (int64_t i = 0; i < n / 256; i++) {
        const float *v = x + 256 * i;
        float amax = 0;
        for (int j = 0; j < 256; j += 32) amax = fmaxf(amax, amax32(v + j));
        float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0;
        for (int j = 0; j < 256; j += 32) (void)round_sum32(v + j, id, y[i].qs + j);
        for (int g = 0; g < 16; g++) {
            int sum = 0;
            for (int j = 0; j < 16; j++) sum += y[i].qs[16 * g + j];
            y[i].s16[g] = (int16_t)sum;
        }
        // A 64-byte load of Q4_K quants holds sub-blocks 4k and 4k + 2 in its low nibbles and
        // 4k + 1 and 4k + 3 in its high ones.
        for (int k = 0; k < 2; k++) {
            const int8_t *src = y[i].qs + 128 * k;
            int8_t *dst = y[i].qs_q4k + 128 * k;
            memcpy(dst, src, 32);
            memcpy(dst + 32, src + 64, 32);
            memcpy(dst + 64, src + 32, 32);
            memcpy(dst + 96, src + 96, 32);
        }
        y[i].d = d;
    }
}

void qb_quantize_q8s(const float *x, qb_q8s *y, int64_t n) {
    for (int64_t i = 0; i < n / 256; i++) {
        const float *v = x + 256 * i;
        float amax_j[8], amax = 0;
        for (int j = 0; j < 8; j++) {
            amax_j[j] = amax32(v + 32 * j);
            amax = fmaxf(amax, amax_j[j]);
        }
        float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0;
        for (int j = 0; j < 8; j++) {
            // Powers of two scale exactly: x x (id x 2^k) rounds as (x x id) x 2^k would.
            int k = 0;
            while (k < 3 && amax_j[j] * (float)(2 << k) <= amax) k++;
            const float idj = id * (float)(1 << k);
            const int32_t sum = round_sum32(v + 32 * j, idj, y[i].qs + 32 * j);
            y[i].shift[j] = 3 - k;
            y[i].sums[j] = (int16_t)(sum * (1 << (3 - k)));
        }
        y[i].d = d / 8;
    }
}
