// Prefill products of 4-bit weights with int8 activations (layout in qb_gemm.h). The scalar
// loop is the definition; the AVX2 path keeps per-row sums of up to 8 x 4 products in
// 16-bit lanes (15 x 127 x 2 x 8 = 30480 fits), widens once per 32 values and applies
// D x (activation scale) and M x (activation block sum) in f32.
#include "qb_gemm.h"
#include "qb_scalar.h"
#include <string.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

// Writes one row's 32 values, scale and offset into block `b` of the tile at lane `r`.
static inline void put(uint8_t *tile, int64_t b, int r, const uint8_t v[32], float d, float m) {
    uint8_t *blk = tile + b * QB_U4X8_BLOCK_BYTES;
    memcpy(blk + 4 * r, &d, 4);
    memcpy(blk + 32 + 4 * r, &m, 4);
    for (int s = 0; s < 8; s++) memcpy(blk + 64 + 32 * s + 4 * r, v + 4 * s, 4);
}

void qb_pack_u4x8_ggml(int32_t type, int32_t interleaved, const void *w, int64_t r0, int64_t cols, uint8_t *tile) {
    uint8_t v[32];
    for (int r = 0; r < 8; r++) {
        int64_t row = r0 + r;
        if (type == QB_Q4_0) {
            int64_t nb = cols / 32;
            for (int64_t b = 0; b < nb; b++) {
                const uint8_t *qs;
                qb_half hd;
                if (interleaved) {
                    const uint8_t *g = (const uint8_t *)w + ((row / 4) * nb + b) * 72;
                    memcpy(&hd, g + 2 * (row % 4), 2);
                    qs = g + 8 + 16 * (row % 4);
                } else {
                    const uint8_t *blk = (const uint8_t *)w + (row * nb + b) * 18;
                    memcpy(&hd, blk, 2);
                    qs = blk + 2;
                }
                for (int j = 0; j < 16; j++) {
                    v[j] = qs[j] & 0xF;
                    v[j + 16] = qs[j] >> 4;
                }
                float d = h2f(hd);
                put(tile, b, r, v, d, -8.0f * d);
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
                    for (int l = 0; l < 32; l++) v[l] = (j & 1) ? q[l] >> 4 : q[l] & 0xF;
                    put(tile, 8 * i + j, r, v, h2f(hd) * (float)s, -h2f(hm) * (float)m);
                }
            }
        }
    }
}

void qb_pack_u4x8_mlx(int64_t group, const uint32_t *w, const void *scales, const void *biases, int32_t sdtype,
                      int64_t r0, int64_t cols, uint8_t *tile) {
    uint8_t v[32];
    int64_t nb = cols / 32, groups = cols / group;
    for (int r = 0; r < 8; r++) {
        int64_t row = r0 + r;
        const uint8_t *bytes = (const uint8_t *)(w + row * (cols / 8));
        for (int64_t b = 0; b < nb; b++) {
            for (int j = 0; j < 32; j++) v[j] = (bytes[16 * b + j / 2] >> (4 * (j & 1))) & 0xF;
            int64_t g = row * groups + 32 * b / group;
            put(tile, b, r, v, load_scale(scales, sdtype, g), load_scale(biases, sdtype, g));
        }
    }
}

static void gemm_scalar(const uint8_t *tile, const qb_q8a *x, float *y, int64_t nb) {
    float acc[8] = {0};
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *blk = tile + b * QB_U4X8_BLOCK_BYTES;
        for (int r = 0; r < 8; r++) {
            int sum = 0;
            for (int s = 0; s < 8; s++)
                for (int t = 0; t < 4; t++) sum += blk[64 + 32 * s + 4 * r + t] * x[b].qs[4 * s + t];
            float d, m;
            memcpy(&d, blk + 4 * r, 4);
            memcpy(&m, blk + 32 + 4 * r, 4);
            acc[r] += d * x[b].d * (float)sum + m * x[b].s;
        }
    }
    memcpy(y, acc, sizeof acc);
}

