// Q6_K's 16-row decode layout (qb_repack.h): a plain block's values and where each sits in a
// group-block, and the six-bit values of one 32-value pair of sub-blocks assembled as the
// 16-row kernels (qb_dot_kquant.c) and the prefill packer (qb_gemm.c) both take them.
#ifndef QB_Q6K_X16_H
#define QB_Q6K_X16_H
#include "qb_repack.h"
#include "qb_scalar.h"
#include <stdint.h>
#include <string.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

// Where sub-block j's 16 scales and pair p's value vectors start in a group-block.
static inline int64_t q6k_x16_sc(int j) { return 32 + QB_Q6K_X16_PAIR * (j / 2) + 16 * (j % 2); }
static inline int64_t q6k_x16_qs(int p) { return 32 + QB_Q6K_X16_PAIR * p + 32; }

// The 256 values (0..63) of a plain Q6_K block in order (GGML's: two 128-value halves, each
// from 64 low-bit bytes and 32 high-bit bytes), and back into its first 192 bytes.
static inline void q6k_values(const uint8_t *blk, uint8_t q[256]) {
    for (int n = 0; n < 2; n++)
        for (int l = 0; l < 32; l++) {
            const uint8_t a = blk[64 * n + l], b = blk[64 * n + 32 + l], h = blk[128 + 32 * n + l];
            q[128 * n + l] = (uint8_t)((a & 0xF) | (h & 3) << 4);
            q[128 * n + l + 32] = (uint8_t)((b & 0xF) | ((h >> 2) & 3) << 4);
            q[128 * n + l + 64] = (uint8_t)((a >> 4) | ((h >> 4) & 3) << 4);
            q[128 * n + l + 96] = (uint8_t)((b >> 4) | ((h >> 6) & 3) << 4);
        }
}

static inline void q6k_put_values(uint8_t *blk, const uint8_t q[256]) {
    for (int n = 0; n < 2; n++)
        for (int l = 0; l < 32; l++) {
            const uint8_t *v = q + 128 * n + l;
            blk[64 * n + l] = (uint8_t)((v[0] & 0xF) | (v[64] & 0xF) << 4);
            blk[64 * n + 32 + l] = (uint8_t)((v[32] & 0xF) | (v[96] & 0xF) << 4);
            blk[128 + 32 * n + l] = (uint8_t)(v[0] >> 4 | (v[32] >> 4) << 2 | (v[64] >> 4) << 4 | (v[96] >> 4) << 6);
        }
}

// Value v (0..255) of row r in the group-block `g`.
static inline uint8_t q6k_x16_value(const uint8_t *g, int r, int v) {
    const int p = v / 32, h = (v % 32) / 16, t = (v % 16) / 4, k = v % 4;
    const uint8_t *o = g + q6k_x16_qs(p) + 4 * r + k;
    return (uint8_t)(((o[128 + 64 * t] >> (4 * h)) & 0xF) | ((o[64 * h] >> (2 * t)) & 3) << 4);
}

// Row r's 256 values and 16 scales in the group-block `g`; returns its d.
static inline qb_half q6k_x16_row(const uint8_t *g, int r, uint8_t q[256], int8_t sc[16]) {
    for (int v = 0; v < 256; v++) q[v] = q6k_x16_value(g, r, v);
    for (int j = 0; j < 16; j++) sc[j] = (int8_t)g[q6k_x16_sc(j) + r];
    qb_half d;
    memcpy(&d, g + 2 * r, 2);
    return d;
}

// Row r's 256 values into the group-block `g`: every byte of the row's share written.
static inline void q6k_x16_put(uint8_t *g, int r, const uint8_t q[256]) {
    for (int p = 0; p < 8; p++) {
        uint8_t *o = g + q6k_x16_qs(p) + 4 * r;
        const uint8_t *s = q + 32 * p;
        for (int k = 0; k < 4; k++) {
            for (int t = 0; t < 4; t++) o[128 + 64 * t + k] = (uint8_t)((s[4 * t + k] & 0xF) | (s[16 + 4 * t + k] & 0xF) << 4);
            for (int h = 0; h < 2; h++) {
                uint8_t high = 0;
                for (int t = 0; t < 4; t++) high |= (uint8_t)((s[16 * h + 4 * t + k] >> 4) << (2 * t));
                o[64 * h + k] = high;
            }
        }
    }
}

#if defined(__AVX2__)
// A high-bit byte's bits 2t..2t+1 moved to bits 4..5 (16-bit shifts: bits 4..5 of each byte
// still come from that byte).
static inline __m256i q6k_x16_up_256(__m256i h, int t) {
    return t < 2 ? _mm256_slli_epi16(h, 4 - 2 * t) : t == 2 ? h : _mm256_srli_epi16(h, 2);
}

// The eight 32-byte steps of one pair's half (rows 0..7 at `q`, rows 8..15 at `q` + 32):
// v[4h + t] holds values 16h + 4t .. 16h + 4t + 3 of the pair for eight rows.
static inline __attribute__((always_inline)) void q6k_x16_values_256(const uint8_t *q, __m256i v[8]) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30);
    const __m256i h0 = _mm256_loadu_si256((const __m256i *)q), h1 = _mm256_loadu_si256((const __m256i *)(q + 64));
    for (int t = 0; t < 4; t++) {
        const __m256i l = _mm256_loadu_si256((const __m256i *)(q + 128 + 64 * t));
        v[t] = _mm256_or_si256(_mm256_and_si256(l, m4), _mm256_and_si256(q6k_x16_up_256(h0, t), m30));
        v[4 + t] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l, 4), m4), _mm256_and_si256(q6k_x16_up_256(h1, t), m30));
    }
}
#endif

#if defined(QB_AVX512)
static inline __m512i q6k_x16_up_512(__m512i h, int t) {
    return t < 2 ? _mm512_slli_epi16(h, 4 - 2 * t) : t == 2 ? h : _mm512_srli_epi16(h, 2);
}

// The same for all 16 rows: v[4h + t] is step 4h + t of the pair, 64 bytes. The high bits
// are masked and merged in one ternary-logic operation (a | (b & c)).
static inline __attribute__((always_inline)) void q6k_x16_values_512(const uint8_t *q, __m512i v[8]) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
    const __m512i h0 = _mm512_loadu_si512((const void *)q), h1 = _mm512_loadu_si512((const void *)(q + 64));
    for (int t = 0; t < 4; t++) {
        const __m512i l = _mm512_loadu_si512((const void *)(q + 128 + 64 * t));
        v[t] = _mm512_ternarylogic_epi32(_mm512_and_si512(l, m4), q6k_x16_up_512(h0, t), m30, 0xF8);
        v[4 + t] = _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(l, 4), m4), q6k_x16_up_512(h1, t), m30, 0xF8);
    }
}
#endif
#endif
