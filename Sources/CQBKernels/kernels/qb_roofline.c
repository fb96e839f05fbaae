// Ceiling measurements. Each kernel keeps many independent dependency chains in flight
// so it is limited by the execution units (or memory), not by instruction latency.
#include "qb_roofline.h"
#if defined(__AVX2__)
#include <immintrin.h>
#endif

uint64_t qb_read_bandwidth_kernel(const void *p, int64_t bytes) {
#if defined(__AVX512F__)
    // 64-byte loads with a software prefetch ahead of the stream, as the decode kernels do:
    // the hardware prefetcher alone leaves bandwidth unused, and a ceiling the kernels beat
    // is no ceiling.
    const __m512i *v = (const __m512i *)p;
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t i = 0; i < bytes / 64; i += 4) {
        for (int l = 0; l < 4; l++) _mm_prefetch((const char *)(v + i) + 4096 + 64 * l, _MM_HINT_T0);
        a0 = _mm512_xor_si512(a0, _mm512_load_si512(v + i + 0));
        a1 = _mm512_xor_si512(a1, _mm512_load_si512(v + i + 1));
        a2 = _mm512_xor_si512(a2, _mm512_load_si512(v + i + 2));
        a3 = _mm512_xor_si512(a3, _mm512_load_si512(v + i + 3));
    }
    a0 = _mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a2, a3));
    return (uint64_t)_mm_extract_epi64(_mm512_castsi512_si128(a0), 0);
#elif defined(__AVX2__)
    const __m256i *v = (const __m256i *)p;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    for (int64_t i = 0; i < bytes / 32; i += 8) {
        for (int l = 0; l < 4; l++) _mm_prefetch((const char *)(v + i) + 4096 + 64 * l, _MM_HINT_T0);
        a0 = _mm256_xor_si256(a0, _mm256_load_si256(v + i + 0));
        a1 = _mm256_xor_si256(a1, _mm256_load_si256(v + i + 1));
        a2 = _mm256_xor_si256(a2, _mm256_load_si256(v + i + 2));
        a3 = _mm256_xor_si256(a3, _mm256_load_si256(v + i + 3));
        a4 = _mm256_xor_si256(a4, _mm256_load_si256(v + i + 4));
        a5 = _mm256_xor_si256(a5, _mm256_load_si256(v + i + 5));
        a6 = _mm256_xor_si256(a6, _mm256_load_si256(v + i + 6));
        a7 = _mm256_xor_si256(a7, _mm256_load_si256(v + i + 7));
    }
    a0 = _mm256_xor_si256(_mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3)),
                          _mm256_xor_si256(_mm256_xor_si256(a4, a5), _mm256_xor_si256(a6, a7)));
    return (uint64_t)_mm256_extract_epi64(a0, 0) ^ (uint64_t)_mm256_extract_epi64(a0, 3);
#else
    const uint64_t *v = (const uint64_t *)p;
    uint64_t s = 0;
    for (int64_t i = 0; i < bytes / 8; i++) s ^= v[i];
    return s;
#endif
}

double qb_fma_peak_kernel(int64_t iterations, float *sink) {
#if defined(__AVX512F__)
    // 64-byte FMAs: on cores with full-width AVX-512 units they do twice the work of two
    // 32-byte ones, and the ceiling must be the widest the machine has.
    __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
    __m512 a[12];
    for (int k = 0; k < 12; k++) a[k] = _mm512_set1_ps((float)k);
    for (int64_t i = 0; i < iterations; i++)
        for (int k = 0; k < 12; k++) a[k] = _mm512_fmadd_ps(a[k], m, c);
    __m512 s = a[0];
    for (int k = 1; k < 12; k++) s = _mm512_add_ps(s, a[k]);
    _mm256_storeu_ps(sink, _mm512_castps512_ps256(s));
    return (double)iterations * 12 * 16 * 2;
#elif defined(__AVX2__)
    __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
    __m256 a[12];
    for (int k = 0; k < 12; k++) a[k] = _mm256_set1_ps((float)k);
    for (int64_t i = 0; i < iterations; i++)
        for (int k = 0; k < 12; k++) a[k] = _mm256_fmadd_ps(a[k], m, c);
    __m256 s = a[0];
    for (int k = 1; k < 12; k++) s = _mm256_add_ps(s, a[k]);
    _mm256_storeu_ps(sink, s);
    return (double)iterations * 12 * 8 * 2;
#else
    float a[8] = {0};
    for (int64_t i = 0; i < iterations; i++)
        for (int k = 0; k < 8; k++) a[k] = a[k] * 0.999999f + 1e-7f;
    for (int k = 0; k < 8; k++) sink[k] = a[k];
    return (double)iterations * 8 * 2;
#endif
}

double qb_int8_peak_kernel(int64_t iterations, int32_t *sink) {
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
    // The instruction the prefill kernels use: vpdpbusd on 64 bytes.
    __m512i y = _mm512_set1_epi8(-2);
    __m512i a[12];
    for (int k = 0; k < 12; k++) a[k] = _mm512_set1_epi32(k);
    for (int64_t i = 0; i < iterations; i++)
        for (int k = 0; k < 12; k++) a[k] = _mm512_dpbusd_epi32(a[k], a[k], y);
    __m512i s = a[0];
    for (int k = 1; k < 12; k++) s = _mm512_add_epi32(s, a[k]);
    _mm256_storeu_si256((__m256i *)sink, _mm512_castsi512_si256(s));
    return (double)iterations * 12 * 64 * 2;
#elif defined(__AVX2__)
    // The pair the 4- and 5-bit prefill kernels issue per 32 products: vpmaddubsw and a
    // 16-bit add. Until 2026-11-30 this also widened every product with vpmaddwd, the
    // exact 8-bit rate, which the 4-bit kernels pass (up to 1.15x it alone): not a ceiling.
    // Each chain feeds its own accumulator back in as the unsigned operand, so nothing is
    // loop-invariant and the compiler cannot hoist the products.
    __m256i y = _mm256_set1_epi8(-2);
    __m256i a[12];
    for (int k = 0; k < 12; k++) a[k] = _mm256_set1_epi32(k);
    for (int64_t i = 0; i < iterations; i++)
        for (int k = 0; k < 12; k++) a[k] = _mm256_add_epi16(a[k], _mm256_maddubs_epi16(a[k], y));
    __m256i s = a[0];
    for (int k = 1; k < 12; k++) s = _mm256_add_epi16(s, a[k]);
    _mm256_storeu_si256((__m256i *)sink, s);
    return (double)iterations * 12 * 32 * 2;
#else
    // Each lane's low byte is its next product's unsigned operand, as in the chains above:
    // a constant product (this loop until 2026-11-30) was folded into one multiply, and
    // the probe reported a peak of millions of GOP/s.
    int32_t a[32];
    for (int k = 0; k < 32; k++) a[k] = k;
    for (int64_t i = 0; i < iterations; i++)
        for (int k = 0; k < 32; k++) a[k] += (int32_t)(uint8_t)a[k] * -2;
    int32_t s = 0;
    for (int k = 0; k < 32; k++) s += a[k];
    sink[0] = s;
    return (double)iterations * 32 * 2;
#endif
}