#if defined(__AVX2__)
// Four activation rows per pass: each 32-byte step of weights is loaded once for all four.
static void gemm_x4(const uint8_t *tile, const qb_q8a *x0, const qb_q8a *x1, const qb_q8a *x2, const qb_q8a *x3,
                    float *y0, float *y1, float *y2, float *y3, int64_t nb) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *blk = tile + b * QB_U4X8_BLOCK_BYTES;
        __m256i p0 = _mm256_setzero_si256(), p1 = _mm256_setzero_si256(), p2 = _mm256_setzero_si256(), p3 = _mm256_setzero_si256();
        for (int s = 0; s < 8; s++) {
            __m256i wv = _mm256_load_si256((const __m256i *)(blk + 64 + 32 * s));
            int32_t v0, v1, v2, v3;
            memcpy(&v0, x0[b].qs + 4 * s, 4);
            memcpy(&v1, x1[b].qs + 4 * s, 4);
            memcpy(&v2, x2[b].qs + 4 * s, 4);
            memcpy(&v3, x3[b].qs + 4 * s, 4);
            p0 = _mm256_add_epi16(p0, _mm256_maddubs_epi16(wv, _mm256_set1_epi32(v0)));
            p1 = _mm256_add_epi16(p1, _mm256_maddubs_epi16(wv, _mm256_set1_epi32(v1)));
            p2 = _mm256_add_epi16(p2, _mm256_maddubs_epi16(wv, _mm256_set1_epi32(v2)));
            p3 = _mm256_add_epi16(p3, _mm256_maddubs_epi16(wv, _mm256_set1_epi32(v3)));
        }
        __m256 d = _mm256_load_ps((const float *)blk), m = _mm256_load_ps((const float *)(blk + 32));
        a0 = _mm256_fmadd_ps(m, _mm256_set1_ps(x0[b].s), _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(p0, ones)), _mm256_mul_ps(d, _mm256_set1_ps(x0[b].d)), a0));
        a1 = _mm256_fmadd_ps(m, _mm256_set1_ps(x1[b].s), _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(p1, ones)), _mm256_mul_ps(d, _mm256_set1_ps(x1[b].d)), a1));
        a2 = _mm256_fmadd_ps(m, _mm256_set1_ps(x2[b].s), _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(p2, ones)), _mm256_mul_ps(d, _mm256_set1_ps(x2[b].d)), a2));
        a3 = _mm256_fmadd_ps(m, _mm256_set1_ps(x3[b].s), _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(p3, ones)), _mm256_mul_ps(d, _mm256_set1_ps(x3[b].d)), a3));
    }
    _mm256_storeu_ps(y0, a0);
    _mm256_storeu_ps(y1, a1);
    _mm256_storeu_ps(y2, a2);
    _mm256_storeu_ps(y3, a3);
}
#endif

void qb_gemm_u4x8(const uint8_t *tile, const qb_q8a *x, int64_t count, int64_t cols, float *y, int64_t ystride) {
    int64_t nb = cols / 32, c = 0;
#if defined(__AVX2__)
    for (; c + 3 < count; c += 4)
        gemm_x4(tile, x + c * nb, x + (c + 1) * nb, x + (c + 2) * nb, x + (c + 3) * nb, y + c * ystride,
                y + (c + 1) * ystride, y + (c + 2) * ystride, y + (c + 3) * ystride, nb);
#endif
    for (; c < count; c++) gemm_scalar(tile, x + c * nb, y + c * ystride, nb);
}

// ---------------------------------------------------------------------------------------
// Q6_K: 16-value halves each with their own scale; 16-bit lanes hold two steps at most
// (63 x 127 x 2 x 2 = 32004).

void qb_q8a_sums16(const qb_q8a *x, int64_t blocks, float *s16) {
    for (int64_t b = 0; b < blocks; b++) {
        for (int h = 0; h < 2; h++) {
            int sum = 0;
            for (int j = 0; j < 16; j++) sum += x[b].qs[16 * h + j];
            s16[2 * b + h] = x[b].d * (float)sum;
        }
    }
}

void qb_pack_u6x8_q6k(const void *w, int64_t r0, int64_t cols, uint8_t *tile) {
    int64_t nb = cols / 256;
    for (int r = 0; r < 8; r++) {
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
                uint8_t *out = tile + (8 * i + j) * QB_U6X8_BLOCK_BYTES;
                for (int hh = 0; hh < 2; hh++) {
                    float dd = d * (float)sc[2 * j + hh], mm = -32.0f * dd;
                    memcpy(out + 32 * hh + 4 * r, &dd, 4);
                    memcpy(out + 64 + 32 * hh + 4 * r, &mm, 4);
                }
                for (int s = 0; s < 8; s++) memcpy(out + 128 + 32 * s + 4 * r, v + 32 * j + 4 * s, 4);
            }
        }
    }
}

