// Private helpers shared by the C kernels (not part of the module's public headers):
// half and bfloat16 widening, MLX scale loads, Q4_K/Q5_K 6-bit scale unpacking, the address
// of a block in the four-row interleaved layout, nibble unpacking, the horizontal sum of
// eight floats, and a 16x16 dword transpose.
#ifndef QB_SCALAR_H
#define QB_SCALAR_H
#include <stdint.h>
#include <string.h>
#include "qb_quant.h"
#if defined(__AVX2__)
#include <immintrin.h>
#endif
// The 64-byte integer kernels (vpdpbusd, vpdpwssd, byte and word permutes).
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#define QB_AVX512 1
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

// All eight 6-bit scales (byte j of *sc) and minimums (*mn) of a K-quant block's 12 scale
// bytes at once (get_scale_min_k4 for j = 0..7).
static inline void q4k_unpack_scales(const uint8_t *q, uint64_t *sc, uint64_t *mn) {
    uint32_t u0, u1, u2;
    memcpy(&u0, q, 4);
    memcpy(&u1, q + 4, 4);
    memcpy(&u2, q + 8, 4);
    *sc = (uint64_t)(u0 & 0x3f3f3f3fu) | (uint64_t)((u2 & 0x0f0f0f0fu) | ((u0 >> 2) & 0x30303030u)) << 32;
    *mn = (uint64_t)(u1 & 0x3f3f3f3fu) | (uint64_t)(((u2 >> 4) & 0x0f0f0f0fu) | ((u1 >> 2) & 0x30303030u)) << 32;
}

// Block b of `row` in a Q4_0/Q8_0 matrix in the four-row interleaved layout of qb_repack.h
// (rows of nb blocks): its f16 scale in `d`, its quants returned.
static inline const uint8_t *qb_interleaved_block(int32_t type, const void *w, int64_t row, int64_t b, int64_t nb,
                                                  qb_half *d) {
    int64_t qbytes = type == QB_Q4_0 ? 16 : 32;
    const uint8_t *g = (const uint8_t *)w + ((row / 4) * nb + b) * 4 * (2 + qbytes);
    memcpy(d, g + 2 * (row % 4), 2);
    return g + 8 + qbytes * (row % 4);
}

#if defined(__AVX2__)
// 16 bytes -> 32 values: low nibbles first, then high nibbles (GGML's order).
static inline __m256i nibbles_lo_hi(const uint8_t *p) {
    __m128i t = _mm_loadu_si128((const __m128i *)p);
    __m256i b = _mm256_inserti128_si256(_mm256_castsi128_si256(t), _mm_srli_epi16(t, 4), 1);
    return _mm256_and_si256(b, _mm256_set1_epi8(0x0F));
}

static inline float hsum_ps(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
#endif

#if defined(QB_AVX512)
// Transposes 16 vectors of 16 dwords in place: afterwards lane j of r[d] is dword d of the
// old r[j].
static inline void transpose16x16_epi32(__m512i r[16]) {
    __m512i t[16], u[16], v[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {
        u[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    for (int i = 0; i < 4; i++) {
        v[i] = _mm512_shuffle_i32x4(u[i], u[4 + i], 0x88);
        v[4 + i] = _mm512_shuffle_i32x4(u[i], u[4 + i], 0xDD);
        v[8 + i] = _mm512_shuffle_i32x4(u[8 + i], u[12 + i], 0x88);
        v[12 + i] = _mm512_shuffle_i32x4(u[8 + i], u[12 + i], 0xDD);
    }
    for (int i = 0; i < 8; i++) {
        r[i] = _mm512_shuffle_i32x4(v[i], v[8 + i], 0x88);
        r[8 + i] = _mm512_shuffle_i32x4(v[i], v[8 + i], 0xDD);
    }
}
#endif

#endif
