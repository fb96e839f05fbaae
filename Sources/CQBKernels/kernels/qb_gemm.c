// Prefill products of quantized weights with int8 activations (layout in qb_gemm.h). The
// scalar loops are the definition. With AVX-512 VNNI, one 64-byte step of a tile meets
// eight activation rows, each through one vpdpbusd with the activations' four bytes
// broadcast from memory, and D x (activation scale) and M x (activation block sum) are
// applied in f32 once per 32 values; for the symmetric formats (M = k x D) the M term is
// instead an integer offset that starts each block's sum (qb_q8a_offsets), which takes an
// fma per block and row off the two pipes the vpdpbusd run on. The AVX2 code takes both 8-row halves of a tile per
// broadcast activation, 4- and 5-bit values with vpmaddubsw (pairs of products in saturating
// 16-bit lanes, summed only as far as the values' width allows) and 8-bit values, tiled as
// 16-bit ones, with vpmaddwd (gemm_avx2); every width is summed exactly. Q4_K on both
// vector sets takes its activations per 256 values instead, each 32 at a power-of-two
// fraction of that step (q8s, qb_gemm_tiles_q8s), so its integer scales meet the sums in
// integers and the f32 work is per super-block.
#include "qb_blocks.h"
#include "qb_gemm.h"
#include "qb_q6k_x16.h"
#include "qb_scalar.h"
#include <string.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

int qb_gemm_wide_values(void) {
#if defined(__AVX2__)
    return 1;
#else
    return 0;
#endif
}

// Without VNNI, 8-bit values are tiled as 16-bit ones (see gemm_avx2).
#if defined(__AVX2__) && !defined(QB_AVX512)
#define QB_TILE_16BIT_8 1
#else
#define QB_TILE_16BIT_8 0
#endif

int64_t qb_gemm_tile_block_bytes(int32_t bits) {
    return bits == 8 && QB_TILE_16BIT_8 ? QB_TILE16_BLOCK_BYTES : QB_TILE_BLOCK_BYTES;
}

// Without VNNI, Q6_K's and Q3_K's tiles hold signed values with integer scales
// (QB_TILE6S_BLOCK_BYTES, see block6s_x16); the other sets keep unsigned values with f32
// scales per 16.
#if defined(__AVX2__) && !defined(QB_AVX512)
#define QB_TILE6_SIGNED 1
#define TILE6_BYTES QB_TILE6S_BLOCK_BYTES
#define TILE6_STEPS 192
#else
#define QB_TILE6_SIGNED 0
#define TILE6_BYTES QB_TILE6_BLOCK_BYTES
#define TILE6_STEPS 128
#endif

int64_t qb_gemm_tile6_block_bytes(int32_t type) {
    if (type == QB_Q2_K) return QB_TILE2K_BLOCK_BYTES;
    return TILE6_BYTES;
}

// On the vector sets Q4_K's tiles are per super-block (QB_TILE4K_BYTES, see block4k_x16 and
// gemm_q8s_vnni).
#if defined(__AVX2__)
#define QB_TILE4K_SUPER 1
#else
#define QB_TILE4K_SUPER 0
#endif

// Offsets in a super-block of a Q4_K tile of QB_TILE4K_BYTES (layout in qb_gemm.h): the
// scales of sub-block j shifted by s at Q4K_SC + 256 j + 64 s, the minimums' pairs at
// Q4K_MN + 64 k, sub-block j's steps at Q4K_VALUES + 512 j.
#define Q4K_SC 128
#define Q4K_MN 2176
#define Q4K_VALUES 2432

// A scale shifted to an activation's step (sc << s, at most 63 x 8) as the tile's dword: alone
// on the avx512 set (vpdpwssd takes its low half against a sum within int16, whose high half
// is that sum's sign), in both halves elsewhere (vpmaddwd takes it against pairs of 16-bit
// sums).
static inline uint32_t q4k_scale_dword(uint32_t v) {
#if defined(QB_AVX512)
    return v;
#else
    return v * 0x10001u;
#endif
}

// Row r's d, dmin, 6-bit scales sc[8] and minimums mn[8] into super-block `sb` of a Q4_K
// tile of QB_TILE4K_BYTES (layout in qb_gemm.h).
static inline void put_q4k_super(uint8_t *sb, int r, float d, float dmin, const uint8_t sc[8], const uint8_t mn[8]) {
    const float md = -dmin;
    memcpy(sb + 4 * r, &d, 4);
    memcpy(sb + 64 + 4 * r, &md, 4);
    for (int j = 0; j < 8; j++)
        for (int sh = 0; sh < 4; sh++) {
            const uint32_t v = q4k_scale_dword((uint32_t)sc[j] << sh);
            memcpy(sb + Q4K_SC + 256 * j + 64 * sh + 4 * r, &v, 4);
        }
    for (int k = 0; k < 4; k++) {
        const int16_t pair[2] = {mn[2 * k], mn[2 * k + 1]};
        memcpy(sb + Q4K_MN + 64 * k + 4 * r, pair, 4);
    }
}

// Writes one row's scale and offset into block `b` (of `block_bytes`) of the tile at lane `r`.
static inline void put_scale(uint8_t *tile, int64_t block_bytes, int64_t b, int r, float d, float m) {
    uint8_t *blk = tile + b * block_bytes;
    memcpy(blk + 4 * r, &d, 4);
    memcpy(blk + 64 + 4 * r, &m, 4);
}

// Writes one row's 32 values, scale and offset into block `b` of the tile at lane `r`.
static inline void put(uint8_t *tile, int64_t b, int r, const uint8_t v[32], float d, float m) {
    put_scale(tile, QB_TILE_BLOCK_BYTES, b, r, d, m);
    uint8_t *blk = tile + b * QB_TILE_BLOCK_BYTES;
    for (int s = 0; s < 8; s++) memcpy(blk + 128 + 64 * s + 4 * r, v + 4 * s, 4);
}

#if defined(__AVX2__)
// 16 bytes -> 32 values with the low and high nibble of each byte in turn (MLX's order;
// GGML's is `nibbles_lo_hi`).
static inline __m256i nibbles_interleaved(const uint8_t *p) {
    __m128i t = _mm_loadu_si128((const __m128i *)p), m = _mm_set1_epi8(0x0F);
    __m128i lo = _mm_and_si128(t, m), hi = _mm_and_si128(_mm_srli_epi16(t, 4), m);
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi8(lo, hi)), _mm_unpackhi_epi8(lo, hi), 1);
}
#endif

// Block b (32 values) of `row` in an IQ4_NL or IQ4_XS matrix (`type`; rows of nb blocks, for
// IQ4_XS sub-block b % 8 of super-block b / 8): its scale in *d (IQ4_XS: d (ls - 32)), its 16
// bytes of nibbles returned. Each nibble indexes kvalues_iq4nl; the tile holds kvalue + 128
// as an 8-bit value, with Q8_0's offset (M = -128 D), so the products stay exact.
static inline int is_iq4(int32_t type) { return type == QB_IQ4_NL || type == QB_IQ4_XS; }
static inline const uint8_t *iq4_block(int32_t type, const void *w, int64_t row, int64_t b, int64_t nb, float *d) {
    if (type == QB_IQ4_NL) {
        const block_iq4_nl *x = (const block_iq4_nl *)w + row * nb + b;
        *d = h2f(x->d);
        return x->qs;
    }
    const block_iq4_xs *x = (const block_iq4_xs *)w + (row * nb + b) / 8;
    int ib = (int)(b % 8);
    *d = h2f(x->d) * (float)iq4xs_scale(x, ib);
    return x->qs + 16 * ib;
}

// The symmetric formats' offset k (w = D * (q + k), q unsigned as tiled) and the values one
// offset covers; the packers' M = k * D and qb_tile_offset both read it here.
static inline int32_t symmetric_k(int32_t type, int32_t *width) {
    *width = type == QB_Q6_K || type == QB_Q3_K ? 16 : 32;
    switch (type) {
    case QB_Q4_0:
    case QB_Q5_0: return qb_q32_offset(type);
    case QB_Q8_0: return -128;
    case QB_IQ4_NL:
    case QB_IQ4_XS: return -128;
    case QB_Q6_K: return -32;
    case QB_Q3_K: return -4;
    default: return 0;
    }
}

int qb_tile_offset(int32_t type, int32_t *width, int32_t *k) {
    *k = symmetric_k(type, width);
    if (QB_TILE6_SIGNED && (type == QB_Q6_K || type == QB_Q3_K)) *k = 0;  // signed tiles need no offsets
    if (type == QB_Q2_K) *width = 16, *k = 1;  // its minimums meet the plain sums
    return *k != 0;
}

static inline float offset_m(int32_t type, float d) {
    int32_t width;
    return (float)symmetric_k(type, &width) * d;
}

// Block b of `row` in a Q4_0, Q4_1, Q5_0, Q5_1 or Q8_0 matrix (rows of nb blocks), plain or,
// when `interleaved`, four-row interleaved: D and M of the tile (d, and m or k d: exact), the
// fifth bits in `qh` (Q5_0, Q5_1: bit j is value j's, values 0..15 the low nibbles of the 16
// quant bytes, 16..31 the high ones), its quants returned.
static inline const uint8_t *q32_block(int32_t type, int32_t interleaved, const void *w, int64_t row, int64_t b,
                                       int64_t nb, float *d, float *m, uint32_t *qh) {
    qb_half hd, hm;
    const uint8_t *qs = qb_q32_block(type, interleaved, w, row, b, nb, &hd, &hm, qh);
    *d = h2f(hd);
    *m = qb_q32_has_min(type) ? h2f(hm) : offset_m(type, *d);
    return qs;
}

#if defined(__AVX2__)
// Packing takes all 16 rows of a tile at once (packing is a pass over every weight per
// product; row by row, with sixteen 4-byte stores per row and block, it had been a fifth of
// a 128-token prefill on AVX-512 and a seventh on AVX2): each row's 32 values of a block are
// one vector, and dword transposes turn the rows' vectors into the block's 64-byte steps.

// Blocks b and, when `both`, b + 1 of a tile whose blocks are `block_bytes` long with their
// steps at `steps`, from v[k][r]: row r's 32 values of block b + k. AVX-512 transposes the
// pair as one 16x16 (row r's two blocks joined), AVX2 each block's two 8-row halves.
static inline void put_blocks16(uint8_t *tile, int64_t block_bytes, int64_t steps, int64_t b,
                                __m256i v[2][QB_TILE_ROWS], int both) {
#if defined(QB_AVX512)
    if (both) {
        __m512i z[QB_TILE_ROWS];
        for (int r = 0; r < QB_TILE_ROWS; r++) z[r] = _mm512_inserti64x4(_mm512_castsi256_si512(v[0][r]), v[1][r], 1);
        transpose16x16_epi32(z);
        uint8_t *first = tile + b * block_bytes + steps, *second = first + block_bytes;
        for (int st = 0; st < 8; st++) {
            _mm512_storeu_si512((void *)(first + 64 * st), z[st]);
            _mm512_storeu_si512((void *)(second + 64 * st), z[8 + st]);
        }
        return;
    }
#endif
    for (int k = 0; k <= both; k++) {
        transpose8x8_epi32(v[k]);
        transpose8x8_epi32(v[k] + 8);
        uint8_t *out = tile + (b + k) * block_bytes + steps;
        for (int st = 0; st < 8; st++) {
            _mm256_storeu_si256((__m256i *)(out + 64 * st), v[k][st]);
            _mm256_storeu_si256((__m256i *)(out + 64 * st + 32), v[k][8 + st]);
        }
    }
}

// Block b of a 16-bit tile (QB_TILE16_BLOCK_BYTES) from v[r]: row r's 32 unsigned 8-bit
// values, widened; its steps are 16 of 2 values (a dword) per row.
static inline void put_block16_16bit(uint8_t *tile, int64_t b, const __m256i v[QB_TILE_ROWS]) {
    __m256i w[2][2][8];  // [value half][row half][row]: dwords = pairs of 16-bit values
    for (int r = 0; r < QB_TILE_ROWS; r++) {
        w[0][r / 8][r % 8] = _mm256_cvtepu8_epi16(_mm256_castsi256_si128(v[r]));
        w[1][r / 8][r % 8] = _mm256_cvtepu8_epi16(_mm256_extracti128_si256(v[r], 1));
    }
    uint8_t *out = tile + b * QB_TILE16_BLOCK_BYTES + 128;
    for (int k = 0; k < 2; k++) {
        transpose8x8_epi32(w[k][0]);
        transpose8x8_epi32(w[k][1]);
        for (int st = 0; st < 8; st++) {
            _mm256_storeu_si256((__m256i *)(out + 64 * (8 * k + st)), w[k][0][st]);
            _mm256_storeu_si256((__m256i *)(out + 64 * (8 * k + st) + 32), w[k][1][st]);
        }
    }
}

// Blocks b (and b + 1 when `both`) of a tile of `bits`-bit values: 16-bit steps for 8-bit
// values where the set tiles them so, byte steps otherwise.
static inline void put_value_blocks16(uint8_t *tile, int32_t bits, int64_t b, __m256i v[2][QB_TILE_ROWS], int both) {
    if (bits == 8 && QB_TILE_16BIT_8) {
        for (int k = 0; k <= both; k++) put_block16_16bit(tile, b + k, v[k]);
        return;
    }
    put_blocks16(tile, QB_TILE_BLOCK_BYTES, 128, b, v, both);
}

// Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 in plain rows (their four-row layout: pack_x4_vec), IQ4_NL
// and IQ4_XS, two blocks at a time. `type` is a constant (qb_pack_tile_ggml's switch): a block's
// fields are read without a branch on the type per row and block.
static inline __attribute__((always_inline)) void pack_ggml_vec(const int32_t type, const void *w, int64_t r0, int64_t cols,
                                                                uint8_t *tile) {
    const int32_t bits = type == QB_Q8_0 || is_iq4(type) ? 8 : type == QB_Q4_0 || type == QB_Q4_1 ? 4 : 5;
    int64_t nb = cols / 32, bb = qb_gemm_tile_block_bytes(bits);
    // IQ4's values + 128, indexed by its nibbles through one byte shuffle.
    const __m256i iq4 = _mm256_xor_si256(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)kvalues_iq4nl)),
                                         _mm256_set1_epi8((char)0x80));
    for (int64_t b = 0; b < nb; b += 2) {
        __m256i v[2][QB_TILE_ROWS];
        int both = b + 1 < nb;
        for (int k = 0; k <= both; k++)
            for (int r = 0; r < QB_TILE_ROWS; r++) {
                float d, m;
                if (is_iq4(type)) {
                    const uint8_t *qs = iq4_block(type, w, r0 + r, b + k, nb, &d);
                    put_scale(tile, bb, b + k, r, d, offset_m(type, d));
                    v[k][r] = _mm256_shuffle_epi8(iq4, nibbles_lo_hi(qs));
                    continue;
                }
                uint32_t qh;
                const uint8_t *qs = q32_block(type, 0, w, r0 + r, b + k, nb, &d, &m, &qh);
                put_scale(tile, bb, b + k, r, d, m);
                if (type == QB_Q8_0) v[k][r] = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)qs), _mm256_set1_epi8((char)0x80));
                else if (bits == 5) v[k][r] = _mm256_or_si256(nibbles_lo_hi(qs), q5_fifth_bits(qh));  // 16 where bit j is set
                else v[k][r] = nibbles_lo_hi(qs);
            }
        put_value_blocks16(tile, bits, b, v, both);
    }
}

// Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 in the four-row layout, all 16 rows of a block at once: D
// and M from the four groups' f16 scales (minimums) in two conversions; the values without
// unpacking each row: with row i of the tile's groups 2h and 2h + 1 in the two lanes of one
// vector (16 bytes each), two rounds of in-lane unpacks turn four such vectors into the
// rows' dwords 0..3 for rows 8h..8h + 7, which are the tile's steps (16-bit tiles: words
// widened by an unpack against zero; Q5's fifth bits per step from the rows' 16-bit masks,
// tested as q5_fifth_bits_at does). pack_ggml_vec (each row's 32 values unpacked, scales
// one by one, then dword transposes) took 150-230 cycles per block on an Intel Xeon core, a
// tenth of a 128-token prefill's products on AVX-512 (results/pack-x4-2026-11-29/).
static inline __attribute__((always_inline)) void pack_x4_vec(const int32_t type, const void *w, int64_t r0, int64_t cols,
                                                              uint8_t *tile) {
    const int32_t bits = type == QB_Q8_0 ? 8 : qb_q32_has_fifth(type) ? 5 : 4;
    const int64_t nb = cols / 32, gb = qb_x4_bytes(type), qs = qb_x4_qs(type), qb = qb_q32_quant_bytes(type);
    const int64_t bb = qb_gemm_tile_block_bytes(bits), wide = bits == 8 && QB_TILE_16BIT_8;
    const uint8_t *g0 = (const uint8_t *)w + (r0 / 4) * nb * gb;
    const __m256i m4 = _mm256_set1_epi8(0x0F), flip = _mm256_set1_epi8((char)0x80), zero = _mm256_setzero_si256();
    const __m256 k = _mm256_set1_ps(offset_m(type, 1.0f));
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *g[4];
        for (int j = 0; j < 4; j++) {
            g[j] = g0 + (j * nb + b) * gb;
            _mm_prefetch((const char *)g[j] + 8 * gb, _MM_HINT_T0);
        }
        uint8_t *blk = tile + b * bb;
        for (int h = 0; h < 2; h++) {
            __m128i dh = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)g[2 * h]), _mm_loadl_epi64((const __m128i *)g[2 * h + 1]));
            __m256 d = _mm256_cvtph_ps(dh), m;
            if (qb_q32_has_min(type))
                m = _mm256_cvtph_ps(_mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(g[2 * h] + QB_X4_MIN)),
                                                       _mm_loadl_epi64((const __m128i *)(g[2 * h + 1] + QB_X4_MIN))));
            else m = _mm256_mul_ps(d, k);
            _mm256_storeu_ps((float *)(blk + 32 * h), d);
            _mm256_storeu_ps((float *)(blk + 64 + 32 * h), m);
            for (int v = 0; v < bits / 4; v++) {  // 16-byte quarters (Q8_0: halves) of the rows' values
                __m256i R[4];
                for (int i = 0; i < 4; i++) {
                    R[i] = _mm256_inserti128_si256(
                        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(g[2 * h] + qs + qb * i + 16 * v))),
                        _mm_loadu_si128((const __m128i *)(g[2 * h + 1] + qs + qb * i + 16 * v)), 1);
                    if (bits == 8) R[i] = _mm256_xor_si256(R[i], flip);
                }
                if (wide) {  // words 2j, 2j + 1 of each row: steps 8v + 2j, 8v + 2j + 1
                    __m256i a = _mm256_unpacklo_epi16(R[0], R[1]), c = _mm256_unpacklo_epi16(R[2], R[3]);
                    __m256i e = _mm256_unpackhi_epi16(R[0], R[1]), f = _mm256_unpackhi_epi16(R[2], R[3]);
                    __m256i X[4] = {_mm256_unpacklo_epi32(a, c), _mm256_unpackhi_epi32(a, c), _mm256_unpacklo_epi32(e, f),
                                    _mm256_unpackhi_epi32(e, f)};
                    uint8_t *out = blk + 128 + 32 * h;
                    for (int j = 0; j < 4; j++) {
                        _mm256_storeu_si256((__m256i *)(out + 64 * (8 * v + 2 * j)), _mm256_unpacklo_epi8(X[j], zero));
                        _mm256_storeu_si256((__m256i *)(out + 64 * (8 * v + 2 * j + 1)), _mm256_unpackhi_epi8(X[j], zero));
                    }
                    continue;
                }
                __m256i t0 = _mm256_unpacklo_epi32(R[0], R[1]), t1 = _mm256_unpackhi_epi32(R[0], R[1]);
                __m256i t2 = _mm256_unpacklo_epi32(R[2], R[3]), t3 = _mm256_unpackhi_epi32(R[2], R[3]);
                __m256i S[4] = {_mm256_unpacklo_epi64(t0, t2), _mm256_unpackhi_epi64(t0, t2), _mm256_unpacklo_epi64(t1, t3),
                                _mm256_unpackhi_epi64(t1, t3)};
                uint8_t *out = blk + 128 + 32 * h;
                // Q5: the rows' masks of values 0..15 and 16..31 (bit i is value i's or 16 + i's), a dword a row.
                __m256i qlo = zero, qhi = zero;
                if (bits == 5) {
                    const uint8_t *a = g[2 * h] + qb_x4_qh(type), *c = g[2 * h + 1] + qb_x4_qh(type);
                    qlo = _mm256_cvtepu16_epi32(_mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)a), _mm_loadl_epi64((const __m128i *)c)));
                    qhi = _mm256_cvtepu16_epi32(
                        _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(a + 8)), _mm_loadl_epi64((const __m128i *)(c + 8))));
                }
                for (int j = 0; j < 4; j++) {
                    if (bits == 8) {  // dwords 4v + j
                        _mm256_storeu_si256((__m256i *)(out + 64 * (4 * v + j)), S[j]);
                        continue;
                    }
                    __m256i lo = _mm256_and_si256(S[j], m4), hi = _mm256_and_si256(_mm256_srli_epi16(S[j], 4), m4);
                    if (bits == 5) {  // values 4j + k (and 16 + 4j + k): bit 4(j % 2) + k of byte j / 2 of the masks
                        const __m256i at = _mm256_add_epi8(
                            _mm256_setr_epi32(0, 0x04040404, 0x08080808, 0x0C0C0C0C, 0, 0x04040404, 0x08080808, 0x0C0C0C0C),
                            _mm256_set1_epi8((char)(j / 2)));
                        const __m256i others = _mm256_set1_epi32(j % 2 ? 0x7FBFDFEF : (int)0xF7FBFDFE);
                        lo = _mm256_or_si256(lo, bit_set_16(_mm256_shuffle_epi8(qlo, at), others));
                        hi = _mm256_or_si256(hi, bit_set_16(_mm256_shuffle_epi8(qhi, at), others));
                    }
                    _mm256_storeu_si256((__m256i *)(out + 64 * j), lo);
                    _mm256_storeu_si256((__m256i *)(out + 64 * (4 + j)), hi);
                }
            }
        }
    }
}

// MLX 4- and 8-bit rows, two blocks at a time.
static void pack_mlx_vec(int32_t bits, int64_t group, const uint32_t *w, const void *scales, const void *biases,
                         int32_t sdtype, int64_t r0, int64_t cols, uint8_t *tile) {
    int64_t nb = cols / 32, groups = cols / group, bb = qb_gemm_tile_block_bytes(bits);
    for (int64_t b = 0; b < nb; b += 2) {
        __m256i v[2][QB_TILE_ROWS];
        int both = b + 1 < nb;
        for (int r = 0; r < QB_TILE_ROWS; r++) {
            int64_t row = r0 + r;
            const uint8_t *bytes = (const uint8_t *)(w + row * (cols * bits / 32));
            for (int k = 0; k <= both; k++) {
                int64_t g = row * groups + 32 * (b + k) / group;
                put_scale(tile, bb, b + k, r, load_scale(scales, sdtype, g), load_scale(biases, sdtype, g));
                v[k][r] = bits == 4 ? nibbles_interleaved(bytes + 16 * (b + k))
                                    : _mm256_loadu_si256((const __m256i *)(bytes + 32 * (b + k)));
            }
        }
        put_value_blocks16(tile, bits, b, v, both);
    }
}

// Q4_K and Q5_K (`fifth`), a super-block at a time: each pair of sub-blocks shares 32 bytes
// (low nibbles, then high); Q5_K's fifth bits are bits 2p and 2p + 1 of the 32 bytes of qh.
static inline __attribute__((always_inline)) void pack_k_vec(int fifth, const void *w, int64_t r0, int64_t cols, uint8_t *tile) {
    int64_t nb = cols / 256;
    const int64_t bytes = fifth ? 176 : 144, qs = fifth ? 48 : 16;
    const int super = !fifth && QB_TILE4K_SUPER;  // Q4_K's tiles per super-block
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *blk[QB_TILE_ROWS];
        float d[QB_TILE_ROWS][8], m[QB_TILE_ROWS][8];
        __m256i qh[QB_TILE_ROWS];
        for (int r = 0; r < QB_TILE_ROWS; r++) {
            blk[r] = (const uint8_t *)w + ((r0 + r) * nb + i) * bytes;
            qh[r] = fifth ? _mm256_loadu_si256((const __m256i *)(blk[r] + 16)) : _mm256_setzero_si256();
            qb_half hd, hm;
            memcpy(&hd, blk[r], 2);
            memcpy(&hm, blk[r] + 2, 2);
            uint64_t sc, mn;
            q4k_unpack_scales(blk[r] + 4, &sc, &mn);
            if (super) {
                uint8_t scb[8], mnb[8];
                memcpy(scb, &sc, 8);
                memcpy(mnb, &mn, 8);
                put_q4k_super(tile + i * QB_TILE4K_BYTES, r, h2f(hd), h2f(hm), scb, mnb);
                continue;
            }
            __m256 s8 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)sc)));
            __m256 m8 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)mn)));
            _mm256_storeu_ps(d[r], _mm256_mul_ps(s8, _mm256_set1_ps(h2f(hd))));
            _mm256_storeu_ps(m[r], _mm256_mul_ps(m8, _mm256_set1_ps(-h2f(hm))));
        }
        for (int j = 0; j < 8 && !super; j++)
            for (int r = 0; r < QB_TILE_ROWS; r++) put_scale(tile, QB_TILE_BLOCK_BYTES, 8 * i + j, r, d[r][j], m[r][j]);
        for (int p = 0; p < 4; p++) {
            __m256i v[2][QB_TILE_ROWS];
            for (int r = 0; r < QB_TILE_ROWS; r++) {
                __m256i q = _mm256_loadu_si256((const __m256i *)(blk[r] + qs + 32 * p));
                v[0][r] = _mm256_and_si256(q, m4);
                v[1][r] = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
                if (fifth) {
                    v[0][r] = _mm256_or_si256(v[0][r], bit_to_16(qh[r], 2 * p));
                    v[1][r] = _mm256_or_si256(v[1][r], bit_to_16(qh[r], 2 * p + 1));
                }
            }
            if (super) put_blocks16(tile + i * QB_TILE4K_BYTES + Q4K_VALUES, 512, 0, 2 * p, v, 1);
            else put_blocks16(tile, QB_TILE_BLOCK_BYTES, 128, 8 * i + 2 * p, v, 1);
        }
    }
}
#endif

// A block's eight tile steps from the four 64-byte vectors of the sixteen-row layouts (Q4_K,
// 4-bit MLX): the low nibbles (values 4t..4t+3 of each row) are steps 0-3, the high ones
// (16 + 4t..) steps 4-7.
static inline void nibble_steps(uint8_t *steps, const uint8_t *v) {
    for (int t = 0; t < 4; t++)
        for (int x = 0; x < 64; x++) {
            steps[64 * t + x] = v[64 * t + x] & 0xF;
            steps[64 * (4 + t) + x] = v[64 * t + x] >> 4;
        }
}

// Rows [r0, r0 + 16) of a Q4_K matrix in the 16-row decode layout (qb_repack.h; r0 a
// multiple of 16): its sub-blocks' four vectors are already the tile's steps (nibble_steps);
// D and M as the plain packer computes them.
#if QB_TILE4K_SUPER
// Super-block `sb`'s header (QB_TILE4K_BYTES' d, -dmin, scales and minimums) from group-block
// `g` of the 16-row layout, eight rows a vector: the split 6-bit fields are joined as
// q4k_x16_scale_min joins them.
static void q4k_x16_super_header(const uint8_t *g, uint8_t *sb) {
    const __m256i m4 = _mm256_set1_epi32(0x0F), m2 = _mm256_set1_epi32(3);
    for (int h = 0; h < 2; h++) {
        const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(g + 16 * h)));
        const __m256 dmin = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(g + QB_Q4K_X16_DMIN + 16 * h)));
        _mm256_storeu_ps((float *)(sb + 32 * h), d);
        _mm256_storeu_ps((float *)(sb + 64 + 32 * h), _mm256_xor_ps(dmin, _mm256_set1_ps(-0.0f)));  // -dmin, as put_q4k_super
        const __m256i hi = _mm256_loadu_si256((const __m256i *)(g + QB_Q4K_X16_HI + 32 * h));
        __m256i mn_even = _mm256_setzero_si256();
        for (int j = 0; j < 8; j++) {
            const __m256i lo = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(g + QB_Q4K_X16_LO + 16 * j + 8 * h)));
            const __m256i sc = _mm256_or_si256(_mm256_and_si256(lo, m4),
                                               _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(hi, 2 * j), m2), 4));
            const __m256i mn = _mm256_or_si256(_mm256_srli_epi32(lo, 4),
                                               _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(hi, 16 + 2 * j), m2), 4));
            for (int sh = 0; sh < 4; sh++) {  // as q4k_scale_dword
                const __m256i v = _mm256_slli_epi32(sc, sh);
#if defined(QB_AVX512)
                _mm256_storeu_si256((__m256i *)(sb + Q4K_SC + 256 * j + 64 * sh + 32 * h), v);
#else
                _mm256_storeu_si256((__m256i *)(sb + Q4K_SC + 256 * j + 64 * sh + 32 * h), _mm256_or_si256(v, _mm256_slli_epi32(v, 16)));
#endif
            }
            if (j % 2 == 0) mn_even = mn;
            else _mm256_storeu_si256((__m256i *)(sb + Q4K_MN + 64 * (j / 2) + 32 * h), _mm256_or_si256(mn_even, _mm256_slli_epi32(mn, 16)));
        }
    }
}
#endif