static void gemm6_scalar(const uint8_t *tile, const qb_q8a *x, const float *s16, float *y, int64_t nb) {
    float acc[8] = {0};
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *blk = tile + b * QB_U6X8_BLOCK_BYTES;
        for (int r = 0; r < 8; r++) {
            for (int h = 0; h < 2; h++) {
                int sum = 0;
                for (int s = 4 * h; s < 4 * h + 4; s++)
                    for (int t = 0; t < 4; t++) sum += blk[128 + 32 * s + 4 * r + t] * x[b].qs[4 * s + t];
                float d, m;
                memcpy(&d, blk + 32 * h + 4 * r, 4);
                memcpy(&m, blk + 64 + 32 * h + 4 * r, 4);
                acc[r] += d * x[b].d * (float)sum + m * s16[2 * b + h];
            }
        }
    }
    memcpy(y, acc, sizeof acc);
}

#if defined(__AVX2__)
static inline __m256i bcast4(const int8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
}

// Two activation rows per pass (the 16-bit partial sums of four halves stay in registers).
static void gemm6_x2(const uint8_t *tile, const qb_q8a *x0, const qb_q8a *x1, const float *s0, const float *s1,
                     float *y0, float *y1, int64_t nb) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *blk = tile + b * QB_U6X8_BLOCK_BYTES;
        for (int h = 0; h < 2; h++) {
            __m256i i0 = _mm256_setzero_si256(), i1 = _mm256_setzero_si256();
            for (int s = 4 * h; s < 4 * h + 4; s += 2) {
                __m256i w0 = _mm256_load_si256((const __m256i *)(blk + 128 + 32 * s));
                __m256i w1 = _mm256_load_si256((const __m256i *)(blk + 160 + 32 * s));
                __m256i p0 = _mm256_add_epi16(_mm256_maddubs_epi16(w0, bcast4(x0[b].qs + 4 * s)), _mm256_maddubs_epi16(w1, bcast4(x0[b].qs + 4 * s + 4)));
                __m256i p1 = _mm256_add_epi16(_mm256_maddubs_epi16(w0, bcast4(x1[b].qs + 4 * s)), _mm256_maddubs_epi16(w1, bcast4(x1[b].qs + 4 * s + 4)));
                i0 = _mm256_add_epi32(i0, _mm256_madd_epi16(p0, ones));
                i1 = _mm256_add_epi32(i1, _mm256_madd_epi16(p1, ones));
            }
            __m256 d = _mm256_load_ps((const float *)(blk + 32 * h)), m = _mm256_load_ps((const float *)(blk + 64 + 32 * h));
            a0 = _mm256_fmadd_ps(m, _mm256_set1_ps(s0[2 * b + h]), _mm256_fmadd_ps(_mm256_cvtepi32_ps(i0), _mm256_mul_ps(d, _mm256_set1_ps(x0[b].d)), a0));
            a1 = _mm256_fmadd_ps(m, _mm256_set1_ps(s1[2 * b + h]), _mm256_fmadd_ps(_mm256_cvtepi32_ps(i1), _mm256_mul_ps(d, _mm256_set1_ps(x1[b].d)), a1));
        }
    }
    _mm256_storeu_ps(y0, a0);
    _mm256_storeu_ps(y1, a1);
}
#endif

void qb_gemm_u6x8(const uint8_t *tile, const qb_q8a *x, const float *s16, int64_t count, int64_t cols, float *y,
                  int64_t ystride) {
    int64_t nb = cols / 32, c = 0;
#if defined(__AVX2__)
    for (; c + 1 < count; c += 2)
        gemm6_x2(tile, x + c * nb, x + (c + 1) * nb, s16 + c * 2 * nb, s16 + (c + 1) * 2 * nb, y + c * ystride,
                 y + (c + 1) * ystride, nb);
#endif
    for (; c < count; c++) gemm6_scalar(tile, x + c * nb, s16 + c * 2 * nb, y + c * ystride, nb);
}
