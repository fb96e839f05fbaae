// Prefill products of quantized weights with int8 activations (layout in qb_gemm.h). The
// scalar loops are the definition. With AVX-512 VNNI, one 64-byte step of a tile meets
// eight activation rows, each through one vpdpbusd with the activations' four bytes
// broadcast from memory, and D x (activation scale) and M x (activation block sum) are
// applied in f32 once per 32 values. The AVX2 code works on the two 8-row halves of a tile
// with vpmaddubsw, whose pairs of products add up in saturating 16-bit lanes; how far a lane
// may sum depends on the values' width (gemm_x4), and every width is summed exactly.
#include "qb_gemm.h"
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

// Writes one row's scale and offset into block `b` of the tile at lane `r`.
static inline void put_scale(uint8_t *tile, int64_t b, int r, float d, float m) {
    uint8_t *blk = tile + b * QB_TILE_BLOCK_BYTES;
    memcpy(blk + 4 * r, &d, 4);
    memcpy(blk + 64 + 4 * r, &m, 4);
}

// Writes one row's 32 values, scale and offset into block `b` of the tile at lane `r`.
static inline void put(uint8_t *tile, int64_t b, int r, const uint8_t v[32], float d, float m) {
    put_scale(tile, b, r, d, m);
    uint8_t *blk = tile + b * QB_TILE_BLOCK_BYTES;
    for (int s = 0; s < 8; s++) memcpy(blk + 128 + 64 * s + 4 * r, v + 4 * s, 4);
}

#if defined(__AVX2__)
// The unpacking loops below on 32-byte vectors (packing is a pass over every weight per
// product: at 128 positions it cost as much as a third of the product). 16 bytes -> 32
// values with the low and high nibble of each byte in turn (MLX's order; GGML's is
// `nibbles_lo_hi`).
static inline __m256i nibbles_interleaved(const uint8_t *p) {
    __m128i t = _mm_loadu_si128((const __m128i *)p), m = _mm_set1_epi8(0x0F);
    __m128i lo = _mm_and_si128(t, m), hi = _mm_and_si128(_mm_srli_epi16(t, 4), m);
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi8(lo, hi)), _mm_unpackhi_epi8(lo, hi), 1);
}
static inline void put_v(uint8_t *tile, int64_t b, int r, __m256i v, float d, float m) {
    uint8_t buf[32];
    _mm256_storeu_si256((__m256i *)buf, v);
    put(tile, b, r, buf, d, m);
}
#endif

// Block b of `row` in a Q4_0/Q8_0 matrix, plain or four-row interleaved: its f16 scale and quants.
static inline const uint8_t *ggml_block(int32_t type, int32_t interleaved, const void *w, int64_t row, int64_t b,
                                        int64_t nb, qb_half *hd) {
    if (interleaved) return qb_interleaved_block(type, w, row, b, nb, hd);
    int64_t qbytes = type == QB_Q4_0 ? 16 : 32;
    const uint8_t *blk = (const uint8_t *)w + (row * nb + b) * (2 + qbytes);
    memcpy(hd, blk, 2);
    return blk + 2;
}

// Block b of `row` in a Q5_0 or Q5_1 matrix (rows of nb blocks): D and M of the tile
// (Q5_0: d and -16d, exact; Q5_1: d and m), the 32 fifth bits in `qh` (bit j is value j's:
// values 0..15 are the low nibbles of the 16 quant bytes, 16..31 the high ones), its quants returned.
static inline const uint8_t *q5_block(int32_t type, const void *w, int64_t row, int64_t b, int64_t nb, float *d,
                                      float *m, uint32_t *qh) {
    const uint8_t *blk = (const uint8_t *)w + (row * nb + b) * (type == QB_Q5_0 ? 22 : 24);
    qb_half hd;
    memcpy(&hd, blk, 2);
    *d = h2f(hd);
    if (type == QB_Q5_0) {
        *m = -16.0f * *d;
        memcpy(qh, blk + 2, 4);
        return blk + 6;
    }
    qb_half hm;
    memcpy(&hm, blk + 2, 2);
    *m = h2f(hm);
    memcpy(qh, blk + 4, 4);
    return blk + 8;
}