static void pack_q4k_x16(const void *w, int64_t r0, int64_t cols, uint8_t *tile) {
    int64_t nb = cols / 256;
    const uint8_t *g = (const uint8_t *)w + r0 / QB_Q4K_X16_ROWS * nb * QB_Q4K_X16_BYTES;
    for (int64_t i = 0; i < nb; i++, g += QB_Q4K_X16_BYTES) {
#if QB_TILE4K_SUPER
        q4k_x16_super_header(g, tile + i * QB_TILE4K_BYTES);
        for (int j = 0; j < 8; j++) nibble_steps(tile + i * QB_TILE4K_BYTES + Q4K_VALUES + 512 * j, g + QB_Q4K_X16_QS + 256 * j);
        continue;
#endif
        for (int r = 0; r < QB_TILE_ROWS; r++) {
            qb_half hd, hm;
            memcpy(&hd, g + 2 * r, 2);
            memcpy(&hm, g + QB_Q4K_X16_DMIN + 2 * r, 2);
            for (int j = 0; j < 8; j++) {
                uint8_t sc, mn;
                q4k_x16_scale_min(g, j, r, &sc, &mn);
                put_scale(tile, QB_TILE_BLOCK_BYTES, 8 * i + j, r, h2f(hd) * (float)sc, -h2f(hm) * (float)mn);
            }
        }
        for (int j = 0; j < 8; j++) nibble_steps(tile + (8 * i + j) * QB_TILE_BLOCK_BYTES + 128, g + QB_Q4K_X16_QS + 256 * j);
    }
}

// Rows [r0, r0 + 16) of a Q4_0 matrix in sixteen-row groups (qb_repack.h; r0 a multiple of
// 16): its blocks' vectors are the tile's steps (nibble_steps); D and M as the other packers
// compute them.
static void pack_q40_x16(const void *w, int64_t r0, int64_t cols, uint8_t *tile) {
    const int64_t nb = cols / 32;
    const uint8_t *g = (const uint8_t *)w + r0 / QB_Q40_X16_ROWS * nb * QB_Q40_X16_BYTES;
    for (int64_t b = 0; b < nb; b++, g += QB_Q40_X16_BYTES) {
        uint8_t *blk = tile + b * QB_TILE_BLOCK_BYTES;
#if defined(QB_AVX512)
        // Packing is a pass over every weight per product: the scales in one conversion,
        // each vector's steps in two stores (in 32-byte halves, a 128-token prefill ran ~2%
        // slower than from the four-row layout). The portable set meets the layout only
        // after a switch of sets, in tests.
        const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)g));
        _mm512_storeu_ps((float *)blk, d);
        _mm512_storeu_ps((float *)(blk + 64), _mm512_mul_ps(d, _mm512_set1_ps(offset_m(QB_Q4_0, 1.0f))));
        const __m512i m4 = _mm512_set1_epi8(0x0F);
        for (int t = 0; t < 4; t++) {
            const __m512i v = _mm512_loadu_si512((const void *)(g + QB_Q40_X16_QS + 64 * t));
            _mm512_storeu_si512((void *)(blk + 128 + 64 * t), _mm512_and_si512(v, m4));
            _mm512_storeu_si512((void *)(blk + 128 + 64 * (4 + t)), _mm512_and_si512(_mm512_srli_epi16(v, 4), m4));
        }
#elif defined(__AVX2__)
        // The same in 32-byte halves (rows 0-7, 8-15), this set's width.
        const __m256i m4 = _mm256_set1_epi8(0x0F);
        const __m256 k = _mm256_set1_ps(offset_m(QB_Q4_0, 1.0f));
        const __m256 d0 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)g)), d1 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(g + 16)));
        _mm256_storeu_ps((float *)blk, d0);
        _mm256_storeu_ps((float *)blk + 8, d1);
        _mm256_storeu_ps((float *)(blk + 64), _mm256_mul_ps(d0, k));
        _mm256_storeu_ps((float *)(blk + 64) + 8, _mm256_mul_ps(d1, k));
        for (int t = 0; t < 4; t++) {
            const __m256i v0 = _mm256_loadu_si256((const __m256i *)(g + QB_Q40_X16_QS + 64 * t));
            const __m256i v1 = _mm256_loadu_si256((const __m256i *)(g + QB_Q40_X16_QS + 64 * t + 32));
            _mm256_storeu_si256((__m256i *)(blk + 128 + 64 * t), _mm256_and_si256(v0, m4));
            _mm256_storeu_si256((__m256i *)(blk + 128 + 64 * t + 32), _mm256_and_si256(v1, m4));
            _mm256_storeu_si256((__m256i *)(blk + 128 + 64 * (4 + t)), _mm256_and_si256(_mm256_srli_epi16(v0, 4), m4));
            _mm256_storeu_si256((__m256i *)(blk + 128 + 64 * (4 + t) + 32), _mm256_and_si256(_mm256_srli_epi16(v1, 4), m4));
        }
#else
        for (int r = 0; r < QB_TILE_ROWS; r++) {
            qb_half hd;
            memcpy(&hd, g + 2 * r, 2);
            put_scale(tile, QB_TILE_BLOCK_BYTES, b, r, h2f(hd), offset_m(QB_Q4_0, h2f(hd)));
        }
        nibble_steps(blk + 128, g + QB_Q40_X16_QS);
#endif
    }
}

void qb_pack_tile_ggml(int32_t type, int32_t interleaved, const void *w, int64_t r0, int64_t cols, uint8_t *tile) {
    if (type == QB_Q4_K && interleaved) return pack_q4k_x16(w, r0, cols, tile);
    if (type == QB_Q4_0 && interleaved == QB_Q40_X16_ROWS) return pack_q40_x16(w, r0, cols, tile);
#if defined(__AVX2__)
    if (type == QB_Q4_K) return pack_k_vec(0, w, r0, cols, tile);
    if (type == QB_Q5_K) return pack_k_vec(1, w, r0, cols, tile);
    // The four-row layout (`interleaved`) has its own packer; IQ4_NL and IQ4_XS have none.
#define QB_PACK(t) return interleaved ? pack_x4_vec(t, w, r0, cols, tile) : pack_ggml_vec(t, w, r0, cols, tile)
    switch (type) {
    case QB_Q4_0: QB_PACK(QB_Q4_0);
    case QB_Q4_1: QB_PACK(QB_Q4_1);
    case QB_Q5_0: QB_PACK(QB_Q5_0);
    case QB_Q5_1: QB_PACK(QB_Q5_1);
    case QB_Q8_0: QB_PACK(QB_Q8_0);
    case QB_IQ4_NL: return pack_ggml_vec(QB_IQ4_NL, w, r0, cols, tile);
    default: return pack_ggml_vec(QB_IQ4_XS, w, r0, cols, tile);  // the one type left
    }
#undef QB_PACK
#endif
    uint8_t v[32];
    for (int r = 0; r < QB_TILE_ROWS; r++) {
        int64_t row = r0 + r;
        if (type != QB_Q4_K && type != QB_Q5_K) {
            int64_t nb = cols / 32;
            for (int64_t b = 0; b < nb; b++) {
                float d, m;
                uint32_t qh = 0;
                const uint8_t *qs;
                if (is_iq4(type)) {
                    qs = iq4_block(type, w, row, b, nb, &d);
                    m = offset_m(type, d);
                } else {
                    qs = q32_block(type, interleaved, w, row, b, nb, &d, &m, &qh);
                }
                if (type == QB_Q8_0) {
                    for (int j = 0; j < 32; j++) v[j] = (uint8_t)(qs[j] ^ 0x80);  // int8 + 128
                } else if (is_iq4(type)) {
                    for (int j = 0; j < 16; j++) {
                        v[j] = (uint8_t)(kvalues_iq4nl[qs[j] & 0xF] + 128);
                        v[j + 16] = (uint8_t)(kvalues_iq4nl[qs[j] >> 4] + 128);
                    }
                } else {  // the fifth bits (Q5_0, Q5_1) on the nibbles
                    for (int j = 0; j < 16; j++) {
                        v[j] = (uint8_t)((qs[j] & 0xF) | (((qh >> j) & 1) << 4));
                        v[j + 16] = (uint8_t)((qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4));
                    }
                }
                put(tile, b, r, v, d, m);
            }
        } else {
            // Q4_K: d, dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles. Q5_K: the
            // same with 32 bytes of fifth bits before the nibbles (bit j of byte l: value l of
            // sub-block j).
            const int fifth = type == QB_Q5_K;
            int64_t nb = cols / 256;
            for (int64_t i = 0; i < nb; i++) {
                const uint8_t *blk = (const uint8_t *)w + (row * nb + i) * (fifth ? 176 : 144);
                qb_half hd, hm;
                memcpy(&hd, blk, 2);
                memcpy(&hm, blk + 2, 2);
                const uint8_t *sc = blk + 4, *qh = blk + 16, *qs = blk + (fifth ? 48 : 16);
                for (int j = 0; j < 8; j++) {
                    uint8_t s, m;
                    get_scale_min_k4(j, sc, &s, &m);
                    const uint8_t *q = qs + 32 * (j / 2);
                    for (int l = 0; l < 32; l++)
                        v[l] = (uint8_t)(((j & 1) ? q[l] >> 4 : q[l] & 0xF) | (fifth ? ((qh[l] >> j) & 1) << 4 : 0));
                    put(tile, 8 * i + j, r, v, h2f(hd) * (float)s, -h2f(hm) * (float)m);
                }
            }
        }
    }
}

void qb_pack_tile_mlx(int32_t bits, int64_t group, const uint32_t *w, const void *scales, const void *biases,
                      int32_t sdtype, int64_t r0, int64_t cols, uint8_t *tile) {
#if defined(__AVX2__)
    return pack_mlx_vec(bits, group, w, scales, biases, sdtype, r0, cols, tile);
#endif
    uint8_t v[32];
    int64_t nb = cols / 32, groups = cols / group;
    for (int r = 0; r < QB_TILE_ROWS; r++) {
        int64_t row = r0 + r;
        const uint8_t *bytes = (const uint8_t *)(w + row * (cols * bits / 32));
        for (int64_t b = 0; b < nb; b++) {
            if (bits == 4) {
                for (int j = 0; j < 32; j++) v[j] = (bytes[16 * b + j / 2] >> (4 * (j & 1))) & 0xF;
            } else {
                memcpy(v, bytes + 32 * b, 32);
            }
            int64_t g = row * groups + 32 * b / group;
            put(tile, b, r, v, load_scale(scales, sdtype, g), load_scale(biases, sdtype, g));
        }
    }
}

// Rows [r0, r0 + 16) of an MLX matrix in the 16-row decode layout (r0 a multiple of 16). Its
// vectors are already the tile's steps: 8-bit ones as they are (where the set tiles 8-bit
// values as bytes), 4-bit ones split as Q4_K's (nibble_steps); D and M the scale and bias
// widened as the plain packer widens them.
void qb_pack_tile_mlx_x16(int32_t bits, int64_t group, int32_t sdtype, const void *w, int64_t r0, int64_t cols,
                          uint8_t *tile) {
    int64_t groups = cols / group, nsub = group / 32, sz = mlx_scale_bytes(sdtype);
    int64_t bb = qb_mlx_x16_block_bytes(bits, group, sdtype), tb = qb_gemm_tile_block_bytes(bits);
    const uint8_t *o = (const uint8_t *)w + r0 / QB_MLX_X16_ROWS * groups * bb;
    for (int64_t j = 0; j < groups; j++, o += bb)
        for (int64_t s = 0; s < nsub; s++) {
            int64_t b = j * nsub + s;
            for (int r = 0; r < QB_TILE_ROWS; r++)
                put_scale(tile, tb, b, r, load_scale(o, sdtype, r), load_scale(o + QB_MLX_X16_ROWS * sz, sdtype, r));
            const uint8_t *v = o + 2 * QB_MLX_X16_ROWS * sz + 64 * bits * s;
            uint8_t *steps = tile + b * tb + 128;
            if (bits == 4) {
                nibble_steps(steps, v);
                continue;
            }
#if QB_TILE_16BIT_8
            // 16-bit steps: each row's 32 values gathered back (four per vector), then widened.
            __m256i rows[2][QB_TILE_ROWS];
            for (int r = 0; r < QB_TILE_ROWS; r++) {
                int32_t d[8];
                for (int t = 0; t < 8; t++) memcpy(d + t, v + 64 * t + 4 * r, 4);
                rows[0][r] = _mm256_loadu_si256((const __m256i *)d);
            }
            put_value_blocks16(tile, 8, b, rows, 0);
#else
            memcpy(steps, v, 512);
#endif
        }
}

// With `offs` (symmetric formats, M = k x D: qb_q8a_offsets) a block's offset is added to its
// integer sum, which is rounded once and scaled: acc = fmaf(sum + off, D x d, acc); without,
// M x s is added in f32.
static void gemm_scalar(const uint8_t *tile, int32_t bits, const qb_q8a *x, const int32_t *offs, float *y, int64_t nb) {
    float acc[QB_TILE_ROWS] = {0};
    const int wide = bits == 8 && QB_TILE_16BIT_8;
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *blk = tile + b * (wide ? QB_TILE16_BLOCK_BYTES : QB_TILE_BLOCK_BYTES);
        for (int r = 0; r < QB_TILE_ROWS; r++) {
            int sum = 0;
            if (wide) {
                for (int s = 0; s < 16; s++)
                    for (int t = 0; t < 2; t++) {
                        int16_t q;
                        memcpy(&q, blk + 128 + 64 * s + 4 * r + 2 * t, 2);
                        sum += q * x[b].qs[2 * s + t];
                    }
            } else {
                for (int s = 0; s < 8; s++)
                    for (int t = 0; t < 4; t++) sum += blk[128 + 64 * s + 4 * r + t] * x[b].qs[4 * s + t];
            }
            float d, m;
            memcpy(&d, blk + 4 * r, 4);
            memcpy(&m, blk + 64 + 4 * r, 4);
            if (offs) acc[r] = fmaf((float)(sum + offs[b]), d * x[b].d, acc[r]);
            else acc[r] += d * x[b].d * (float)sum + m * x[b].s;
        }
    }
    memcpy(y, acc, sizeof acc);
}

#if defined(QB_AVX512)
static inline __m512i bcast4_512(const int8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
}

// The integer sums of steps [s0, s1) of block b: is[c][j] += tile j's values (tiles tstride
// apart from `blk`) times activation row c's, one broadcast of each activation dword for all
// the tiles.
static inline __attribute__((always_inline)) void vnni_steps(__m512i is[8][2], const uint8_t *blk, int64_t tstride,
                                                             const qb_q8a *x, int64_t nb, int64_t b, int s0, int s1,
                                                             const int n, const int m) {
    for (int s = s0; s < s1; s++) {
        __m512i wv[2];
        for (int j = 0; j < m; j++) wv[j] = _mm512_loadu_si512((const void *)(blk + j * tstride + 128 + 64 * s));
        for (int c = 0; c < n; c++) {
            __m512i xv = bcast4_512(x[c * nb + b].qs + 4 * s);
            for (int j = 0; j < m; j++) is[c][j] = _mm512_dpbusd_epi32(is[c][j], wv[j], xv);
        }
    }
}

