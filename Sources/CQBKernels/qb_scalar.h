// Private helpers shared by the C kernels (not part of the module's public headers):
// half and bfloat16 widening, MLX scale loads, Q4_K/Q5_K 6-bit scale unpacking, and the
// horizontal sum of eight floats.
#ifndef QB_SCALAR_H
#define QB_SCALAR_H
#include <stdint.h>
#include <string.h>
#include "qb_quant.h"
#if defined(__AVX2__)
#include <immintrin.h>
#endif

typedef uint16_t qb_half;
static inline float h2f(qb_half h) { _Float16 f; memcpy(&f, &h, 2); return (float)f; }
static inline qb_half f2h(float x) { _Float16 f = (_Float16)x; qb_half h; memcpy(&h, &f, 2); return h; }
static inline float bf2f(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }

// Element i of an MLX scales or biases array of dtype QB_F32, QB_F16 or QB_BF16.
static inline float load_scale(const void *p, int32_t dtype, int64_t i) {
    switch (dtype) {
    case QB_F16: return h2f(((const qb_half *)p)[i]);
    case QB_BF16: return bf2f(((const uint16_t *)p)[i]);
    default: return ((const float *)p)[i];
    }
}

// Scale and minimum of sub-block j (0..7) from a K-quant block's 12 scale bytes (GGML's packing).
static inline void get_scale_min_k4(int j, const uint8_t *q, uint8_t *d, uint8_t *m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

#if defined(__AVX2__)
static inline float hsum_ps(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
#endif

#endif