#if defined(QB_AVX512)
// Packing on AVX-512 takes all 16 rows of a tile at once: each row's values of two
// consecutive blocks are one 64-value vector, and a 16x16 dword transpose turns the rows'
// vectors into the tile's 64-byte steps, one store each instead of 16 rows x 8 four-byte
// stores (packing had been a fifth of a 128-token prefill). Blocks b and b + 1 of tiles
// whose blocks are `block_bytes` long with the steps at `steps`:
static inline void put_pair16(uint8_t *tile, int64_t block_bytes, int64_t steps, int64_t b, __m512i v[QB_TILE_ROWS]) {
    transpose16x16_epi32(v);
    uint8_t *first = tile + b * block_bytes + steps, *second = first + block_bytes;
    for (int st = 0; st < 8; st++) {
        _mm512_storeu_si512((void *)(first + 64 * st), v[st]);
        _mm512_storeu_si512((void *)(second + 64 * st), v[8 + st]);
    }
}

static inline __m512i join256(__m256i lo, __m256i hi) { return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1); }

// Q4_0 and Q8_0 (plain or four-row interleaved), two blocks per step; nb even.
static void pack_ggml_512(int32_t type, int32_t interleaved, const void *w, int64_t r0, int64_t cols, uint8_t *tile) {
    int64_t nb = cols / 32;
    for (int64_t b = 0; b < nb; b += 2) {
        __m512i v[QB_TILE_ROWS];
        for (int r = 0; r < QB_TILE_ROWS; r++) {
            __m256i half[2];
            for (int k = 0; k < 2; k++) {
                qb_half hd;
                const uint8_t *qs = ggml_block(type, interleaved, w, r0 + r, b + k, nb, &hd);
                float d = h2f(hd);
                put_scale(tile, b + k, r, d, (type == QB_Q4_0 ? -8.0f : -128.0f) * d);
                half[k] = type == QB_Q4_0 ? nibbles_lo_hi(qs)
                                          : _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)qs), _mm256_set1_epi8((char)0x80));
            }
            v[r] = join256(half[0], half[1]);
        }
        put_pair16(tile, QB_TILE_BLOCK_BYTES, 128, b, v);
    }
}

// Q5_0 and Q5_1, two blocks per step; nb even. Byte j of the nibbles gets 16 where bit j
// of qh is set.
static void pack_q5_512(int32_t type, const void *w, int64_t r0, int64_t cols, uint8_t *tile) {
    int64_t nb = cols / 32;
    for (int64_t b = 0; b < nb; b += 2) {
        __m512i v[QB_TILE_ROWS];
        for (int r = 0; r < QB_TILE_ROWS; r++) {
            __m256i half[2];
            for (int k = 0; k < 2; k++) {
                float d, m;
                uint32_t qh;
                const uint8_t *qs = q5_block(type, w, r0 + r, b + k, nb, &d, &m, &qh);
                put_scale(tile, b + k, r, d, m);
                half[k] = _mm256_or_si256(nibbles_lo_hi(qs), q5_fifth_bits(qh));
            }
            v[r] = join256(half[0], half[1]);
        }
        put_pair16(tile, QB_TILE_BLOCK_BYTES, 128, b, v);
    }
}

// MLX 4-bit, two blocks per step; nb even.
static void pack_mlx4_512(int64_t group, const uint32_t *w, const void *scales, const void *biases, int32_t sdtype,
                          int64_t r0, int64_t cols, uint8_t *tile) {
    int64_t nb = cols / 32, groups = cols / group;
    for (int64_t b = 0; b < nb; b += 2) {
        __m512i v[QB_TILE_ROWS];
        for (int r = 0; r < QB_TILE_ROWS; r++) {
            int64_t row = r0 + r;
            const uint8_t *bytes = (const uint8_t *)(w + row * (cols / 8));
            for (int k = 0; k < 2; k++) {
                int64_t g = row * groups + 32 * (b + k) / group;
                put_scale(tile, b + k, r, load_scale(scales, sdtype, g), load_scale(biases, sdtype, g));
            }
            v[r] = join256(nibbles_interleaved(bytes + 16 * b), nibbles_interleaved(bytes + 16 * b + 16));
        }
        put_pair16(tile, QB_TILE_BLOCK_BYTES, 128, b, v);
    }
}