// `n` activation rows (x: n rows of nb blocks, offs: their offsets or NULL) against `m`
// tiles side by side (tile j at tile + j * tstride, its outputs at y + 16 j). Inlined with
// constant `n` and `m`, so the accumulators stay in registers. With offsets each sum starts
// at its block's offset and the M term is gone: per block and row, a multiply and one fma
// beside the eight vpdpbusd on the same two pipes, where M x s took another.
// Why two tiles: each vpdpbusd takes its activation dword as a 512-bit broadcast load, and
// on the Intel Xeon (Emerald Rapids) of these machines a core issues about one load into a
// zmm register a cycle (2.95-3.07 G/s), half the register-only vpdpbusd rate: one tile
// against 8 rows (89 loads per 64 vpdpbusd) ran the products load-bound at ~37% of the int8
// peak; a broadcast shared by two tiles nearly halves the loads
// (results/gemm-pairs-2026-11-29/). Each output keeps its arithmetic (the same integer sums,
// the same fma sequence over the blocks), so how rows and tiles are grouped does not change a
// bit.
static inline __attribute__((always_inline)) void gemm_vnni(const uint8_t *tile, int64_t tstride, const qb_q8a *x,
                                                            const int32_t *offs, int64_t nb, float *y, int64_t ystride,
                                                            const int n, const int m, const int off) {
    __m512 acc[8][2], macc[8][2];
    for (int c = 0; c < n; c++)
        for (int j = 0; j < m; j++) acc[c][j] = macc[c][j] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *blk = tile + b * QB_TILE_BLOCK_BYTES;
        __m512i is[8][2];
        for (int c = 0; c < n; c++) {
            __m512i start = off ? _mm512_set1_epi32(offs[c * nb + b]) : _mm512_setzero_si512();
            for (int j = 0; j < m; j++) is[c][j] = start;
        }
        vnni_steps(is, blk, tstride, x, nb, b, 0, 8, n, m);
        for (int j = 0; j < m; j++) {
            __m512 d = _mm512_loadu_ps((const float *)(blk + j * tstride)), mv = _mm512_loadu_ps((const float *)(blk + j * tstride + 64));
            for (int c = 0; c < n; c++) {
                const qb_q8a *a = x + c * nb + b;
                if (off) {
                    acc[c][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is[c][j]), _mm512_mul_ps(d, _mm512_set1_ps(a->d)), acc[c][j]);
                    continue;
                }
                acc[c][j] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(is[c][j]), _mm512_set1_ps(a->d)), d, acc[c][j]);
                macc[c][j] = _mm512_fmadd_ps(mv, _mm512_set1_ps(a->s), macc[c][j]);
            }
        }
    }
    for (int c = 0; c < n; c++)
        for (int j = 0; j < m; j++)
            _mm512_storeu_ps(y + c * ystride + 16 * j, off ? acc[c][j] : _mm512_add_ps(acc[c][j], macc[c][j]));
}

// Each shape with and without offsets: one tile against 8, 4 or 1 rows (a last odd tile),
// two tiles against 6 (with offsets; without, the M sums take the registers), 4 or 1 rows.
#define QB_GEMM_VNNI(n, m)                                                                                          \
    static void gemm_vnni##n##x##m(const uint8_t *t, int64_t ts, const qb_q8a *x, const int32_t *o, int64_t nb,     \
                                   float *y, int64_t ys) {                                                          \
        if (o) gemm_vnni(t, ts, x, o, nb, y, ys, n, m, 1);                                                           \
        else gemm_vnni(t, ts, x, NULL, nb, y, ys, n, m, 0);                                                          \
    }
QB_GEMM_VNNI(8, 1)
QB_GEMM_VNNI(4, 1)
QB_GEMM_VNNI(1, 1)
QB_GEMM_VNNI(6, 2)
QB_GEMM_VNNI(4, 2)
QB_GEMM_VNNI(1, 2)

// One kernel family's shapes (activation rows x tiles), as QB_GEMM_VNNI makes them; pair6
// is NULL for a family without a 6 x 2 shape (Q6_K's and Q2_K's, whose sums spilled in it).
typedef void (*vnni_fn)(const uint8_t *, int64_t, const qb_q8a *, const int32_t *, int64_t, float *, int64_t);
typedef struct {
    vnni_fn pair6, pair4, pair1, one8, one4, one1;
} vnni_shapes;

// Tiles side by side (tstride apart) against `count` activation rows, each row's offsets
// `ostride` after the last's (or none): pairs of tiles by the paired shapes (6 rows only with
// offsets, where the family has that shape), a last odd tile by the one-tile shapes.
static void vnni_tiles(const vnni_shapes *k, const uint8_t *tile, int64_t tiles, int64_t tstride, const qb_q8a *x,
                       const int32_t *offs, int64_t ostride, int64_t count, int64_t nb, float *y, int64_t ystride) {
    for (int64_t t = 0; t < tiles; t += 2) {
        const uint8_t *tp = tile + t * tstride;
        float *yt = y + QB_TILE_ROWS * t;
        int64_t c = 0;
#define QB_ROWS(c) tp, tstride, x + (c) * nb, offs ? offs + (c) * ostride : NULL, nb, yt + (c) * ystride, ystride
        if (t + 1 < tiles) {
            if (offs && k->pair6)
                for (; c + 5 < count; c += 6) k->pair6(QB_ROWS(c));
            for (; c + 3 < count; c += 4) k->pair4(QB_ROWS(c));
            for (; c < count; c++) k->pair1(QB_ROWS(c));
        } else {
            for (; c + 7 < count; c += 8) k->one8(QB_ROWS(c));
            for (; c + 3 < count; c += 4) k->one4(QB_ROWS(c));
            for (; c < count; c++) k->one1(QB_ROWS(c));
        }
#undef QB_ROWS
    }
}
#elif defined(__AVX2__)
// Without VNNI, 4- and 5-bit values go through vpmaddubsw, whose pairs of products add up
// in saturating 16-bit lanes; lanes sum across steps only as far as the values' width lets
// them: 4 bits all 8 steps (15 x 127 x 2 x 8 = 30480), widened once per block; 5 bits 4 steps
// (31 x 127 x 2 x 4 = 31496), widened twice per block. Not one pair of 8-bit products fits
// (255 x 127 x 2), so 8-bit values are tiled as 16-bit ones and go through vpmaddwd, whose
// pairs add up in 32 bits: per 32 values two multiplies and two adds, where a nibble split
// for vpmaddubsw took two multiplies, two adds and the split (ik_llama.cpp's sign trick
// takes three multiply-unit instructions: vpsignb, vpmaddubsw, vpmaddwd).
// Block `b` of a tile (both 8-row halves: each broadcast of an activation's bytes serves
// two products) against `n` activation rows, whose f32 sums are acc[16 c + row]; x16 holds
// the rows' values of this block as int16 (32 per row) for 8-bit tiles; with `off`, offs
// their offsets (as x, n rows of nb). The step loop stays rolled: unrolled, the compiler
// kept every step's weights live and spilled the sums.
static inline __attribute__((always_inline)) void block_x16(const uint8_t *blk, const qb_q8a *x, const int16_t *x16,
                                                            const int32_t *offs, int64_t nb, int64_t b, float *acc,
                                                            const int n, const int bits, const int off) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i lo[4][2], wide[4][2];
    for (int c = 0; c < n; c++)
        for (int h = 0; h < 2; h++) lo[c][h] = wide[c][h] = _mm256_setzero_si256();
    const uint8_t *steps = blk + 128;
    // Step 0 starts the sums (a product is its own first sum: one add fewer per lane).
    {
        __m256i wv[2];
        for (int h = 0; h < 2; h++) wv[h] = _mm256_loadu_si256((const __m256i *)(steps + 32 * h));
        for (int c = 0; c < n; c++) {
            int32_t v;
            memcpy(&v, bits == 8 ? (const void *)(x16 + 32 * c) : (const void *)(x[c * nb + b].qs), 4);
            __m256i xv = _mm256_set1_epi32(v);
            for (int h = 0; h < 2; h++) lo[c][h] = bits == 8 ? _mm256_madd_epi16(wv[h], xv) : _mm256_maddubs_epi16(wv[h], xv);
        }
    }
#pragma clang loop unroll(disable)
    for (int s = 1; s < (bits == 8 ? 16 : 8); s++) {
        __m256i wv[2];
        for (int h = 0; h < 2; h++) wv[h] = _mm256_loadu_si256((const __m256i *)(steps + 64 * s + 32 * h));
        for (int c = 0; c < n; c++) {
            int32_t v;
            memcpy(&v, bits == 8 ? (const void *)(x16 + 32 * c + 2 * s) : (const void *)(x[c * nb + b].qs + 4 * s), 4);
            __m256i xv = _mm256_set1_epi32(v);
            for (int h = 0; h < 2; h++)
                lo[c][h] = bits == 8 ? _mm256_add_epi32(lo[c][h], _mm256_madd_epi16(wv[h], xv))
                                     : _mm256_add_epi16(lo[c][h], _mm256_maddubs_epi16(wv[h], xv));
        }
        if (bits == 5 && s == 3)
            for (int c = 0; c < n; c++)
                for (int h = 0; h < 2; h++) {
                    wide[c][h] = _mm256_madd_epi16(lo[c][h], ones);
                    lo[c][h] = _mm256_setzero_si256();
                }
    }
    for (int h = 0; h < 2; h++) {
        __m256 d = _mm256_loadu_ps((const float *)(blk + 32 * h)), m = _mm256_loadu_ps((const float *)(blk + 64 + 32 * h));
        for (int c = 0; c < n; c++) {
            const qb_q8a *a = x + c * nb + b;
            __m256i is = bits == 8 ? lo[c][h] : _mm256_madd_epi16(lo[c][h], ones);
            if (bits == 5) is = _mm256_add_epi32(is, wide[c][h]);
            float *sum = acc + 16 * c + 8 * h;
            if (off) {  // an integer add in place of M x s's fma on the multiply pipes
                is = _mm256_add_epi32(is, _mm256_set1_epi32(offs[c * nb + b]));
                __m256 scale = _mm256_mul_ps(d, _mm256_set1_ps(a->d));
                _mm256_storeu_ps(sum, _mm256_fmadd_ps(_mm256_cvtepi32_ps(is), scale, _mm256_loadu_ps(sum)));
                continue;
            }
            __m256 t = _mm256_fmadd_ps(_mm256_cvtepi32_ps(is), _mm256_mul_ps(d, _mm256_set1_ps(a->d)), _mm256_loadu_ps(sum));
            _mm256_storeu_ps(sum, _mm256_fmadd_ps(m, _mm256_set1_ps(a->s), t));
        }
    }
}

// Activation rows [0, count) (count a multiple of `g`: 4, or the last 1-3 rows of a column
// block) against `tiles` tiles (`tstride` bytes apart, outputs 16 columns apart), block by
// block: each block is read from L1 by every group of `g` rows (taken a group at a time over
// all blocks, a 2048-column tile of 40 KB streamed from L2 once per group). Up to 16 rows at a
// time, their sums in `acc`. 8-bit values take up to four tiles per block, so that a block's
// activations widened to 16 bits (x16) serve all of them: widened once per tile, they took 8%
// of the kernel's time (cpu-clock samples, 1B Q8_0).
static inline __attribute__((always_inline)) void gemm_avx2(const uint8_t *tile, int64_t tiles, int64_t tstride,
                                                            const int bits, const qb_q8a *x, const int32_t *offs,
                                                            int64_t count, int64_t nb, float *y, int64_t ystride,
                                                            const int off, const int g) {
    enum { tile_group = 4 };
    const int64_t chunk = 16, block_bytes = bits == 8 ? QB_TILE16_BLOCK_BYTES : QB_TILE_BLOCK_BYTES,
                  per_pass = bits == 8 ? tile_group : 1;
    float acc[tile_group][16 * QB_TILE_ROWS];
    int16_t x16[16 * 32];
    for (int64_t t0 = 0; t0 < tiles; t0 += per_pass) {
        const int64_t tn = tiles - t0 < per_pass ? tiles - t0 : per_pass;
        for (int64_t c0 = 0; c0 < count; c0 += chunk) {
            int64_t n = count - c0 < chunk ? count - c0 : chunk;
            for (int64_t t = 0; t < tn; t++) memset(acc[t], 0, sizeof(float) * (size_t)(16 * n));
            for (int64_t b = 0; b < nb; b++) {
                if (bits == 8)
                    for (int64_t c = 0; c < n; c++)
                        for (int k = 0; k < 2; k++) {
                            __m128i q = _mm_loadu_si128((const __m128i *)(x[(c0 + c) * nb + b].qs + 16 * k));
                            _mm256_storeu_si256((__m256i *)(x16 + 32 * c + 16 * k), _mm256_cvtepi8_epi16(q));
                        }
                for (int64_t t = 0; t < tn; t++)
                    for (int64_t c = 0; c < n; c += g)
                        block_x16(tile + (t0 + t) * tstride + b * block_bytes, x + (c0 + c) * nb, x16 + 32 * c,
                                  off ? offs + (c0 + c) * nb : NULL, nb, b, acc[t] + 16 * c, g, bits, off);
            }
            for (int64_t t = 0; t < tn; t++)
                for (int64_t c = 0; c < n; c++)
                    memcpy(y + (c0 + c) * ystride + QB_TILE_ROWS * (t0 + t), acc[t] + 16 * c, sizeof(float) * QB_TILE_ROWS);
        }
    }
}
// The last 1-3 rows of a column block (`n`), as a group of their own: the same arithmetic per
// row as in a group of four, so an output does not depend on where its row falls. In the
// scalar definition such a row had cost about 18 times a vector row's instructions (Gemma 3
// 270M): a 127-token prefill ran at 0.60-0.64x the speed of a 128-token one (1B Q4_0 and
// Q4_K_M, Gemma 3 270M; results/prefill-rows-2026-12-02-zen4/).
static inline __attribute__((always_inline)) void gemm_avx2_rest(const uint8_t *tile, int64_t tiles, int64_t tstride,
                                                                 const int bits, const qb_q8a *x, const int32_t *offs,
                                                                 int64_t n, int64_t nb, float *y, int64_t ystride,
                                                                 const int off) {
    switch (n) {
    case 3: gemm_avx2(tile, tiles, tstride, bits, x, offs, 3, nb, y, ystride, off, 3); break;
    case 2: gemm_avx2(tile, tiles, tstride, bits, x, offs, 2, nb, y, ystride, off, 2); break;
    default: gemm_avx2(tile, tiles, tstride, bits, x, offs, 1, nb, y, ystride, off, 1); break;
    }
}

// Each value width with and without offsets, one function each (with both in one, clang
// unrolled the step loop of one copy and spilled its sums), and each one's last rows apart
// from its groups of four.
typedef void (*gemm_avx2_fn)(const uint8_t *, int64_t, int64_t, const qb_q8a *, const int32_t *, int64_t, int64_t,
                             float *, int64_t);
#define QB_GEMM_AVX2_FN(bits, name, offsets, g)                                                                      \
    static void name(const uint8_t *t, int64_t tiles, int64_t ts, const qb_q8a *x, const int32_t *o, int64_t n,       \
                     int64_t nb, float *y, int64_t ys) {                                                              \
        if (g == 4) gemm_avx2(t, tiles, ts, bits, x, offsets ? o : NULL, n, nb, y, ys, offsets, 4);                  \
        else gemm_avx2_rest(t, tiles, ts, bits, x, offsets ? o : NULL, n, nb, y, ys, offsets);                       \
    }
