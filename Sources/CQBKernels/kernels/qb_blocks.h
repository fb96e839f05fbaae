// Private block layouts of the GGML formats (bit-compatible with GGML's structs), shared
// by the C files that read or write them; Swift sees only sizes (qb_formats.h).
#ifndef QB_BLOCKS_H
#define QB_BLOCKS_H
#include "qb_scalar.h"

#define QK 32
#define QK_K 256

typedef struct { qb_half d; uint8_t qs[16]; } block_q4_0;
typedef struct { qb_half d; qb_half m; uint8_t qs[16]; } block_q4_1;
typedef struct { qb_half d; uint8_t qh[4]; uint8_t qs[16]; } block_q5_0;
typedef struct { qb_half d; qb_half m; uint8_t qh[4]; uint8_t qs[16]; } block_q5_1;
typedef struct { qb_half d; int8_t qs[32]; } block_q8_0;
typedef struct { qb_half d; qb_half dmin; uint8_t scales[12]; uint8_t qs[128]; } block_q4_K;
typedef struct { qb_half d; qb_half dmin; uint8_t scales[12]; uint8_t qh[32]; uint8_t qs[128]; } block_q5_K;
typedef struct { uint8_t ql[128]; uint8_t qh[64]; int8_t scales[16]; qb_half d; } block_q6_K;
typedef struct { qb_half d; uint8_t qs[16]; } block_iq4_nl;
typedef struct { qb_half d; uint16_t scales_h; uint8_t scales_l[4]; uint8_t qs[128]; } block_iq4_xs;
typedef struct { uint8_t scales[16]; uint8_t qs[64]; qb_half d; qb_half dmin; } block_q2_K;
typedef struct { uint8_t hmask[32]; uint8_t qs[64]; uint8_t scales[12]; qb_half d; } block_q3_K;

_Static_assert(sizeof(block_q4_0) == 18, "q4_0");
_Static_assert(sizeof(block_q4_1) == 20, "q4_1");
_Static_assert(sizeof(block_q5_0) == 22, "q5_0");
_Static_assert(sizeof(block_q5_1) == 24, "q5_1");
_Static_assert(sizeof(block_q8_0) == 34, "q8_0");
_Static_assert(sizeof(block_q4_K) == 144, "q4_K");
_Static_assert(sizeof(block_q5_K) == 176, "q5_K");
_Static_assert(sizeof(block_q6_K) == 210, "q6_K");
_Static_assert(sizeof(block_iq4_nl) == 18, "iq4_nl");
_Static_assert(sizeof(block_iq4_xs) == 136, "iq4_xs");
_Static_assert(sizeof(block_q2_K) == 84, "q2_K");
_Static_assert(sizeof(block_q3_K) == 110, "q3_K");

static const int8_t kvalues_iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// Sub-block ib's (0..7) scale of an IQ4_XS super-block, less 32 (its values are d x this x
// kvalues_iq4nl[nibble]): six bits, four in scales_l, two in scales_h.
static inline int iq4xs_scale(const block_iq4_xs *x, int ib) {
    return (((x->scales_l[ib / 2] >> 4 * (ib % 2)) & 0xf) | (((x->scales_h >> 2 * ib) & 3) << 4)) - 32;
}

// Q2_K and Q3_K: value v = 128 n + 32 j + 16 h + l (0..255) of a super-block has its low two
// bits at bits 2j.. of qs[32 n + 16 h + l], and belongs to sub-block v / 16 (16 values each).
static inline int k23_low_bits(const uint8_t *qs, int v) { return (qs[32 * (v / 128) + v % 32] >> (2 * ((v / 32) % 4))) & 3; }

// Q3_K's value v as an unsigned 0..7: its low two bits, plus 4 when its hmask bit (bit
// 4 n + j of hmask[16 h + l]) is set. The weight is d x scale x (this - 4).
static inline int q3k_value(const block_q3_K *x, int v) {
    return k23_low_bits(x->qs, v) | (((x->hmask[v % 32] >> (v / 32)) & 1) << 2);
}

// Q3_K's sixteen sub-block scales, less 32: six bits each, the low four in bytes 0..7 (low
// nibbles for scales 0..7, high ones for 8..15), the high two in bytes 8..11 (scale j's at
// bits 2 (j / 4) of byte 8 + j % 4).
static inline void q3k_scales(const uint8_t *s, int8_t sc[16]) {
    for (int j = 0; j < 16; j++) {
        int lo = j < 8 ? s[j] & 0xF : s[j - 8] >> 4, hi = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
        sc[j] = (int8_t)((lo | hi << 4) - 32);
    }
}

#if defined(__AVX2__)
// Q3_K's sixteen scales less 32 (q3k_scales) from three 32-bit words rather than byte by byte.
static inline __m128i q3k_scales_128(const uint8_t *s) {
    uint32_t a0, a1, a2;
    memcpy(&a0, s, 4);
    memcpy(&a1, s + 4, 4);
    memcpy(&a2, s + 8, 4);
    const uint32_t m4 = 0x0F0F0F0F, m2 = 0x03030303;
    const __m128i v = _mm_setr_epi32((int)((a0 & m4) | ((a2 & m2) << 4)), (int)((a1 & m4) | (((a2 >> 2) & m2) << 4)),
                                     (int)(((a0 >> 4) & m4) | (((a2 >> 4) & m2) << 4)),
                                     (int)(((a1 >> 4) & m4) | (((a2 >> 6) & m2) << 4)));
    return _mm_sub_epi8(v, _mm_set1_epi8(32));
}

// Q3_K's hmask bit s (0..7) of each of 32 bytes moved to bit 2 (and bit 2 alone kept): one
// shift of the 16-bit lanes, which moves no kept bit across a byte for s up to 7.
static inline __m256i q3k_high_256(__m256i hm, int s) {
    const __m256i v = s >= 2 ? _mm256_srli_epi16(hm, s - 2) : _mm256_slli_epi16(hm, 2 - s);
    return _mm256_and_si256(v, _mm256_set1_epi8(4));
}
#endif

#endif