// Q4_K, a super-block at a time: each pair of sub-blocks shares 32 bytes (low nibbles, then high).
static void pack_q4k_512(const void *w, int64_t r0, int64_t cols, uint8_t *tile) {
    int64_t nb = cols / 256;
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *blk[QB_TILE_ROWS];
        float d[QB_TILE_ROWS][8], m[QB_TILE_ROWS][8];
        for (int r = 0; r < QB_TILE_ROWS; r++) {
            blk[r] = (const uint8_t *)w + ((r0 + r) * nb + i) * 144;
            qb_half hd, hm;
            memcpy(&hd, blk[r], 2);
            memcpy(&hm, blk[r] + 2, 2);
            uint64_t sc, mn;
            q4k_unpack_scales(blk[r] + 4, &sc, &mn);
            __m256 s8 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)sc)));
            __m256 m8 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)mn)));
            _mm256_storeu_ps(d[r], _mm256_mul_ps(s8, _mm256_set1_ps(h2f(hd))));
            _mm256_storeu_ps(m[r], _mm256_mul_ps(m8, _mm256_set1_ps(-h2f(hm))));
        }
        for (int j = 0; j < 8; j++)
            for (int r = 0; r < QB_TILE_ROWS; r++) put_scale(tile, 8 * i + j, r, d[r][j], m[r][j]);
        for (int p = 0; p < 4; p++) {
            __m512i v[QB_TILE_ROWS];
            for (int r = 0; r < QB_TILE_ROWS; r++) {
                __m256i q = _mm256_loadu_si256((const __m256i *)(blk[r] + 16 + 32 * p));
                v[r] = join256(_mm256_and_si256(q, m4), _mm256_and_si256(_mm256_srli_epi16(q, 4), m4));
            }
            put_pair16(tile, QB_TILE_BLOCK_BYTES, 128, 8 * i + 2 * p, v);
        }
    }
}
#endif

void qb_pack_tile_ggml(int32_t type, int32_t interleaved, const void *w, int64_t r0, int64_t cols, uint8_t *tile) {
#if defined(QB_AVX512)
    if (type == QB_Q4_K) return pack_q4k_512(w, r0, cols, tile);
    if ((type == QB_Q4_0 || type == QB_Q8_0) && cols % 64 == 0) return pack_ggml_512(type, interleaved, w, r0, cols, tile);
    if ((type == QB_Q5_0 || type == QB_Q5_1) && cols % 64 == 0) return pack_q5_512(type, w, r0, cols, tile);
#endif
    uint8_t v[32];
    for (int r = 0; r < QB_TILE_ROWS; r++) {
        int64_t row = r0 + r;
        if (type == QB_Q5_0 || type == QB_Q5_1) {
            int64_t nb = cols / 32;
            for (int64_t b = 0; b < nb; b++) {
                float d, m;
                uint32_t qh;
                const uint8_t *qs = q5_block(type, w, row, b, nb, &d, &m, &qh);
#if defined(__AVX2__)
                put_v(tile, b, r, _mm256_or_si256(nibbles_lo_hi(qs), q5_fifth_bits(qh)), d, m);
                continue;
#endif
                for (int j = 0; j < 16; j++) {
                    v[j] = (uint8_t)((qs[j] & 0xF) | (((qh >> j) & 1) << 4));
                    v[j + 16] = (uint8_t)((qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4));
                }
                put(tile, b, r, v, d, m);
            }
        } else if (type == QB_Q4_0 || type == QB_Q8_0) {
            int64_t nb = cols / 32;
            for (int64_t b = 0; b < nb; b++) {
                qb_half hd;
                const uint8_t *qs = ggml_block(type, interleaved, w, row, b, nb, &hd);
                float d = h2f(hd);
                if (type == QB_Q4_0) {
#if defined(__AVX2__)
                    put_v(tile, b, r, nibbles_lo_hi(qs), d, -8.0f * d);
                    continue;
#endif
                    for (int j = 0; j < 16; j++) {
                        v[j] = qs[j] & 0xF;
                        v[j + 16] = qs[j] >> 4;
                    }
                    put(tile, b, r, v, d, -8.0f * d);
                } else {
#if defined(__AVX2__)
                    put_v(tile, b, r, _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)qs), _mm256_set1_epi8((char)0x80)), d,
                          -128.0f * d);
                    continue;
#endif
                    for (int j = 0; j < 32; j++) v[j] = (uint8_t)(qs[j] ^ 0x80);  // int8 + 128
                    put(tile, b, r, v, d, -128.0f * d);
                }
            }
        } else {  // Q4_K: d, dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles
            int64_t nb = cols / 256;
            for (int64_t i = 0; i < nb; i++) {
                const uint8_t *blk = (const uint8_t *)w + (row * nb + i) * 144;
                qb_half hd, hm;
                memcpy(&hd, blk, 2);
                memcpy(&hm, blk + 2, 2);
                const uint8_t *sc = blk + 4, *qs = blk + 16;
                for (int j = 0; j < 8; j++) {
                    uint8_t s, m;
                    get_scale_min_k4(j, sc, &s, &m);
                    const uint8_t *q = qs + 32 * (j / 2);
#if defined(__AVX2__)
                    __m256i qv = _mm256_loadu_si256((const __m256i *)q);
                    if (j & 1) qv = _mm256_srli_epi16(qv, 4);
                    put_v(tile, 8 * i + j, r, _mm256_and_si256(qv, _mm256_set1_epi8(0x0F)), h2f(hd) * (float)s,
                          -h2f(hm) * (float)m);
                    continue;
#endif
                    for (int l = 0; l < 32; l++) v[l] = (j & 1) ? q[l] >> 4 : q[l] & 0xF;
                    put(tile, 8 * i + j, r, v, h2f(hd) * (float)s, -h2f(hm) * (float)m);
                }
            }
        }
    }
}