#define QB_GEMM_AVX2(bits)                                                                                          \
    QB_GEMM_AVX2_FN(bits, gemm_avx2_b##bits, 0, 4)                                                                  \
    QB_GEMM_AVX2_FN(bits, gemm_avx2_b##bits##o, 1, 4)                                                               \
    QB_GEMM_AVX2_FN(bits, gemm_avx2_b##bits##_rest, 0, 0)                                                           \
    QB_GEMM_AVX2_FN(bits, gemm_avx2_b##bits##o_rest, 1, 0)
QB_GEMM_AVX2(4)
QB_GEMM_AVX2(5)
QB_GEMM_AVX2(8)

// The kernel for `bits`-bit values, with or without offsets: groups of four rows, or `rest`.
static gemm_avx2_fn gemm_avx2_kernel(int32_t bits, int off, int rest) {
    static const gemm_avx2_fn k[3][2][2] = {
        {{gemm_avx2_b4, gemm_avx2_b4_rest}, {gemm_avx2_b4o, gemm_avx2_b4o_rest}},
        {{gemm_avx2_b5, gemm_avx2_b5_rest}, {gemm_avx2_b5o, gemm_avx2_b5o_rest}},
        {{gemm_avx2_b8, gemm_avx2_b8_rest}, {gemm_avx2_b8o, gemm_avx2_b8o_rest}},
    };
    return k[bits <= 4 ? 0 : bits == 5 ? 1 : 2][off != 0][rest != 0];
}
#endif

// ---------------------------------------------------------------------------------------
// Q6_K: 16-value halves each with their own scale, the offset of 32 taken out in integers
// (offs16: qb_q8a_offsets with width 16 and k = -32); in the AVX2 fallback 16-bit lanes hold
// two steps at most (63 x 127 x 2 x 2 = 32004).

#if defined(__AVX2__)
// A super-block's sixteen int8 scales times its f32 scale, as the tiles take them.
static inline void scales16_f32(const __m128i sc, const __m256 d, float out[16]) {
    _mm256_storeu_ps(out, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(sc)), d));
    _mm256_storeu_ps(out + 8, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(sc, 8))), d));
}

// Super-block i's scales per 16 values, s[r][k] for row r, into its eight tile blocks of `bb`
// bytes at `offset` in each: block j holds sub-blocks 2j and 2j + 1, a row's scale every 4 bytes.
static inline void put_scales16(uint8_t *tile, const int64_t bb, const int64_t i, const int64_t offset,
                                const float s[QB_TILE_ROWS][16]) {
    for (int j = 0; j < 8; j++) {
        uint8_t *out = tile + (8 * i + j) * bb + offset;
        for (int hh = 0; hh < 2; hh++)
            for (int r = 0; r < QB_TILE_ROWS; r++) memcpy(out + 64 * hh + 4 * r, &s[r][2 * j + hh], 4);
    }
}
#endif

#if QB_TILE6_SIGNED
// Super-block i's header fields of a signed tile (Q6_K, Q3_K) for row r: its f32 d in all eight
// blocks, and its sixteen int8 scales `sc` as int16 pairs, block j's (sc[2j], sc[2j + 1]) in
// one dword, which is how cvtepi8_epi16 leaves them.
static inline void put_signed_scales(uint8_t *tile, int64_t i, int r, float d, __m128i sc) {
    int32_t pairs[8];
    _mm256_storeu_si256((__m256i *)pairs, _mm256_cvtepi8_epi16(sc));
    for (int j = 0; j < 8; j++) {
        uint8_t *out = tile + (8 * i + j) * TILE6_BYTES;
        memcpy(out + 4 * r, &d, 4);
        memcpy(out + 64 + 4 * r, pairs + j, 4);
    }
}

// Super-block i's start values K (block6s_x16): per block and row, -128 x the sum over its two
// 16-value halves of the half's scale times the sum of its signed values, read back from the
// steps and scales already written.
static inline void put_signed_starts(uint8_t *tile, int64_t i) {
    const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
    for (int j = 0; j < 8; j++) {
        uint8_t *blk = tile + (8 * i + j) * TILE6_BYTES;
        for (int rh = 0; rh < 2; rh++) {
            __m256i t[2];
            for (int h = 0; h < 2; h++) {
                __m256i p = _mm256_setzero_si256();
                for (int st = 4 * h; st < 4 * h + 4; st++)
                    p = _mm256_add_epi16(p, _mm256_maddubs_epi16(ones8, _mm256_loadu_si256((const __m256i *)(blk + TILE6_STEPS + 64 * st + 32 * rh))));
                t[h] = _mm256_madd_epi16(p, ones16);
            }
            const __m256i sc = _mm256_loadu_si256((const __m256i *)(blk + 64 + 32 * rh));
            const __m256i sc0 = _mm256_srai_epi32(_mm256_slli_epi32(sc, 16), 16), sc1 = _mm256_srai_epi32(sc, 16);
            const __m256i k = _mm256_add_epi32(_mm256_mullo_epi32(sc0, t[0]), _mm256_mullo_epi32(sc1, t[1]));
            _mm256_storeu_si256((__m256i *)(blk + 128 + 32 * rh), _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(k, 7)));
        }
    }
}
#endif

#if defined(__AVX2__)
// Q6_K as pack_q4k_vec: per row and 128-value half, the low nibbles with their two high
// bits give sub-blocks 0-1 of the half, the high nibbles 2-3.
static void pack_q6k_vec(const void *w, int64_t r0, int64_t cols, uint8_t *tile) {
    int64_t nb = cols / 256;
    const __m256i m4 = _mm256_set1_epi8(0x0F), m3 = _mm256_set1_epi8(0x03), bias = _mm256_set1_epi8(QB_TILE6_SIGNED ? 32 : 0);
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *blk[QB_TILE_ROWS];
#if !QB_TILE6_SIGNED
        float d[QB_TILE_ROWS][16];
#endif
        for (int r = 0; r < QB_TILE_ROWS; r++) {
            blk[r] = (const uint8_t *)w + ((r0 + r) * nb + i) * 210;
            qb_half hd;
            memcpy(&hd, blk[r] + 208, 2);
#if QB_TILE6_SIGNED
            put_signed_scales(tile, i, r, h2f(hd), _mm_loadu_si128((const __m128i *)(blk[r] + 192)));
#else
            scales16_f32(_mm_loadu_si128((const __m128i *)(blk[r] + 192)), _mm256_set1_ps(h2f(hd)), d[r]);
#endif
        }
#if !QB_TILE6_SIGNED
        put_scales16(tile, QB_TILE6_BLOCK_BYTES, i, 0, (const float(*)[16])d);
#endif
        for (int n = 0; n < 2; n++) {
            __m256i lo[2][QB_TILE_ROWS], hi[2][QB_TILE_ROWS];
            for (int r = 0; r < QB_TILE_ROWS; r++) {
                __m256i h = _mm256_loadu_si256((const __m256i *)(blk[r] + 128 + 32 * n));
                for (int k = 0; k < 2; k++) {
                    __m256i ql = _mm256_loadu_si256((const __m256i *)(blk[r] + 64 * n + 32 * k));
                    __m256i hk = _mm256_srli_epi16(h, 2 * k);
                    lo[k][r] = _mm256_sub_epi8(_mm256_or_si256(_mm256_and_si256(ql, m4), _mm256_slli_epi16(_mm256_and_si256(hk, m3), 4)), bias);
                    hi[k][r] = _mm256_sub_epi8(_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql, 4), m4),
                                                               _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hk, 4), m3), 4)),
                                               bias);
                }
            }
            put_blocks16(tile, TILE6_BYTES, TILE6_STEPS, 8 * i + 4 * n, lo, 1);
            put_blocks16(tile, TILE6_BYTES, TILE6_STEPS, 8 * i + 4 * n + 2, hi, 1);
        }
#if QB_TILE6_SIGNED
        put_signed_starts(tile, i);
#endif
    }
}
#endif

#if defined(__AVX2__)
// From the 16-row decode layout: each pair's eight steps are the kernel's value vectors as
// they stand (q6k_x16_values_256, eight rows at a time; signed tiles take 32 off), and the
// scales as pack_q6k_vec writes them: D = d x sc one multiply per row, or d and the integer
// scales.
static void pack_q6k_x16_vec(const void *w, int64_t r0, int64_t cols, uint8_t *tile) {
    const int64_t nb = cols / 256;
    const uint8_t *g = (const uint8_t *)w + (r0 / QB_Q6K_X16_ROWS) * nb * QB_Q6K_X16_BYTES;
    const __m256i bias = _mm256_set1_epi8(QB_TILE6_SIGNED ? 32 : 0);
    for (int64_t i = 0; i < nb; i++, g += QB_Q6K_X16_BYTES) {
        for (int half = 0; half < 2; half++) {
            const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(g + 16 * half)));
            for (int p = 0; p < 8; p++) {
                uint8_t *out = tile + (8 * i + p) * TILE6_BYTES;
#if QB_TILE6_SIGNED
                // The rows' f32 d, and their two scales as an int16 pair per row.
                const __m256i s0 = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(g + q6k_x16_sc(2 * p) + 8 * half)));
                const __m256i s1 = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(g + q6k_x16_sc(2 * p + 1) + 8 * half)));
                _mm256_storeu_ps((float *)(out + 32 * half), d);
                _mm256_storeu_si256((__m256i *)(out + 64 + 32 * half),
                                    _mm256_or_si256(_mm256_and_si256(s0, _mm256_set1_epi32(0xFFFF)), _mm256_slli_epi32(s1, 16)));
#else
                for (int hh = 0; hh < 2; hh++) {
                    const __m128i sc = _mm_loadl_epi64((const __m128i *)(g + q6k_x16_sc(2 * p + hh) + 8 * half));
                    const __m256 scale = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(sc));
                    _mm256_storeu_ps((float *)(out + 64 * hh + 32 * half), _mm256_mul_ps(scale, d));
                }
#endif
                __m256i v[8];
                q6k_x16_values_256(g + q6k_x16_qs(p) + 32 * half, v);
                for (int st = 0; st < 8; st++)
                    _mm256_storeu_si256((__m256i *)(out + TILE6_STEPS + 64 * st + 32 * half), _mm256_sub_epi8(v[st], bias));
            }
        }
#if QB_TILE6_SIGNED
        put_signed_starts(tile, i);
#endif
    }
}
#endif

#if defined(__AVX2__)
// Q2_K or Q3_K (`three`) rows into their tiles, as pack_q6k_vec: per row and 128-value half,
// one load of quant bytes (and Q3_K's hmask) gives the half's four blocks, k's values at bits
// 2k.. (and hmask bit 4n + k, as 4); D = d x sc per 16 values, and Q2_K's M after the steps.
static inline __attribute__((always_inline)) void pack_k23_vec(const void *w, const int three, int64_t r0, int64_t cols,
                                                               uint8_t *tile) {
    const int64_t nb = cols / 256, bb = three ? TILE6_BYTES : QB_TILE2K_BLOCK_BYTES, steps = three ? TILE6_STEPS : 128;
    const int64_t bytes = three ? (int64_t)sizeof(block_q3_K) : (int64_t)sizeof(block_q2_K);
    const __m256i m3 = _mm256_set1_epi8(3), bias = _mm256_set1_epi8(three && QB_TILE6_SIGNED ? 4 : 0);
    const __m128i lo4 = _mm_set1_epi8(0x0F);
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *qs[QB_TILE_ROWS], *hmask[QB_TILE_ROWS];
        float d[QB_TILE_ROWS][16], m[QB_TILE_ROWS][16];
        for (int r = 0; r < QB_TILE_ROWS; r++) {
            const uint8_t *blk = (const uint8_t *)w + ((r0 + r) * nb + i) * bytes;
            __m128i sc, mn = _mm_setzero_si128();
            __m256 dv, mv = _mm256_setzero_ps();
            if (three) {
                const block_q3_K *b = (const block_q3_K *)blk;
                sc = q3k_scales_128(b->scales);
                dv = _mm256_set1_ps(h2f(b->d));
                qs[r] = b->qs;
                hmask[r] = b->hmask;
            } else {
                const block_q2_K *b = (const block_q2_K *)blk;
                const __m128i raw = _mm_loadu_si128((const __m128i *)b->scales);
                sc = _mm_and_si128(raw, lo4);
                mn = _mm_and_si128(_mm_srli_epi16(raw, 4), lo4);
                dv = _mm256_set1_ps(h2f(b->d));
                mv = _mm256_set1_ps(h2f(b->dmin));
                qs[r] = b->qs;
                hmask[r] = NULL;
            }
#if QB_TILE6_SIGNED
            if (three) {
                put_signed_scales(tile, i, r, _mm256_cvtss_f32(dv), sc);
                continue;
            }
#endif
            scales16_f32(sc, dv, d[r]);
            if (!three) scales16_f32(mn, mv, m[r]);
        }
        if (!three || !QB_TILE6_SIGNED) put_scales16(tile, bb, i, 0, (const float(*)[16])d);
        if (!three) put_scales16(tile, bb, i, QB_TILE6_BLOCK_BYTES, (const float(*)[16])m);
        for (int n = 0; n < 2; n++) {
            __m256i v[2][2][QB_TILE_ROWS];
            for (int r = 0; r < QB_TILE_ROWS; r++) {
                const __m256i q = _mm256_loadu_si256((const __m256i *)(qs[r] + 32 * n));
                const __m256i hm = three ? _mm256_loadu_si256((const __m256i *)hmask[r]) : _mm256_setzero_si256();
                for (int k = 0; k < 4; k++) {
                    __m256i x = _mm256_and_si256(_mm256_srli_epi16(q, 2 * k), m3);
                    if (three) x = _mm256_or_si256(x, q3k_high_256(hm, 4 * n + k));
                    v[k / 2][k % 2][r] = _mm256_sub_epi8(x, bias);
                }
            }
            put_blocks16(tile, bb, steps, 8 * i + 4 * n, v[0], 1);
            put_blocks16(tile, bb, steps, 8 * i + 4 * n + 2, v[1], 1);
        }
#if QB_TILE6_SIGNED
        if (three) put_signed_starts(tile, i);
#endif
    }
}
#endif

// Q2_K or Q3_K (`three`) rows into their tiles by the definitions (q3k_value, q3k_scales).
static void pack_k23(const void *w, int three, int64_t r0, int64_t cols, uint8_t *tile) {
#if defined(__AVX2__)
    if (three) return pack_k23_vec(w, 1, r0, cols, tile);
    return pack_k23_vec(w, 0, r0, cols, tile);
#endif
    const int64_t nb = cols / 256, bb = three ? QB_TILE6_BLOCK_BYTES : QB_TILE2K_BLOCK_BYTES;
    for (int r = 0; r < QB_TILE_ROWS; r++) {
        for (int64_t i = 0; i < nb; i++) {
            float dd[16], mm[16];
            uint8_t v[256];
            if (three) {
                const block_q3_K *blk = (const block_q3_K *)w + (r0 + r) * nb + i;
                int8_t sc[16];
                q3k_scales(blk->scales, sc);
                for (int j = 0; j < 16; j++) dd[j] = h2f(blk->d) * (float)sc[j];
                for (int k = 0; k < 256; k++) v[k] = (uint8_t)q3k_value(blk, k);
            } else {
                const block_q2_K *blk = (const block_q2_K *)w + (r0 + r) * nb + i;
                for (int j = 0; j < 16; j++) {
                    dd[j] = h2f(blk->d) * (float)(blk->scales[j] & 0xF);
                    mm[j] = h2f(blk->dmin) * (float)(blk->scales[j] >> 4);
                }
                for (int k = 0; k < 256; k++) v[k] = (uint8_t)k23_low_bits(blk->qs, k);
            }
            for (int j = 0; j < 8; j++) {
                uint8_t *out = tile + (8 * i + j) * bb;
                for (int hh = 0; hh < 2; hh++) {
                    memcpy(out + 64 * hh + 4 * r, &dd[2 * j + hh], 4);
                    if (!three) memcpy(out + QB_TILE6_BLOCK_BYTES + 64 * hh + 4 * r, &mm[2 * j + hh], 4);
                }
                for (int k = 0; k < 32; k++) out[128 + 64 * (k / 4) + 4 * r + k % 4] = v[32 * j + k];
            }
        }
    }
}