void qb_pack_tile_mlx(int32_t bits, int64_t group, const uint32_t *w, const void *scales, const void *biases,
                      int32_t sdtype, int64_t r0, int64_t cols, uint8_t *tile) {
#if defined(QB_AVX512)
    if (bits == 4 && cols % 64 == 0) return pack_mlx4_512(group, w, scales, biases, sdtype, r0, cols, tile);
#endif
    uint8_t v[32];
    int64_t nb = cols / 32, groups = cols / group;
    for (int r = 0; r < QB_TILE_ROWS; r++) {
        int64_t row = r0 + r;
        const uint8_t *bytes = (const uint8_t *)(w + row * (cols * bits / 32));
        for (int64_t b = 0; b < nb; b++) {
            if (bits == 4) {
#if defined(__AVX2__)
                int64_t g = row * groups + 32 * b / group;
                put_v(tile, b, r, nibbles_interleaved(bytes + 16 * b), load_scale(scales, sdtype, g),
                      load_scale(biases, sdtype, g));
                continue;
#endif
                for (int j = 0; j < 32; j++) v[j] = (bytes[16 * b + j / 2] >> (4 * (j & 1))) & 0xF;
            } else {
                memcpy(v, bytes + 32 * b, 32);
            }
            int64_t g = row * groups + 32 * b / group;
            put(tile, b, r, v, load_scale(scales, sdtype, g), load_scale(biases, sdtype, g));
        }
    }
}

static void gemm_scalar(const uint8_t *tile, const qb_q8a *x, float *y, int64_t nb) {
    float acc[QB_TILE_ROWS] = {0};
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *blk = tile + b * QB_TILE_BLOCK_BYTES;
        for (int r = 0; r < QB_TILE_ROWS; r++) {
            int sum = 0;
            for (int s = 0; s < 8; s++)
                for (int t = 0; t < 4; t++) sum += blk[128 + 64 * s + 4 * r + t] * x[b].qs[4 * s + t];
            float d, m;
            memcpy(&d, blk + 4 * r, 4);
            memcpy(&m, blk + 64 + 4 * r, 4);
            acc[r] += d * x[b].d * (float)sum + m * x[b].s;
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

// `n` activation rows (x: n rows of nb blocks) against one tile. Inlined with a constant
// `n`, so the accumulators stay in registers.
static inline __attribute__((always_inline)) void gemm_vnni(const uint8_t *tile, const qb_q8a *x, int64_t nb, float *y,
                                                            int64_t ystride, const int n) {
    __m512 acc[8], macc[8];
    for (int c = 0; c < n; c++) acc[c] = macc[c] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *blk = tile + b * QB_TILE_BLOCK_BYTES;
        __m512i is[8];
        for (int c = 0; c < n; c++) is[c] = _mm512_setzero_si512();
        for (int s = 0; s < 8; s++) {
            __m512i wv = _mm512_loadu_si512((const void *)(blk + 128 + 64 * s));
            for (int c = 0; c < n; c++) is[c] = _mm512_dpbusd_epi32(is[c], wv, bcast4_512(x[c * nb + b].qs + 4 * s));
        }
        __m512 d = _mm512_loadu_ps((const float *)blk), m = _mm512_loadu_ps((const float *)(blk + 64));
        for (int c = 0; c < n; c++) {
            const qb_q8a *a = x + c * nb + b;
            acc[c] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(is[c]), _mm512_set1_ps(a->d)), d, acc[c]);
            macc[c] = _mm512_fmadd_ps(m, _mm512_set1_ps(a->s), macc[c]);
        }
    }
    for (int c = 0; c < n; c++) _mm512_storeu_ps(y + c * ystride, _mm512_add_ps(acc[c], macc[c]));
}