void qb_pack_tile_q2k(const void *w, int64_t r0, int64_t cols, uint8_t *tile) { pack_k23(w, 0, r0, cols, tile); }

void qb_pack_tile_q3k(const void *w, int64_t r0, int64_t cols, uint8_t *tile) { pack_k23(w, 1, r0, cols, tile); }

void qb_pack_tile_q6k(const void *w, int32_t interleaved, int64_t r0, int64_t cols, uint8_t *tile) {
#if defined(__AVX2__)
    return interleaved ? pack_q6k_x16_vec(w, r0, cols, tile) : pack_q6k_vec(w, r0, cols, tile);
#endif
    int64_t nb = cols / 256;
    for (int r = 0; r < QB_TILE_ROWS; r++) {
        for (int64_t i = 0; i < nb; i++) {
            uint8_t v[256];
            int8_t sc[16];
            qb_half hd;
            if (interleaved) {
                const uint8_t *g = (const uint8_t *)w + ((r0 + r) / QB_Q6K_X16_ROWS * nb + i) * QB_Q6K_X16_BYTES;
                const int rr = (int)((r0 + r) % QB_Q6K_X16_ROWS);
                hd = q6k_x16_row(g, rr, v, sc);
            } else {
                const uint8_t *blk = (const uint8_t *)w + ((r0 + r) * nb + i) * 210;
                q6k_values(blk, v);
                memcpy(sc, blk + 192, 16);
                memcpy(&hd, blk + 208, 2);
            }
            float d = h2f(hd);
            for (int j = 0; j < 8; j++) {
                uint8_t *out = tile + (8 * i + j) * QB_TILE6_BLOCK_BYTES;
                for (int hh = 0; hh < 2; hh++) {
                    float dd = d * (float)sc[2 * j + hh];
                    memcpy(out + 64 * hh + 4 * r, &dd, 4);
                }
                for (int s = 0; s < 8; s++) memcpy(out + 128 + 64 * s + 4 * r, v + 32 * j + 4 * s, 4);
            }
        }
    }
}

// The definition, as gemm_scalar's with offsets, per 16-value half; with `mins` (Q2_K's
// tiles) offs16 holds the activations' sums per 16 instead, which meet the minimums.
static void gemm6_scalar(const uint8_t *tile, const qb_q8a *x, const int32_t *offs16, float *y, int64_t nb, int mins) {
    float acc[QB_TILE_ROWS] = {0};
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *blk = tile + b * (mins ? QB_TILE2K_BLOCK_BYTES : QB_TILE6_BLOCK_BYTES);
        for (int r = 0; r < QB_TILE_ROWS; r++) {
            for (int h = 0; h < 2; h++) {
                int sum = mins ? 0 : offs16[2 * b + h];
                for (int s = 4 * h; s < 4 * h + 4; s++)
                    for (int t = 0; t < 4; t++) sum += blk[128 + 64 * s + 4 * r + t] * x[b].qs[4 * s + t];
                float d, m;
                memcpy(&d, blk + 64 * h + 4 * r, 4);
                acc[r] = fmaf((float)sum, d * x[b].d, acc[r]);
                if (mins) {
                    memcpy(&m, blk + QB_TILE6_BLOCK_BYTES + 64 * h + 4 * r, 4);
                    acc[r] = fmaf(-m, (float)offs16[2 * b + h] * x[b].d, acc[r]);
                }
            }
        }
    }
    memcpy(y, acc, sizeof acc);
}

#if defined(QB_AVX512)
// `n` activation rows against `m` Q6_K tiles side by side (as gemm_vnni: each activation
// load serves both tiles of a pair; the same sums in the same order for every output).
// With `mins` (Q2_K's tiles), the sums start at 0 and offs16's sums per 16 meet the minimums.
// A block's two halves (a D each) meet their D in u = sum0 D0 + sum1 D1, and u the
// activations' d by one fma: three multiplies or fmas per block, row and tile beside the
// eight vpdpbusd, on the pipes those run on, where D x d and an fma per half took four
// (results/epilogue-pipes-avx512-2026-12-04-zen4/: the products alone ran at 67% of their
// rate, now 72%). u takes registers the sums of a sixth row would need, so pairs of tiles
// go against four rows at most.
static inline __attribute__((always_inline)) void gemm6_vnni(const uint8_t *tile, int64_t tstride, const qb_q8a *x,
                                                             const int32_t *offs16, int64_t nb, float *y, int64_t ystride,
                                                             const int n, const int m, const int mins) {
    __m512 acc[8][2];
    for (int c = 0; c < n; c++)
        for (int j = 0; j < m; j++) acc[c][j] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *blk = tile + b * (mins ? QB_TILE2K_BLOCK_BYTES : QB_TILE6_BLOCK_BYTES);
        __m512 u[8][2];
        for (int h = 0; h < 2; h++) {
            __m512i is[8][2];
            for (int c = 0; c < n; c++) {
                __m512i start = mins ? _mm512_setzero_si512() : _mm512_set1_epi32(offs16[c * 2 * nb + 2 * b + h]);
                for (int j = 0; j < m; j++) is[c][j] = start;
            }
            vnni_steps(is, blk, tstride, x, nb, b, 4 * h, 4 * h + 4, n, m);
            for (int j = 0; j < m; j++) {
                const __m512 d = _mm512_loadu_ps((const float *)(blk + j * tstride + 64 * h));
                for (int c = 0; c < n; c++)
                    u[c][j] = h == 0 ? _mm512_mul_ps(_mm512_cvtepi32_ps(is[c][j]), d)
                                     : _mm512_fmadd_ps(_mm512_cvtepi32_ps(is[c][j]), d, u[c][j]);
                if (mins) {
                    const __m512 mv = _mm512_loadu_ps((const float *)(blk + j * tstride + QB_TILE6_BLOCK_BYTES + 64 * h));
                    for (int c = 0; c < n; c++)
                        u[c][j] = _mm512_fnmadd_ps(mv, _mm512_set1_ps((float)offs16[c * 2 * nb + 2 * b + h]), u[c][j]);
                }
            }
        }
        for (int j = 0; j < m; j++)
            for (int c = 0; c < n; c++) acc[c][j] = _mm512_fmadd_ps(u[c][j], _mm512_set1_ps(x[c * nb + b].d), acc[c][j]);
    }
    for (int c = 0; c < n; c++)
        for (int j = 0; j < m; j++) _mm512_storeu_ps(y + c * ystride + 16 * j, acc[c][j]);
}

#define QB_GEMM6_VNNI(n, m)                                                                                         \
    static void gemm6_vnni##n##x##m(const uint8_t *t, int64_t ts, const qb_q8a *x, const int32_t *o, int64_t nb,    \
                                    float *y, int64_t ys) {                                                         \
        gemm6_vnni(t, ts, x, o, nb, y, ys, n, m, 0);                                                                \
    }                                                                                                               \
    static void gemm2k_vnni##n##x##m(const uint8_t *t, int64_t ts, const qb_q8a *x, const int32_t *o, int64_t nb,   \
                                     float *y, int64_t ys) {                                                        \
        gemm6_vnni(t, ts, x, o, nb, y, ys, n, m, 1);                                                                \
    }
QB_GEMM6_VNNI(8, 1)
QB_GEMM6_VNNI(4, 1)
QB_GEMM6_VNNI(1, 1)
QB_GEMM6_VNNI(4, 2)
QB_GEMM6_VNNI(1, 2)
#elif defined(__AVX2__)
// Block `b` of a signed tile (both 8-row halves) against `n` activation rows (1..4), whose
// f32 sums are acc[16 c + row]. Without VNNI every multiply goes through vpmaddubsw
// (unsigned x signed bytes) and vpmaddwd, which share two pipes with the f32 multiplies and
// fmas on AMD Zen 4 (results/q6k-signed-avx2-2026-12-04-zen4/): with unsigned values, an
// offset and an f32 scale per 16 values, Q6_K took 8 vpmaddubsw, 4 vpmaddwd, 2 multiplies
// and 2 fmas per 32 values and 8 rows. Here the activations meet the multiplier as unsigned
// bytes (x + 128, one xor per block) and the values signed (Q6_K q - 32, Q3_K q - 4). A
// 16-bit lane holds four Q6_K products (4 x 255 x 32 = 32640), so each pair of steps is
// widened by one vpmaddwd that also applies the rows' integer scales; with `narrow` (Q3_K,
// 8 x 255 x 4 = 8160) a whole 16-value half is. Each sum starts at the tile's K (which takes
// the bias's 128 x scale x value sums back out: weights only, made by the packer) and is
// exact, and the f32 work is one multiply and one fma per 32 values: for Q6_K 14 of those
// pipes' operations in place of 16, for Q3_K 12 in place of 14. (With activations per 256
// values the sums ran on over a super-block's eight blocks, 12.25 and 10.25 operations, but
// one activation step per 256 values cost ~0.3% perplexity, and a power-of-two step per 32,
// as Q4_K takes them, cost its shifts 10% of an all-Q6_K prefill, within a few percent of
// activations per 32.)
// signed_block adds block `blk`'s K and products with the activation rows' 32 unsigned bytes
// xa[c] (1..4 rows; unsigned_acts) to is[c][half].
static inline __attribute__((always_inline)) void signed_block(const uint8_t *blk, const uint8_t (*xa)[32], __m256i is[4][2],
                                                               const int n, const int narrow) {
    // Each row's dword of two int16 scales (halves 0 and 1) to the half's scale in both words.
    const __m256i half0 = _mm256_setr_epi8(0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13, 0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13);
    const __m256i half1 = _mm256_setr_epi8(2, 3, 2, 3, 6, 7, 6, 7, 10, 11, 10, 11, 14, 15, 14, 15, 2, 3, 2, 3, 6, 7, 6, 7, 10, 11, 10, 11, 14, 15, 14, 15);
    for (int c = 0; c < n; c++)
        for (int rh = 0; rh < 2; rh++) is[c][rh] = _mm256_add_epi32(is[c][rh], _mm256_loadu_si256((const __m256i *)(blk + 128 + 32 * rh)));
#pragma clang loop unroll(disable)
    for (int s = 0; s < 8; s += narrow ? 4 : 2) {
        __m256i sc[2];
        for (int rh = 0; rh < 2; rh++) sc[rh] = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(blk + 64 + 32 * rh)), s < 4 ? half0 : half1);
        if (narrow) {
            __m256i p[4][2];
            for (int t = s; t < s + 4; t++) {
                __m256i w[2];
                for (int rh = 0; rh < 2; rh++) w[rh] = _mm256_loadu_si256((const __m256i *)(blk + TILE6_STEPS + 64 * t + 32 * rh));
                for (int c = 0; c < n; c++) {
                    int32_t v;
                    memcpy(&v, xa[c] + 4 * t, 4);
                    const __m256i xv = _mm256_set1_epi32(v);
                    for (int rh = 0; rh < 2; rh++) {
                        const __m256i q = _mm256_maddubs_epi16(xv, w[rh]);
                        p[c][rh] = t == s ? q : _mm256_add_epi16(p[c][rh], q);
                    }
                }
            }
            for (int c = 0; c < n; c++)
                for (int rh = 0; rh < 2; rh++) is[c][rh] = _mm256_add_epi32(is[c][rh], _mm256_madd_epi16(p[c][rh], sc[rh]));
            continue;
        }
        __m256i w[2][2];
        for (int k = 0; k < 2; k++)
            for (int rh = 0; rh < 2; rh++) w[k][rh] = _mm256_loadu_si256((const __m256i *)(blk + TILE6_STEPS + 64 * (s + k) + 32 * rh));
        for (int c = 0; c < n; c++) {
            int32_t v0, v1;
            memcpy(&v0, xa[c] + 4 * s, 4);
            memcpy(&v1, xa[c] + 4 * s + 4, 4);
            const __m256i x0 = _mm256_set1_epi32(v0), x1 = _mm256_set1_epi32(v1);
            for (int rh = 0; rh < 2; rh++) {
                const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(x0, w[0][rh]), _mm256_maddubs_epi16(x1, w[1][rh]));
                is[c][rh] = _mm256_add_epi32(is[c][rh], _mm256_madd_epi16(p, sc[rh]));
            }
        }
    }
}

// The rows' sums is[c][half] (of a block, or of a super-block's eight) into acc: times the
// tile's d (`blk`'s) and the activation rows' d[c], by one multiply and one fma.
static inline __attribute__((always_inline)) void signed_sums(const uint8_t *blk, const float ad[4], __m256i is[4][2], float *acc,
                                                              const int n) {
    for (int rh = 0; rh < 2; rh++) {
        const __m256 d = _mm256_loadu_ps((const float *)(blk + 32 * rh));
        for (int c = 0; c < n; c++) {
            float *sum = acc + 16 * c + 8 * rh;
            const __m256 scale = _mm256_mul_ps(d, _mm256_set1_ps(ad[c]));
            _mm256_storeu_ps(sum, _mm256_fmadd_ps(_mm256_cvtepi32_ps(is[c][rh]), scale, _mm256_loadu_ps(sum)));
        }
    }
}

// The 32 activations at q as unsigned bytes (x + 128), as signed_block takes them.
static inline void unsigned_acts(const int8_t *q, uint8_t *out) {
    _mm256_store_si256((__m256i *)out, _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)q), _mm256_set1_epi8((char)0x80)));
}

// Block `b` of a signed tile against `n` q8a activation rows (1..4), whose f32 sums are
// acc[16 c + row].
static inline __attribute__((always_inline)) void block6s_x16(const uint8_t *blk, const qb_q8a *x, const uint8_t (*xa)[32],
                                                              int64_t nb, int64_t b, float *acc, const int n, const int narrow) {
    float ad[4];
    __m256i is[4][2];
    for (int c = 0; c < n; c++) {
        ad[c] = x[c * nb + b].d;
        is[c][0] = is[c][1] = _mm256_setzero_si256();
    }
    signed_block(blk, xa, is, n, narrow);
    signed_sums(blk, ad, is, acc, n);
}

// Block `b` of a Q2_K tile (Q6_K's unsigned layout with minimums; both 8-row halves)
// against `n` activation rows (2, or a column block's last odd one), whose f32 sums are
// acc[16 c + row]. 16-bit lanes hold all four steps of a 16-value half of its values (0..3:
// 3 x 128 x 2 x 4 = 3072), widened once per half; the sums start at 0 and the activations'
// sums per 16 (`sums16`) meet the minimums.
static inline __attribute__((always_inline)) void block2k_x16(const uint8_t *blk, const qb_q8a *x, const int32_t *sums16,
                                                              int64_t nb, int64_t b, float *acc, const int n) {
    const __m256i ones = _mm256_set1_epi16(1);
#pragma clang loop unroll(disable)
    for (int h = 0; h < 2; h++) {
        __m256i p[2][2];
        for (int c = 0; c < n; c++) p[c][0] = p[c][1] = _mm256_setzero_si256();
#pragma clang loop unroll(disable)
        for (int s = 4 * h; s < 4 * h + 4; s++) {
            __m256i w[2];
            for (int rh = 0; rh < 2; rh++) w[rh] = _mm256_loadu_si256((const __m256i *)(blk + 128 + 64 * s + 32 * rh));
            for (int c = 0; c < n; c++) {
                int32_t v;
                memcpy(&v, x[c * nb + b].qs + 4 * s, 4);
                const __m256i xv = _mm256_set1_epi32(v);
                for (int rh = 0; rh < 2; rh++) p[c][rh] = _mm256_add_epi16(p[c][rh], _mm256_maddubs_epi16(w[rh], xv));
            }
        }
        for (int rh = 0; rh < 2; rh++) {
            __m256 d = _mm256_loadu_ps((const float *)(blk + 64 * h + 32 * rh));
            __m256 mv = _mm256_loadu_ps((const float *)(blk + QB_TILE6_BLOCK_BYTES + 64 * h + 32 * rh));
            for (int c = 0; c < n; c++) {
                float *sum = acc + 16 * c + 8 * rh;
                __m256 scale = _mm256_mul_ps(d, _mm256_set1_ps(x[c * nb + b].d));
                __m256 a = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(p[c][rh], ones)), scale, _mm256_loadu_ps(sum));
                a = _mm256_fnmadd_ps(mv, _mm256_set1_ps((float)sums16[c * 2 * nb + 2 * b + h] * x[c * nb + b].d), a);
                _mm256_storeu_ps(sum, a);
            }
        }
    }
}

// Activation rows [0, count) (count a multiple of `g`) against a tile of `six`'s kind
// (gemm_tiles'), block by block as gemm_avx2: signed Q6_K and Q3_K tiles `g` rows (4, or a
// column block's last 1-3) at a time, Q2_K tiles 2 (or the last odd row). The signed tiles'
// unsigned activations are made a block ahead, into the other half of `xa`: made just before
// signed_block read them back (four-byte broadcasts of the 32-byte store), the loads waited on
// the stores, and the avx2 Q6_K tiles ran at 48-49% of the int8 peak, against 59-61% so (one
// thread of an Intel Xeon, Emerald Rapids; results/q6k-acts-ahead-avx2-2026-12-05-emr/).
static inline __attribute__((always_inline)) void gemm6_avx2(const uint8_t *tile, const qb_q8a *x, const int32_t *sums16,
                                                             int64_t count, int64_t nb, float *y, int64_t ystride, const int g,
                                                             const int six) {
    const int64_t bb = qb_gemm_tile6_block_bytes(six == 2 ? QB_Q2_K : QB_Q6_K);
    const int64_t chunk = 16;
    float acc[16 * QB_TILE_ROWS];
    uint8_t xa[2][16][32] __attribute__((aligned(32)));
    for (int64_t c0 = 0; c0 < count; c0 += chunk) {
        int64_t n = count - c0 < chunk ? count - c0 : chunk;
        memset(acc, 0, sizeof(float) * (size_t)(16 * n));
        if (six != 2)
            for (int64_t c = 0; c < n; c++) unsigned_acts(x[(c0 + c) * nb].qs, xa[0][c]);
        for (int64_t b = 0; b < nb; b++)
            for (int64_t c = 0; c < n; c += g) {
                if (six == 2) block2k_x16(tile + b * bb, x + (c0 + c) * nb, sums16 + (c0 + c) * 2 * nb, nb, b, acc + 16 * c, g);
                else {
                    if (b + 1 < nb)
                        for (int k = 0; k < g; k++) unsigned_acts(x[(c0 + c + k) * nb + b + 1].qs, xa[(b + 1) & 1][c + k]);
                    block6s_x16(tile + b * bb, x + (c0 + c) * nb, xa[b & 1] + c, nb, b, acc + 16 * c, g, six == 3);
                }
            }
        for (int64_t c = 0; c < n; c++) memcpy(y + (c0 + c) * ystride, acc + 16 * c, sizeof(float) * QB_TILE_ROWS);
    }
}
// One function per tile kind and group size, each with its constants folded in; a group of
// fewer rows (a column block's last ones) keeps each row's arithmetic, so its outputs.
static void gemm6_avx2_groups(const uint8_t *tile, const qb_q8a *x, const int32_t *sums16, int64_t count, int64_t nb, float *y,
                              int64_t ystride, int six) {
    if (six == 1) gemm6_avx2(tile, x, NULL, count, nb, y, ystride, 4, 1);
    else if (six == 3) gemm6_avx2(tile, x, NULL, count, nb, y, ystride, 4, 3);
    else gemm6_avx2(tile, x, sums16, count, nb, y, ystride, 2, 2);
}
#define QB_GEMM6_REST(six)                                                                                          \
    switch (n) {                                                                                                    \
    case 3: gemm6_avx2(tile, x, NULL, 3, nb, y, ystride, 3, six); break;                                           \
    case 2: gemm6_avx2(tile, x, NULL, 2, nb, y, ystride, 2, six); break;                                           \
    default: gemm6_avx2(tile, x, NULL, 1, nb, y, ystride, 1, six); break;                                          \
    }
static void gemm6_avx2_rest(const uint8_t *tile, const qb_q8a *x, const int32_t *sums16, int64_t n, int64_t nb, float *y,
                            int64_t ystride, int six) {
    if (six == 1) {
        QB_GEMM6_REST(1)
    } else if (six == 3) {
        QB_GEMM6_REST(3)
    } else gemm6_avx2(tile, x, sums16, 1, nb, y, ystride, 1, 2);
}
#undef QB_GEMM6_REST

#endif

// Both tile kinds' products: the AVX-512 set takes the tiles in pairs (vnni_tiles), the AVX2
// set in the row groups its vector code takes (a column block's last rows as a smaller group),
// one tile at a time but for 8-bit values (see gemm_avx2), the portable set by the scalar
// definition.
// `six`: 0 for qb_gemm_tiles' tiles, 1 for Q6_K's, 2 for Q2_K's (Q6_K's with minimums), 3 for
// Q3_K's (Q6_K's holding 3-bit values).
static void gemm_tiles(int six, const uint8_t *tile, int64_t tiles, int32_t bits, const qb_q8a *x, const int32_t *offs,
                       int64_t count, int64_t cols, float *y, int64_t ystride) {
    const int mins = six == 2;
    int64_t nb = cols / 32,
            tstride = nb * (six ? qb_gemm_tile6_block_bytes(six == 1 ? QB_Q6_K : six == 2 ? QB_Q2_K : QB_Q3_K)
                                : qb_gemm_tile_block_bytes(bits));
    int64_t ostride = six ? 2 * nb : nb;  // Q6_K's offsets (Q2_K's sums) are per 16 values
#if defined(QB_AVX512)
    static const vnni_shapes k = {gemm_vnni6x2, gemm_vnni4x2, gemm_vnni1x2, gemm_vnni8x1, gemm_vnni4x1, gemm_vnni1x1};
    static const vnni_shapes k6 = {NULL, gemm6_vnni4x2, gemm6_vnni1x2, gemm6_vnni8x1, gemm6_vnni4x1, gemm6_vnni1x1};
    static const vnni_shapes k2 = {NULL, gemm2k_vnni4x2, gemm2k_vnni1x2, gemm2k_vnni8x1, gemm2k_vnni4x1, gemm2k_vnni1x1};
    vnni_tiles(mins ? &k2 : six ? &k6 : &k, tile, tiles, tstride, x, offs, ostride, count, nb, y, ystride);
#elif defined(__AVX2__)
    if (six) {
        for (int64_t t = 0; t < tiles; t++) {  // groups of activation rows (Q2_K 2, the others 4), then the last rows
            const uint8_t *tp = tile + t * tstride;
            float *yt = y + QB_TILE_ROWS * t;
            const int64_t c = six == 2 ? count & ~(int64_t)1 : count & ~(int64_t)3;
            gemm6_avx2_groups(tp, x, offs, c, nb, yt, ystride, six);
            if (c < count)
                gemm6_avx2_rest(tp, x + c * nb, six == 2 ? offs + c * ostride : NULL, count - c, nb, yt + c * ystride, ystride, six);
        }
    } else {  // groups of four, then the last 1-3 rows; all tiles in one call (see gemm_avx2)
        const int64_t c = count & ~(int64_t)3;
        gemm_avx2_kernel(bits, offs != NULL, 0)(tile, tiles, tstride, x, offs, c, nb, y, ystride);
        if (c < count)
            gemm_avx2_kernel(bits, offs != NULL, 1)(tile, tiles, tstride, x + c * nb, offs ? offs + c * ostride : NULL,
                                                    count - c, nb, y + c * ystride, ystride);
    }
#else
    for (int64_t t = 0; t < tiles; t++) {
        const uint8_t *tp = tile + t * tstride;
        float *yt = y + QB_TILE_ROWS * t;
        for (int64_t c = 0; c < count; c++) {
            const int32_t *o = offs ? offs + c * ostride : NULL;
            if (six) gemm6_scalar(tp, x + c * nb, o, yt + c * ystride, nb, mins);
            else gemm_scalar(tp, bits, x + c * nb, o, yt + c * ystride, nb);
        }
    }
#endif
}

void qb_gemm_tiles(const uint8_t *tile, int64_t tiles, int32_t bits, const qb_q8a *x, const int32_t *offs, int64_t count,
                   int64_t cols, float *y, int64_t ystride) {
    gemm_tiles(0, tile, tiles, bits, x, offs, count, cols, y, ystride);
}

void qb_gemm_tiles6(const uint8_t *tile, int64_t tiles, const qb_q8a *x, const int32_t *offs16, int64_t count,
                    int64_t cols, float *y, int64_t ystride) {
    gemm_tiles(1, tile, tiles, 6, x, offs16, count, cols, y, ystride);
}

void qb_gemm_tiles_q2k(const uint8_t *tile, int64_t tiles, const qb_q8a *x, const int32_t *sums16, int64_t count,
                       int64_t cols, float *y, int64_t ystride) {
    gemm_tiles(2, tile, tiles, 6, x, sums16, count, cols, y, ystride);
}

void qb_gemm_tiles_q3k(const uint8_t *tile, int64_t tiles, const qb_q8a *x, const int32_t *offs16, int64_t count,
                       int64_t cols, float *y, int64_t ystride) {
    gemm_tiles(3, tile, tiles, 6, x, offs16, count, cols, y, ystride);
}

// ---------------------------------------------------------------------------------------
// Q4_K per super-block (QB_TILE4K_BYTES; the vector sets' tiles) against q8s activations.

// Row r of super-block `sb` (the definition): S = sum over sub-blocks j of 2^shift_j x sc_j x
// (values . activations), M = sum of mn_j x the activations' shifted sum over sub-block j,
// both exact; returns d S - dmin M, rounded as block4k_x16 rounds it (which then takes it
// times the activations' d into the row's sum by one fma).
static float q4k_super_row(const uint8_t *sb, const qb_q8s *a, int r) {
    const uint8_t *row = sb + 32 * (r / 8) + 4 * (r % 8);
    int32_t s = 0, m = 0;
    for (int j = 0; j < 8; j++) {
        int32_t dot = 0;
        for (int st = 0; st < 8; st++)
            for (int t = 0; t < 4; t++) dot += sb[Q4K_VALUES + 512 * j + 64 * st + 4 * r + t] * a->qs[32 * j + 4 * st + t];
        int16_t sc, mn;  // the low halves of the unshifted scale's dword and the minimums' pair
        memcpy(&sc, row + Q4K_SC + 256 * j, 2);
        memcpy(&mn, row + Q4K_MN + 64 * (j / 2) + 2 * (j % 2), 2);
        s += (sc * dot) * (1 << a->shift[j]);
        m += mn * a->sums[j];
    }
    float d, md;
    memcpy(&d, sb + 4 * r, 4);
    memcpy(&md, sb + 64 + 4 * r, 4);
    return fmaf((float)m, md, (float)s * d);
}

// qb_set_q4k_dpwssd's setting: read once a call, relaxed (a call covers whole tiles).
static _Atomic int32_t q4k_dpwssd_on = 0;

int32_t qb_set_q4k_dpwssd(int32_t on) { return atomic_exchange_explicit(&q4k_dpwssd_on, on != 0, memory_order_relaxed); }

#if QB_TILE4K_SUPER && defined(QB_AVX512)
// acc + the products of a's int16 pairs and the 64 bytes at b's, as one vpdpwssd: written as
// the intrinsic, clang's machine combiner splits chains of them into vpmaddwd + vpaddd, an
// extra operation on the pipes the vpdpbusd run on.
static inline __m512i dpwssd_mem(__m512i acc, __m512i a, const void *b) {
    __asm__("vpdpwssd %2, %1, %0" : "+v"(acc) : "v"(a), "m"(*(const __m512i *)b));
    return acc;
}