static void gemm_vnni8(const uint8_t *t, const qb_q8a *x, int64_t nb, float *y, int64_t ys) { gemm_vnni(t, x, nb, y, ys, 8); }
static void gemm_vnni4(const uint8_t *t, const qb_q8a *x, int64_t nb, float *y, int64_t ys) { gemm_vnni(t, x, nb, y, ys, 4); }
static void gemm_vnni1(const uint8_t *t, const qb_q8a *x, int64_t nb, float *y, int64_t ys) { gemm_vnni(t, x, nb, y, ys, 1); }
#elif defined(__AVX2__)
// Four activation rows per pass over one 8-row half `h` of a tile: each 32-byte half step of
// weights is loaded (and split) once for all four. A 16-bit lane of vpmaddubsw adds two
// products; lanes sum across steps only as far as the values' width lets them:
// 4 bits: all 8 steps (15 x 127 x 2 x 8 = 30480), widened once per block;
// 5 bits: 4 steps (31 x 127 x 2 x 4 = 31496), widened twice per block;
// 8 bits: not one pair fits (255 x 127 x 2), so each value is taken as 16 x its high nibble
// plus its low one, both summed as 4-bit values, and vpmaddwd multiplies the high sums by
// 16 as it widens them (a 32-bit lane holds 16 x 30480 x 2).
static inline __attribute__((always_inline)) void gemm_x4(const uint8_t *tile, int h, const qb_q8a *x, int64_t nb,
                                                          float *y, int64_t ystride, const int bits) {
    const __m256i ones = _mm256_set1_epi16(1), sixteen = _mm256_set1_epi16(16), low = _mm256_set1_epi8(0x0F);
    __m256 acc[4];
    for (int c = 0; c < 4; c++) acc[c] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *blk = tile + b * QB_TILE_BLOCK_BYTES;
        __m256i lo[4], hi[4], wide[4];
        for (int c = 0; c < 4; c++) lo[c] = hi[c] = wide[c] = _mm256_setzero_si256();
        for (int s = 0; s < 8; s++) {
            __m256i wv = _mm256_loadu_si256((const __m256i *)(blk + 128 + 64 * s + 32 * h)), wh = wv;
            if (bits == 8) {
                wh = _mm256_and_si256(_mm256_srli_epi16(wv, 4), low);
                wv = _mm256_and_si256(wv, low);
            }
            for (int c = 0; c < 4; c++) {
                int32_t v;
                memcpy(&v, x[c * nb + b].qs + 4 * s, 4);
                __m256i xv = _mm256_set1_epi32(v);
                lo[c] = _mm256_add_epi16(lo[c], _mm256_maddubs_epi16(wv, xv));
                if (bits == 8) hi[c] = _mm256_add_epi16(hi[c], _mm256_maddubs_epi16(wh, xv));
            }
            if (bits == 5 && s == 3)
                for (int c = 0; c < 4; c++) {
                    wide[c] = _mm256_madd_epi16(lo[c], ones);
                    lo[c] = _mm256_setzero_si256();
                }
        }
        __m256 d = _mm256_loadu_ps((const float *)(blk + 32 * h)), m = _mm256_loadu_ps((const float *)(blk + 64 + 32 * h));
        for (int c = 0; c < 4; c++) {
            const qb_q8a *a = x + c * nb + b;
            __m256i is = _mm256_madd_epi16(lo[c], ones);
            if (bits == 5) is = _mm256_add_epi32(is, wide[c]);
            if (bits == 8) is = _mm256_add_epi32(is, _mm256_madd_epi16(hi[c], sixteen));
            acc[c] = _mm256_fmadd_ps(m, _mm256_set1_ps(a->s),
                                     _mm256_fmadd_ps(_mm256_cvtepi32_ps(is), _mm256_mul_ps(d, _mm256_set1_ps(a->d)), acc[c]));
        }
    }
    for (int c = 0; c < 4; c++) _mm256_storeu_ps(y + c * ystride + 8 * h, acc[c]);
}

static void gemm_x4_b4(const uint8_t *t, int h, const qb_q8a *x, int64_t nb, float *y, int64_t ys) { gemm_x4(t, h, x, nb, y, ys, 4); }
static void gemm_x4_b5(const uint8_t *t, int h, const qb_q8a *x, int64_t nb, float *y, int64_t ys) { gemm_x4(t, h, x, nb, y, ys, 5); }
static void gemm_x4_b8(const uint8_t *t, int h, const qb_q8a *x, int64_t nb, float *y, int64_t ys) { gemm_x4(t, h, x, nb, y, ys, 8); }
#endif

void qb_gemm_tile(const uint8_t *tile, int32_t bits, const qb_q8a *x, int64_t count, int64_t cols, float *y,
                  int64_t ystride) {
    int64_t nb = cols / 32, c = 0;
#if defined(QB_AVX512)
    for (; c + 7 < count; c += 8) gemm_vnni8(tile, x + c * nb, nb, y + c * ystride, ystride);
    for (; c + 3 < count; c += 4) gemm_vnni4(tile, x + c * nb, nb, y + c * ystride, ystride);
    for (; c < count; c++) gemm_vnni1(tile, x + c * nb, nb, y + c * ystride, ystride);
#elif defined(__AVX2__)
    void (*pass)(const uint8_t *, int, const qb_q8a *, int64_t, float *, int64_t) =
        bits <= 4 ? gemm_x4_b4 : bits == 5 ? gemm_x4_b5 : gemm_x4_b8;
    for (; c + 3 < count; c += 4)
        for (int h = 0; h < 2; h++) pass(tile, h, x + c * nb, nb, y + c * ystride, ystride);
#else
    (void)bits;  // 32-bit sums take any width
#endif
    for (; c < count; c++) gemm_scalar(tile, x + c * nb, y + c * ystride, nb);
}

// ---------------------------------------------------------------------------------------
// Q6_K: 16-value halves each with their own scale; in the AVX2 fallback 16-bit lanes hold
// two steps at most (63 x 127 x 2 x 2 = 32004).

void qb_q8a_sums16(const qb_q8a *x, int64_t blocks, float *s16) {
    for (int64_t b = 0; b < blocks; b++) {
        for (int h = 0; h < 2; h++) {
            int sum = 0;
            for (int j = 0; j < 16; j++) sum += x[b].qs[16 * h + j];
            s16[2 * b + h] = x[b].d * (float)sum;
        }
    }
}

#if defined(QB_AVX512)
// Q6_K as pack_q4k_512: per row and 128-value half, the low nibbles with their two high
// bits give sub-blocks 0-1 of the half, the high nibbles 2-3 (q6_K_q8k_512's unpacking).
static void pack_q6k_512(const void *w, int64_t r0, int64_t cols, uint8_t *tile) {
    int64_t nb = cols / 256;
    const __m512i m4 = _mm512_set1_epi8(0x0F), m3 = _mm512_set1_epi8(0x03);
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *blk[QB_TILE_ROWS];
        float d[QB_TILE_ROWS][16];
        for (int r = 0; r < QB_TILE_ROWS; r++) {
            blk[r] = (const uint8_t *)w + ((r0 + r) * nb + i) * 210;
            qb_half hd;
            memcpy(&hd, blk[r] + 208, 2);
            __m512 sc = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(blk[r] + 192))));
            _mm512_storeu_ps(d[r], _mm512_mul_ps(sc, _mm512_set1_ps(h2f(hd))));
        }
        for (int j = 0; j < 8; j++) {
            uint8_t *out = tile + (8 * i + j) * QB_TILE6_BLOCK_BYTES;
            for (int hh = 0; hh < 2; hh++)
                for (int r = 0; r < QB_TILE_ROWS; r++) {
                    float dd = d[r][2 * j + hh], mm = -32.0f * dd;
                    memcpy(out + 64 * hh + 4 * r, &dd, 4);
                    memcpy(out + 128 + 64 * hh + 4 * r, &mm, 4);
                }
        }
        for (int n = 0; n < 2; n++) {
            __m512i lo[QB_TILE_ROWS], hi[QB_TILE_ROWS];
            for (int r = 0; r < QB_TILE_ROWS; r++) {
                __m512i ql = _mm512_loadu_si512((const void *)(blk[r] + 64 * n));
                __m256i h = _mm256_loadu_si256((const __m256i *)(blk[r] + 128 + 32 * n));
                __m512i hl = _mm512_inserti64x4(_mm512_castsi256_si512(h), _mm256_srli_epi16(h, 2), 1);
                lo[r] = _mm512_or_si512(_mm512_and_si512(ql, m4), _mm512_slli_epi16(_mm512_and_si512(hl, m3), 4));
                hi[r] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m4),
                                        _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(hl, 4), m3), 4));
            }
            put_pair16(tile, QB_TILE6_BLOCK_BYTES, 256, 8 * i + 4 * n, lo);
            put_pair16(tile, QB_TILE6_BLOCK_BYTES, 256, 8 * i + 4 * n + 2, hi);
        }
    }
}
#endif