// Likewise against the pair at b (4 bytes) in every lane.
static inline __m512i dpwssd_bcast(__m512i acc, __m512i a, const void *b) {
    __asm__("vpdpwssd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(a), "m"(*(const int32_t *)b));
    return acc;
}

// `n` activation rows against `m` tiles side by side (tstride apart, outputs at y + 16 t),
// super-blocks [i0, i1) one by one (the sums start at zero for i0 = 0, else from y's). Per
// 32 values and tile the per-32 tiles (gemm_vnni) took a multiply and two fmas beside the
// eight vpdpbusd, with a broadcast of the activations' d and s each, on the pipes the
// vpdpbusd run on. Here each sub-block's integer sums meet its
// integer scale, already shifted to the super-block's finest step (the tile holds sc << 0..3,
// the activations' shift picks one): steps of `span` 8 take the sub-block's sum by a vpmulld
// and a vpaddd (one vpdpbusd's slot on AMD Zen 4), steps of 4 each half's (16 values: within
// int16, 16 x 15 x 127 = 30480) by one vpdpwssd (two slots there, but two operations where
// Intel's vpmulld and vpaddd are three: 1.14x pp512 on a 1B Q4_K_M on an Emerald Rapids
// Xeon; qb_set_q4k_dpwssd chooses). The minimums meet the activations' shifted sums in four
// vpdpwssd per super-block, and the f32 work is per 256 values. The integers are
// block4k_x16's (exact), and so are the outputs, bit for bit.
static inline __attribute__((always_inline)) void gemm_q8s_vnni(const uint8_t *tile, int64_t tstride, const qb_q8s *x,
                                                                int64_t nsb, int64_t i0, int64_t i1, float *y, int64_t ystride,
                                                                const int n, const int m, const int span) {
    __m512 acc[8][2];
    for (int c = 0; c < n; c++)
        for (int t = 0; t < m; t++) acc[c][t] = i0 == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(y + c * ystride + 16 * t);
    for (int64_t i = i0; i < i1; i++) {
        const uint8_t *sb = tile + i * QB_TILE4K_BYTES;
        const qb_q8s *a = x + i;
        __m512i s[8][2];
        for (int c = 0; c < n; c++)
            for (int t = 0; t < m; t++) s[c][t] = _mm512_setzero_si512();
#pragma clang loop unroll(disable)
        for (int j = 0; j < 8; j++) {
            const uint8_t *steps = sb + Q4K_VALUES + 512 * j;
            for (int s0 = 0; s0 < 8; s0 += span) {
                __m512i is[8][2];
                for (int c = 0; c < n; c++)
                    for (int t = 0; t < m; t++) is[c][t] = _mm512_setzero_si512();
                for (int st = s0; st < s0 + span; st++) {
                    __m512i wv[2];
                    for (int t = 0; t < m; t++) wv[t] = _mm512_loadu_si512((const void *)(steps + t * tstride + 64 * st));
                    for (int c = 0; c < n; c++) {
                        const __m512i xv = bcast4_512(a[c * nsb].qs + 32 * j + 4 * st);
                        for (int t = 0; t < m; t++) is[c][t] = _mm512_dpbusd_epi32(is[c][t], wv[t], xv);
                    }
                }
                for (int c = 0; c < n; c++) {
                    const uint8_t *sc = sb + Q4K_SC + 256 * j + 64 * a[c * nsb].shift[j];
                    for (int t = 0; t < m; t++)
                        s[c][t] = span == 4 ? dpwssd_mem(s[c][t], is[c][t], sc + t * tstride)
                                            : _mm512_add_epi32(s[c][t], _mm512_mullo_epi32(is[c][t], _mm512_loadu_si512((const void *)(sc + t * tstride))));
                }
            }
        }
        for (int t = 0; t < m; t++) {
            const uint8_t *st = sb + t * tstride;
            const __m512 d = _mm512_loadu_ps((const float *)st), md = _mm512_loadu_ps((const float *)(st + 64));
            __m512i mins[4];
            for (int k = 0; k < 4; k++) mins[k] = _mm512_loadu_si512((const void *)(st + Q4K_MN + 64 * k));
            for (int c = 0; c < n; c++) {
                __m512i mv = _mm512_setzero_si512();
                for (int k = 0; k < 4; k++) mv = dpwssd_bcast(mv, mins[k], a[c * nsb].sums + 2 * k);
                const __m512 u = _mm512_fmadd_ps(_mm512_cvtepi32_ps(mv), md, _mm512_mul_ps(_mm512_cvtepi32_ps(s[c][t]), d));
                acc[c][t] = _mm512_fmadd_ps(u, _mm512_set1_ps(a[c * nsb].d), acc[c][t]);
            }
        }
    }
    for (int c = 0; c < n; c++)
        for (int t = 0; t < m; t++) _mm512_storeu_ps(y + c * ystride + 16 * t, acc[c][t]);
}

// Each shape twice: steps of 4 (a vpdpwssd per 16 values) and of 8 (a vpmulld per 32).
#define QB_GEMM_Q8S(n, m)                                                                                         \
    static void gemm_q8s_vnni##n##x##m(const uint8_t *t, int64_t ts, const qb_q8s *x, int64_t nsb, int64_t i0,   \
                                       int64_t i1, float *y, int64_t ys) {                                       \
        gemm_q8s_vnni(t, ts, x, nsb, i0, i1, y, ys, n, m, 8);                                                    \
    }                                                                                                            \
    static void gemm_q8s_halves##n##x##m(const uint8_t *t, int64_t ts, const qb_q8s *x, int64_t nsb, int64_t i0, \
                                         int64_t i1, float *y, int64_t ys) {                                     \
        gemm_q8s_vnni(t, ts, x, nsb, i0, i1, y, ys, n, m, 4);                                                    \
    }
QB_GEMM_Q8S(4, 2)
QB_GEMM_Q8S(1, 2)
QB_GEMM_Q8S(8, 1)
QB_GEMM_Q8S(4, 1)
QB_GEMM_Q8S(1, 1)

typedef void (*q8s_fn)(const uint8_t *, int64_t, const qb_q8s *, int64_t, int64_t, int64_t, float *, int64_t);
typedef struct {
    q8s_fn pair4, pair1, one8, one4, one1;
} q8s_shapes;
static const q8s_shapes q8s_mulld = {gemm_q8s_vnni4x2, gemm_q8s_vnni1x2, gemm_q8s_vnni8x1, gemm_q8s_vnni4x1, gemm_q8s_vnni1x1};
static const q8s_shapes q8s_halves = {gemm_q8s_halves4x2, gemm_q8s_halves1x2, gemm_q8s_halves8x1, gemm_q8s_halves4x1,
                                      gemm_q8s_halves1x1};

// Pairs of tiles against 4 rows at a time, then 1; a last odd tile against 8, 4, then 1.
// Pairs for gemm_vnni's reason (each activation broadcast serves both tiles; Intel's cores
// issue about one zmm load a cycle). On AMD Zen 4, where a broadcast operand of vpdpbusd
// costs nothing, one tile against 8 rows ran 1.04x as fast at one thread ([1.025, 1.058])
// and the same at two (0.998 [0.909, 1.072]); 6 rows x 2 tiles, the accumulators spilled,
// 0.96x. A pair of tiles is 2 x 8 x 6528 bytes for 2048 columns, more than L1 holds, and
// every group of rows read it again from L2: so the rows go over it Q8S_SPAN super-blocks
// (26 KiB of a pair) at a time, each group's sums carried in y from one span to the next
// (the same fmas in the same order, so the same outputs). On one thread of an Intel Xeon
// (Emerald Rapids) the pair kernel ran 1.03x so at 2048 columns (0.99-1.03x at 8192), and a
// 1B Q4_K_M pp512 1.023x (results/q4k-spans-2026-12-05-emr/). On AMD Zen 4 the tiles alone
// ran 0.95-0.97x as fast with the spans, but the 1B's prefill without them was the same,
// 1.003x [0.989, 1.019] (results/q4k-tuning-zen4-2026-12-05/): one way for every CPU.
enum { Q8S_SPAN = 2 };
static void gemm_q8s_tiles(const uint8_t *tile, int64_t tiles, int64_t tstride, const qb_q8s *x, int64_t count, int64_t nsb,
                           float *y, int64_t ystride) {
    const q8s_shapes *k = atomic_load_explicit(&q4k_dpwssd_on, memory_order_relaxed) ? &q8s_halves : &q8s_mulld;
    for (int64_t t = 0; t < tiles; t += 2) {
        const uint8_t *tp = tile + t * tstride;
        float *yt = y + QB_TILE_ROWS * t;
        for (int64_t i0 = 0; i0 < nsb; i0 += Q8S_SPAN) {
            const int64_t i1 = i0 + Q8S_SPAN < nsb ? i0 + Q8S_SPAN : nsb;
            int64_t c = 0;
#define QB_ROWS(c) tp, tstride, x + (c) * nsb, nsb, i0, i1, yt + (c) * ystride, ystride
            if (t + 1 < tiles) {
                for (; c + 3 < count; c += 4) k->pair4(QB_ROWS(c));
                for (; c < count; c++) k->pair1(QB_ROWS(c));
            } else {
                for (; c + 7 < count; c += 8) k->one8(QB_ROWS(c));
                for (; c + 3 < count; c += 4) k->one4(QB_ROWS(c));
                for (; c < count; c++) k->one1(QB_ROWS(c));
            }
#undef QB_ROWS
        }
    }
}
#elif QB_TILE4K_SUPER
// Super-block `i` of a tile (both 8-row halves) against `n` activation rows (1..4), whose f32
// sums are acc[16 c + row]. Per 32 values and 8 rows the 4-bit tiles took 8 vpmaddubsw, a
// vpmaddwd by ones, an f32 multiply and two fmas, all on the two pipes the multiplies share
// on AMD Zen 4 (results/q6k-signed-avx2-2026-12-04-zen4/). With the activations per 256
// values, each sub-block's 16-bit sums (8 steps of 15 x 127 x 2 = 30480 at most) are widened
// by one vpmaddwd that also applies the rows' scales, the minimums meet the activations' sums
// in four vpmaddwd per super-block, and the f32 work is a multiply and two fmas per 256
// values: about 9.9 of those operations per 32 values in place of 12. Each sub-block's
// product is at the super-block's finest step (q8s) because its scale is: the tile holds
// each scale shifted by 0..3 and the activations' shift picks one (a vpsllvd per 8 rows and
// sub-block before, 1.04x pp512 on Intel Emerald Rapids). The integer sums stay exact (S
// below 63 x 30480 x 2 x 8 x 8 < 2^28; M below 63 x 32512 x 8).
static inline __attribute__((always_inline)) void block4k_x16(const uint8_t *sb, const qb_q8s *x, int64_t nsb, int64_t i,
                                                              float *acc, const int n) {
    __m256i s1[4][2];
    for (int c = 0; c < n; c++) s1[c][0] = s1[c][1] = _mm256_setzero_si256();
#pragma clang loop unroll(disable)
    for (int j = 0; j < 8; j++) {
        const uint8_t *steps = sb + Q4K_VALUES + 512 * j;
        __m256i lo[4][2];
        {  // step 0 starts the 16-bit sums
            __m256i wv[2];
            for (int h = 0; h < 2; h++) wv[h] = _mm256_loadu_si256((const __m256i *)(steps + 32 * h));
            for (int c = 0; c < n; c++) {
                int32_t v;
                memcpy(&v, x[c * nsb + i].qs + 32 * j, 4);
                const __m256i xv = _mm256_set1_epi32(v);
                for (int h = 0; h < 2; h++) lo[c][h] = _mm256_maddubs_epi16(wv[h], xv);
            }
        }
#pragma clang loop unroll(disable)
        for (int s = 1; s < 8; s++) {
            __m256i wv[2];
            for (int h = 0; h < 2; h++) wv[h] = _mm256_loadu_si256((const __m256i *)(steps + 64 * s + 32 * h));
            for (int c = 0; c < n; c++) {
                int32_t v;
                memcpy(&v, x[c * nsb + i].qs + 32 * j + 4 * s, 4);
                const __m256i xv = _mm256_set1_epi32(v);
                for (int h = 0; h < 2; h++) lo[c][h] = _mm256_add_epi16(lo[c][h], _mm256_maddubs_epi16(wv[h], xv));
            }
        }
        for (int c = 0; c < n; c++) {
            const uint8_t *sc = sb + Q4K_SC + 256 * j + 64 * x[c * nsb + i].shift[j];
            for (int h = 0; h < 2; h++)
                s1[c][h] = _mm256_add_epi32(s1[c][h], _mm256_madd_epi16(lo[c][h], _mm256_loadu_si256((const __m256i *)(sc + 32 * h))));
        }
    }
    // The activations' shifted sums per sub-block, pairs (2k, 2k + 1) as the dwords the
    // minimums' vpmaddwd takes.
    int32_t pairs[4][4];
    for (int c = 0; c < n; c++) memcpy(pairs[c], x[c * nsb + i].sums, sizeof pairs[c]);
    for (int h = 0; h < 2; h++) {
        const __m256 d = _mm256_loadu_ps((const float *)(sb + 32 * h)), md = _mm256_loadu_ps((const float *)(sb + 64 + 32 * h));
        __m256i mins[4];
        for (int k = 0; k < 4; k++) mins[k] = _mm256_loadu_si256((const __m256i *)(sb + Q4K_MN + 64 * k + 32 * h));
        for (int c = 0; c < n; c++) {
            __m256i m = _mm256_madd_epi16(mins[0], _mm256_set1_epi32(pairs[c][0]));
            for (int k = 1; k < 4; k++) m = _mm256_add_epi32(m, _mm256_madd_epi16(mins[k], _mm256_set1_epi32(pairs[c][k])));
            const __m256 t = _mm256_fmadd_ps(_mm256_cvtepi32_ps(m), md, _mm256_mul_ps(_mm256_cvtepi32_ps(s1[c][h]), d));
            float *sum = acc + 16 * c + 8 * h;
            _mm256_storeu_ps(sum, _mm256_fmadd_ps(t, _mm256_set1_ps(x[c * nsb + i].d), _mm256_loadu_ps(sum)));
        }
    }
}

// Activation rows [0, count) (count a multiple of `g`) against a Q4_K tile, super-block by
// super-block, as gemm_avx2 takes its blocks.
static inline __attribute__((always_inline)) void gemm_q8s_avx2(const uint8_t *tile, const qb_q8s *x, int64_t count, int64_t nsb,
                                                                float *y, int64_t ystride, const int g) {
    const int64_t chunk = 16;
    float acc[16 * QB_TILE_ROWS];
    for (int64_t c0 = 0; c0 < count; c0 += chunk) {
        int64_t n = count - c0 < chunk ? count - c0 : chunk;
        memset(acc, 0, sizeof(float) * (size_t)(16 * n));
        for (int64_t i = 0; i < nsb; i++)
            for (int64_t c = 0; c < n; c += g) block4k_x16(tile + i * QB_TILE4K_BYTES, x + (c0 + c) * nsb, nsb, i, acc + 16 * c, g);
        for (int64_t c = 0; c < n; c++) memcpy(y + (c0 + c) * ystride, acc + 16 * c, sizeof(float) * QB_TILE_ROWS);
    }
}

// Groups of four rows, then a column block's last 1-3 as a group of their own (each row's
// arithmetic as in a group of four).
static void gemm_q8s_rows(const uint8_t *tile, const qb_q8s *x, int64_t count, int64_t nsb, float *y, int64_t ystride) {
    const int64_t c = count & ~(int64_t)3;
    gemm_q8s_avx2(tile, x, c, nsb, y, ystride, 4);
    x += c * nsb, y += c * ystride;
    switch (count - c) {
    case 3: gemm_q8s_avx2(tile, x, 3, nsb, y, ystride, 3); break;
    case 2: gemm_q8s_avx2(tile, x, 2, nsb, y, ystride, 2); break;
    case 1: gemm_q8s_avx2(tile, x, 1, nsb, y, ystride, 1); break;
    default: break;
    }
}
#endif

int32_t qb_gemm_activation_block(int32_t type) { return QB_TILE4K_SUPER && type == QB_Q4_K ? 256 : 32; }

void qb_gemm_tiles_q8s(const uint8_t *tile, int64_t tiles, const qb_q8s *x, int64_t count, int64_t cols, float *y,
                       int64_t ystride) {
    const int64_t nsb = cols / 256, tstride = nsb * QB_TILE4K_BYTES;
#if QB_TILE4K_SUPER && defined(QB_AVX512)
    gemm_q8s_tiles(tile, tiles, tstride, x, count, nsb, y, ystride);
#else
    for (int64_t t = 0; t < tiles; t++) {
        const uint8_t *tp = tile + t * tstride;
        float *yt = y + QB_TILE_ROWS * t;
#if QB_TILE4K_SUPER
        gemm_q8s_rows(tp, x, count, nsb, yt, ystride);
        continue;
#endif
        for (int64_t c = 0; c < count; c++) {
            float acc[QB_TILE_ROWS] = {0};
            for (int64_t i = 0; i < nsb; i++) {
                const qb_q8s *a = x + c * nsb + i;
                for (int r = 0; r < QB_TILE_ROWS; r++) acc[r] = fmaf(q4k_super_row(tp + i * QB_TILE4K_BYTES, a, r), a->d, acc[r]);
            }
            memcpy(yt + c * ystride, acc, sizeof acc);
        }
    }
#endif
}