void qb_pack_tile_q6k(const void *w, int64_t r0, int64_t cols, uint8_t *tile) {
#if defined(QB_AVX512)
    return pack_q6k_512(w, r0, cols, tile);
#endif
    int64_t nb = cols / 256;
    for (int r = 0; r < QB_TILE_ROWS; r++) {
        for (int64_t i = 0; i < nb; i++) {
            const uint8_t *blk = (const uint8_t *)w + ((r0 + r) * nb + i) * 210;
            const uint8_t *ql = blk, *qh = blk + 128;
            const int8_t *sc = (const int8_t *)(blk + 192);
            qb_half hd;
            memcpy(&hd, blk + 208, 2);
            float d = h2f(hd);
            uint8_t v[256];
            for (int n = 0; n < 2; n++) {
                for (int l = 0; l < 32; l++) {
                    const uint8_t *a = ql + 64 * n, *h = qh + 32 * n;
                    v[128 * n + l] = (uint8_t)((a[l] & 0xF) | (((h[l] >> 0) & 3) << 4));
                    v[128 * n + l + 32] = (uint8_t)((a[l + 32] & 0xF) | (((h[l] >> 2) & 3) << 4));
                    v[128 * n + l + 64] = (uint8_t)((a[l] >> 4) | (((h[l] >> 4) & 3) << 4));
                    v[128 * n + l + 96] = (uint8_t)((a[l + 32] >> 4) | (((h[l] >> 6) & 3) << 4));
                }
            }
            for (int j = 0; j < 8; j++) {
                uint8_t *out = tile + (8 * i + j) * QB_TILE6_BLOCK_BYTES;
                for (int hh = 0; hh < 2; hh++) {
                    float dd = d * (float)sc[2 * j + hh], mm = -32.0f * dd;
                    memcpy(out + 64 * hh + 4 * r, &dd, 4);
                    memcpy(out + 128 + 64 * hh + 4 * r, &mm, 4);
                }
                for (int s = 0; s < 8; s++) memcpy(out + 256 + 64 * s + 4 * r, v + 32 * j + 4 * s, 4);
            }
        }
    }
}

static void gemm6_scalar(const uint8_t *tile, const qb_q8a *x, const float *s16, float *y, int64_t nb) {
    float acc[QB_TILE_ROWS] = {0};
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *blk = tile + b * QB_TILE6_BLOCK_BYTES;
        for (int r = 0; r < QB_TILE_ROWS; r++) {
            for (int h = 0; h < 2; h++) {
                int sum = 0;
                for (int s = 4 * h; s < 4 * h + 4; s++)
                    for (int t = 0; t < 4; t++) sum += blk[256 + 64 * s + 4 * r + t] * x[b].qs[4 * s + t];
                float d, m;
                memcpy(&d, blk + 64 * h + 4 * r, 4);
                memcpy(&m, blk + 128 + 64 * h + 4 * r, 4);
                acc[r] += d * x[b].d * (float)sum + m * s16[2 * b + h];
            }
        }
    }
    memcpy(y, acc, sizeof acc);
}

#if defined(QB_AVX512)
static inline __attribute__((always_inline)) void gemm6_vnni(const uint8_t *tile, const qb_q8a *x, const float *s16,
                                                             int64_t nb, float *y, int64_t ystride, const int n) {
    __m512 acc[8], macc[8];
    for (int c = 0; c < n; c++) acc[c] = macc[c] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *blk = tile + b * QB_TILE6_BLOCK_BYTES;
        for (int h = 0; h < 2; h++) {
            __m512i is[8];
            for (int c = 0; c < n; c++) is[c] = _mm512_setzero_si512();
            for (int s = 4 * h; s < 4 * h + 4; s++) {
                __m512i wv = _mm512_loadu_si512((const void *)(blk + 256 + 64 * s));
                for (int c = 0; c < n; c++) is[c] = _mm512_dpbusd_epi32(is[c], wv, bcast4_512(x[c * nb + b].qs + 4 * s));
            }
            __m512 d = _mm512_loadu_ps((const float *)(blk + 64 * h)), m = _mm512_loadu_ps((const float *)(blk + 128 + 64 * h));
            for (int c = 0; c < n; c++) {
                acc[c] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(is[c]), _mm512_set1_ps(x[c * nb + b].d)), d, acc[c]);
                macc[c] = _mm512_fmadd_ps(m, _mm512_set1_ps(s16[c * 2 * nb + 2 * b + h]), macc[c]);
            }
        }
    }
    for (int c = 0; c < n; c++) _mm512_storeu_ps(y + c * ystride, _mm512_add_ps(acc[c], macc[c]));
}

static void gemm6_vnni8(const uint8_t *t, const qb_q8a *x, const float *s, int64_t nb, float *y, int64_t ys) { gemm6_vnni(t, x, s, nb, y, ys, 8); }
static void gemm6_vnni4(const uint8_t *t, const qb_q8a *x, const float *s, int64_t nb, float *y, int64_t ys) { gemm6_vnni(t, x, s, nb, y, ys, 4); }
static void gemm6_vnni1(const uint8_t *t, const qb_q8a *x, const float *s, int64_t nb, float *y, int64_t ys) { gemm6_vnni(t, x, s, nb, y, ys, 1); }
#elif defined(__AVX2__)
static inline __m256i bcast4(const int8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
}

// Two activation rows per pass over one 8-row half `rh` of a tile (the 16-bit partial sums
// of four value halves stay in registers).
static void gemm6_x2(const uint8_t *tile, int rh, const qb_q8a *x0, const qb_q8a *x1, const float *s0, const float *s1,
                     float *y0, float *y1, int64_t nb) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *blk = tile + b * QB_TILE6_BLOCK_BYTES;
        for (int h = 0; h < 2; h++) {
            __m256i i0 = _mm256_setzero_si256(), i1 = _mm256_setzero_si256();
            for (int s = 4 * h; s < 4 * h + 4; s += 2) {
                __m256i w0 = _mm256_loadu_si256((const __m256i *)(blk + 256 + 64 * s + 32 * rh));
                __m256i w1 = _mm256_loadu_si256((const __m256i *)(blk + 320 + 64 * s + 32 * rh));
                __m256i p0 = _mm256_add_epi16(_mm256_maddubs_epi16(w0, bcast4(x0[b].qs + 4 * s)), _mm256_maddubs_epi16(w1, bcast4(x0[b].qs + 4 * s + 4)));
                __m256i p1 = _mm256_add_epi16(_mm256_maddubs_epi16(w0, bcast4(x1[b].qs + 4 * s)), _mm256_maddubs_epi16(w1, bcast4(x1[b].qs + 4 * s + 4)));
                i0 = _mm256_add_epi32(i0, _mm256_madd_epi16(p0, ones));
                i1 = _mm256_add_epi32(i1, _mm256_madd_epi16(p1, ones));
            }
            __m256 d = _mm256_loadu_ps((const float *)(blk + 64 * h + 32 * rh));
            __m256 m = _mm256_loadu_ps((const float *)(blk + 128 + 64 * h + 32 * rh));
            a0 = _mm256_fmadd_ps(m, _mm256_set1_ps(s0[2 * b + h]), _mm256_fmadd_ps(_mm256_cvtepi32_ps(i0), _mm256_mul_ps(d, _mm256_set1_ps(x0[b].d)), a0));
            a1 = _mm256_fmadd_ps(m, _mm256_set1_ps(s1[2 * b + h]), _mm256_fmadd_ps(_mm256_cvtepi32_ps(i1), _mm256_mul_ps(d, _mm256_set1_ps(x1[b].d)), a1));
        }
    }
    _mm256_storeu_ps(y0 + 8 * rh, a0);
    _mm256_storeu_ps(y1 + 8 * rh, a1);
}
#endif

void qb_gemm_tile6(const uint8_t *tile, const qb_q8a *x, const float *s16, int64_t count, int64_t cols, float *y,
                   int64_t ystride) {
    int64_t nb = cols / 32, c = 0;
#if defined(QB_AVX512)
    for (; c + 7 < count; c += 8) gemm6_vnni8(tile, x + c * nb, s16 + c * 2 * nb, nb, y + c * ystride, ystride);
    for (; c + 3 < count; c += 4) gemm6_vnni4(tile, x + c * nb, s16 + c * 2 * nb, nb, y + c * ystride, ystride);
    for (; c < count; c++) gemm6_vnni1(tile, x + c * nb, s16 + c * 2 * nb, nb, y + c * ystride, ystride);
#elif defined(__AVX2__)
    for (; c + 1 < count; c += 2)
        for (int rh = 0; rh < 2; rh++)
            gemm6_x2(tile, rh, x + c * nb, x + (c + 1) * nb, s16 + c * 2 * nb, s16 + (c + 1) * 2 * nb, y + c * ystride,
                     y + (c + 1) * ystride, nb);
#endif
    for (; c < count; c++) gemm6_scalar(tile, x + c * nb, s16 + c * 2 * nb, y + c * ystride, nb);
}
