// Block-quantized formats: dequantization, activation quantization, integer dot products
// and quantizers. Block layouts and formulas are GGML's and MLX's (so files interoperate);
// the scalar code is the readable definition, the AVX2 paths the fast one for the formats
// that carry real models (Q4_0, Q8_0, Q4_K, Q6_K, MLX 4/8-bit).
#include "qb_quant.h"
#include "qb_scalar.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

// Dequantization must round like GGML's and MLX's own: a product, then a sum, each
// rounded (no fused multiply-add). The fast dot products use explicit FMA intrinsics.
#pragma clang fp contract(off)

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
typedef struct { qb_half d; uint16_t scales_h; uint8_t scales_l[4]; uint8_t qs[128]; } block_iq4_xs;

_Static_assert(sizeof(block_q4_0) == 18, "q4_0");
_Static_assert(sizeof(block_q4_1) == 20, "q4_1");
_Static_assert(sizeof(block_q5_0) == 22, "q5_0");
_Static_assert(sizeof(block_q5_1) == 24, "q5_1");
_Static_assert(sizeof(block_q8_0) == 34, "q8_0");
_Static_assert(sizeof(block_q4_K) == 144, "q4_K");
_Static_assert(sizeof(block_q5_K) == 176, "q5_K");
_Static_assert(sizeof(block_q6_K) == 210, "q6_K");
_Static_assert(sizeof(block_iq4_xs) == 136, "iq4_xs");

static const int8_t kvalues_iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};


int64_t qb_block_size(int32_t type) {
    switch (type) {
    case QB_F32: case QB_F16: case QB_BF16: return 1;
    case QB_Q4_0: case QB_Q4_1: case QB_Q5_0: case QB_Q5_1: case QB_Q8_0: return QK;
    case QB_Q4_K: case QB_Q5_K: case QB_Q6_K: case QB_IQ4_XS: return QK_K;
    default: return 0;
    }
}

int64_t qb_block_bytes(int32_t type) {
    switch (type) {
    case QB_F32: return 4;
    case QB_F16: case QB_BF16: return 2;
    case QB_Q4_0: return sizeof(block_q4_0);
    case QB_Q4_1: return sizeof(block_q4_1);
    case QB_Q5_0: return sizeof(block_q5_0);
    case QB_Q5_1: return sizeof(block_q5_1);
    case QB_Q8_0: return sizeof(block_q8_0);
    case QB_Q4_K: return sizeof(block_q4_K);
    case QB_Q5_K: return sizeof(block_q5_K);
    case QB_Q6_K: return sizeof(block_q6_K);
    case QB_IQ4_XS: return sizeof(block_iq4_xs);
    default: return 0;
    }
}

// ---------------------------------------------------------------------------------------
// Dequantization (GGML's formulas).


static void dequant_q4_0(const block_q4_0 *x, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        float d = h2f(x[i].d);
        for (int j = 0; j < 16; j++) {
            y[i * QK + j] = ((x[i].qs[j] & 0xF) - 8) * d;
            y[i * QK + j + 16] = ((x[i].qs[j] >> 4) - 8) * d;
        }
    }
}

static void dequant_q4_1(const block_q4_1 *x, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        float d = h2f(x[i].d), m = h2f(x[i].m);
        for (int j = 0; j < 16; j++) {
            y[i * QK + j] = (x[i].qs[j] & 0xF) * d + m;
            y[i * QK + j + 16] = (x[i].qs[j] >> 4) * d + m;
        }
    }
}

static void dequant_q5_0(const block_q5_0 *x, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        float d = h2f(x[i].d);
        uint32_t qh;
        memcpy(&qh, x[i].qh, 4);
        for (int j = 0; j < 16; j++) {
            uint8_t h0 = ((qh >> j) << 4) & 0x10, h1 = (qh >> (j + 12)) & 0x10;
            y[i * QK + j] = (((x[i].qs[j] & 0xF) | h0) - 16) * d;
            y[i * QK + j + 16] = (((x[i].qs[j] >> 4) | h1) - 16) * d;
        }
    }
}

static void dequant_q5_1(const block_q5_1 *x, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        float d = h2f(x[i].d), m = h2f(x[i].m);
        uint32_t qh;
        memcpy(&qh, x[i].qh, 4);
        for (int j = 0; j < 16; j++) {
            uint8_t h0 = ((qh >> j) << 4) & 0x10, h1 = (qh >> (j + 12)) & 0x10;
            y[i * QK + j] = ((x[i].qs[j] & 0xF) | h0) * d + m;
            y[i * QK + j + 16] = ((x[i].qs[j] >> 4) | h1) * d + m;
        }
    }
}

static void dequant_q8_0(const block_q8_0 *x, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        float d = h2f(x[i].d);
        for (int j = 0; j < QK; j++) y[i * QK + j] = x[i].qs[j] * d;
    }
}

static void dequant_q4_K(const block_q4_K *x, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *q = x[i].qs;
        float d = h2f(x[i].d), dmin = h2f(x[i].dmin);
        int is = 0;
        for (int j = 0; j < QK_K; j += 64) {
            uint8_t sc, m;
            get_scale_min_k4(is + 0, x[i].scales, &sc, &m);
            float d1 = d * sc, m1 = dmin * m;
            get_scale_min_k4(is + 1, x[i].scales, &sc, &m);
            float d2 = d * sc, m2 = dmin * m;
            for (int l = 0; l < 32; l++) *y++ = d1 * (q[l] & 0xF) - m1;
            for (int l = 0; l < 32; l++) *y++ = d2 * (q[l] >> 4) - m2;
            q += 32;
            is += 2;
        }
    }
}

static void dequant_q5_K(const block_q5_K *x, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *ql = x[i].qs, *qh = x[i].qh;
        float d = h2f(x[i].d), dmin = h2f(x[i].dmin);
        int is = 0;
        uint8_t u1 = 1, u2 = 2;
        for (int j = 0; j < QK_K; j += 64) {
            uint8_t sc, m;
            get_scale_min_k4(is + 0, x[i].scales, &sc, &m);
            float d1 = d * sc, m1 = dmin * m;
            get_scale_min_k4(is + 1, x[i].scales, &sc, &m);
            float d2 = d * sc, m2 = dmin * m;
            for (int l = 0; l < 32; l++) *y++ = d1 * ((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
            for (int l = 0; l < 32; l++) *y++ = d2 * ((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
            ql += 32;
            is += 2;
            u1 <<= 2;
            u2 <<= 2;
        }
    }
}

static void dequant_q6_K(const block_q6_K *x, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        float d = h2f(x[i].d);
        const uint8_t *ql = x[i].ql, *qh = x[i].qh;
        const int8_t *sc = x[i].scales;
        for (int n = 0; n < QK_K; n += 128) {
            for (int l = 0; l < 32; l++) {
                int is = l / 16;
                int8_t q1 = (int8_t)((ql[l + 0] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
                int8_t q2 = (int8_t)((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                int8_t q3 = (int8_t)((ql[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                int8_t q4 = (int8_t)((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                y[l + 0] = d * sc[is + 0] * q1;
                y[l + 32] = d * sc[is + 2] * q2;
                y[l + 64] = d * sc[is + 4] * q3;
                y[l + 96] = d * sc[is + 6] * q4;
            }
            y += 128;
            ql += 64;
            qh += 32;
            sc += 8;
        }
    }
}

static void dequant_iq4_xs(const block_iq4_xs *x, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *qs = x[i].qs;
        float d = h2f(x[i].d);
        for (int ib = 0; ib < QK_K / 32; ib++) {
            int ls = ((x[i].scales_l[ib / 2] >> 4 * (ib % 2)) & 0xf) | (((x[i].scales_h >> 2 * ib) & 3) << 4);
            float dl = d * (ls - 32);
            for (int j = 0; j < 16; j++) {
                y[j + 0] = dl * kvalues_iq4nl[qs[j] & 0xf];
                y[j + 16] = dl * kvalues_iq4nl[qs[j] >> 4];
            }
            y += 32;
            qs += 16;
        }
    }
}

void qb_dequantize_row(int32_t type, const void *src, float *dst, int64_t n) {
    int64_t bs = qb_block_size(type);
    if (bs == 0) return;
    int64_t nb = n / bs;
    switch (type) {
    case QB_F32: memcpy(dst, src, (size_t)n * 4); break;
    case QB_F16: for (int64_t i = 0; i < n; i++) dst[i] = h2f(((const qb_half *)src)[i]); break;
    case QB_BF16: for (int64_t i = 0; i < n; i++) dst[i] = bf2f(((const uint16_t *)src)[i]); break;
    case QB_Q4_0: dequant_q4_0(src, dst, nb); break;
    case QB_Q4_1: dequant_q4_1(src, dst, nb); break;
    case QB_Q5_0: dequant_q5_0(src, dst, nb); break;
    case QB_Q5_1: dequant_q5_1(src, dst, nb); break;
    case QB_Q8_0: dequant_q8_0(src, dst, nb); break;
    case QB_Q4_K: dequant_q4_K(src, dst, nb); break;
    case QB_Q5_K: dequant_q5_K(src, dst, nb); break;
    case QB_Q6_K: dequant_q6_K(src, dst, nb); break;
    case QB_IQ4_XS: dequant_iq4_xs(src, dst, nb); break;
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
#endif

void qb_quantize_q8a(const float *x, qb_q8a *y, int64_t n) {
    int64_t i = 0;
#if defined(QB_AVX512)
    // The scalar loop below, on 16-float vectors: a decode step quantizes every matrix's
    // input on one thread while the others wait.
    const __m512 absmask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
    for (; i < n / QK; i++) {
        __m512 a = _mm512_loadu_ps(x + i * QK), b = _mm512_loadu_ps(x + i * QK + 16);
        float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_and_ps(a, absmask), _mm512_and_ps(b, absmask)));
        float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0;
        __m512 idv = _mm512_set1_ps(id);
        __m512i q = _mm512_add_epi32(round16(a, idv, y[i].qs), round16(b, idv, y[i].qs + 16));
        y[i].d = d;
        y[i].s = d * (float)_mm512_reduce_add_epi32(q);
    }
#endif
    for (; i < n / QK; i++) {
        const float *v = x + i * QK;
        float amax = 0;
        for (int j = 0; j < QK; j++) amax = fmaxf(amax, fabsf(v[j]));
        float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0;
        int sum = 0;
        for (int j = 0; j < QK; j++) {
            int q = (int)lrintf(v[j] * id);
            y[i].qs[j] = (int8_t)q;
            sum += q;
        }
        y[i].d = d;
        y[i].s = d * (float)sum;
    }
}

// ---------------------------------------------------------------------------------------
// Dot products of one weight row with quantized activations.

#if defined(__AVX2__)
// Signed x times signed y, summed in groups of 4 to 8 int32.
static inline __m256i dot_s8(__m256i x, __m256i y) {
    __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
    return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}
// Unsigned u (< 128) times signed y.
static inline __m256i dot_u8(__m256i u, __m256i y) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, y), _mm256_set1_epi16(1));
}
#endif

static float dot_q4_0(const block_q4_0 *w, const qb_q8a *a, int64_t nb) {
#if defined(__AVX2__)
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        __m256i q = _mm256_sub_epi8(nibbles_lo_hi(w[i].qs), _mm256_set1_epi8(8));
        __m256i p = dot_s8(q, _mm256_loadu_si256((const __m256i *)a[i].qs));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(h2f(w[i].d) * a[i].d), acc);
    }
    return hsum_ps(acc);
#else
    float s = 0;
    for (int64_t i = 0; i < nb; i++) {
        int sum = 0;
        for (int j = 0; j < 16; j++)
            sum += ((w[i].qs[j] & 0xF) - 8) * a[i].qs[j] + ((w[i].qs[j] >> 4) - 8) * a[i].qs[j + 16];
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
    float s = 0;
    for (int64_t i = 0; i < nb; i++) {
        int sum = 0;
        for (int j = 0; j < 16; j++) sum += (w[i].qs[j] & 0xF) * a[i].qs[j] + (w[i].qs[j] >> 4) * a[i].qs[j + 16];
        s += h2f(w[i].d) * a[i].d * sum + h2f(w[i].m) * a[i].s;
    }
    return s;
}

static float dot_q5_0(const block_q5_0 *w, const qb_q8a *a, int64_t nb) {
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
}

static float dot_q5_1(const block_q5_1 *w, const qb_q8a *a, int64_t nb) {
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
}

static float dot_q5_K(const block_q5_K *w, const qb_q8a *a, int64_t nb) {
    float s = 0;
    for (int64_t i = 0; i < nb; i++, a += 8) {
        float d = h2f(w[i].d), dmin = h2f(w[i].dmin);
        float t = 0, mins = 0;
        for (int j = 0; j < 4; j++) {
            const uint8_t *q = w[i].qs + 32 * j;
            uint8_t sc0, m0, sc1, m1;
            get_scale_min_k4(2 * j, w[i].scales, &sc0, &m0);
            get_scale_min_k4(2 * j + 1, w[i].scales, &sc1, &m1);
            int s0 = 0, s1 = 0;
            for (int l = 0; l < 32; l++) {
                int h0 = (w[i].qh[l] >> (2 * j)) & 1, h1 = (w[i].qh[l] >> (2 * j + 1)) & 1;
                s0 += ((q[l] & 0xF) + 16 * h0) * a[2 * j].qs[l];
                s1 += ((q[l] >> 4) + 16 * h1) * a[2 * j + 1].qs[l];
            }
            t += sc0 * a[2 * j].d * s0 + sc1 * a[2 * j + 1].d * s1;
            mins += m0 * a[2 * j].s + m1 * a[2 * j + 1].s;
        }
        s += d * t - dmin * mins;
    }
    return s;
}

static float dot_iq4_xs(const block_iq4_xs *w, const qb_q8a *a, int64_t nb) {
    float s = 0;
    for (int64_t i = 0; i < nb; i++) {
        float d = h2f(w[i].d);
        for (int ib = 0; ib < 8; ib++, a++) {
            int ls = ((w[i].scales_l[ib / 2] >> 4 * (ib % 2)) & 0xf) | (((w[i].scales_h >> 2 * ib) & 3) << 4);
            const uint8_t *qs = w[i].qs + 16 * ib;
            int sum = 0;
            for (int j = 0; j < 16; j++) sum += kvalues_iq4nl[qs[j] & 0xf] * a->qs[j] + kvalues_iq4nl[qs[j] >> 4] * a->qs[j + 16];
            s += d * (ls - 32) * a->d * sum;
        }
    }
    return s;
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
        case QB_Q4_0: v = dot_q4_0(row, x, nb); break;
        case QB_Q4_1: v = dot_q4_1(row, x, nb); break;
        case QB_Q5_0: v = dot_q5_0(row, x, nb); break;
        case QB_Q5_1: v = dot_q5_1(row, x, nb); break;
        case QB_Q8_0: v = dot_q8_0(row, x, nb); break;
        case QB_Q5_K: v = dot_q5_K(row, x, nb); break;
        case QB_IQ4_XS: v = dot_iq4_xs(row, x, nb); break;
        default: v = NAN; break; // Q4_K and Q6_K take q8k activations: qb_matvec_kquant
        }
        y[r] = v;
    }
}

// ---------------------------------------------------------------------------------------
// Q4_K and Q6_K against activations quantized per 256 values (GGML's Q8_K): a whole
// super-block accumulates in int32 with its sub-block scales applied as integers, and is
// scaled to float once. Per-32 activation scales would need a float multiply-add per 32
// values, which kept the Q6_K output head (the largest matrix of a Q4_0 file) compute-bound
// at about 12 GB/s per core.

int32_t qb_activation_block(int32_t type) { return type == QB_Q4_K || type == QB_Q6_K ? 256 : 32; }

void qb_quantize_q8k(const float *x, qb_q8k *y, int64_t n) {
    for (int64_t i = 0; i < n / 256; i++) {
        const float *v = x + 256 * i;
        float amax = 0;
        for (int j = 0; j < 256; j++) amax = fmaxf(amax, fabsf(v[j]));
        float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0;
#if defined(QB_AVX512)
        for (int j = 0; j < 256; j += 16) round16(_mm512_loadu_ps(v + j), _mm512_set1_ps(id), y[i].qs + j);
#else
        for (int j = 0; j < 256; j++) y[i].qs[j] = (int8_t)lrintf(v[j] * id);
#endif
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

// Portable versions: the AVX2 and AVX-512 ones below are tested equal to them.
static float q4_K_q8k(const block_q4_K *w, const qb_q8k *a, int64_t nb) {
    float s = 0;
    for (int64_t i = 0; i < nb; i++) {
        int32_t isum = 0, msum = 0;
        for (int j = 0; j < 8; j++) {
            uint8_t sc, m;
            get_scale_min_k4(j, w[i].scales, &sc, &m);
            const uint8_t *q = w[i].qs + 32 * (j / 2);
            int dot = 0;
            for (int l = 0; l < 32; l++) dot += ((j & 1) ? q[l] >> 4 : q[l] & 0xF) * a[i].qs[32 * j + l];
            isum += sc * dot;
            msum += m * (a[i].s16[2 * j] + a[i].s16[2 * j + 1]);
        }
        s += a[i].d * (h2f(w[i].d) * (float)isum - h2f(w[i].dmin) * (float)msum);
    }
    return s;
}

static float q6_K_q8k(const block_q6_K *w, const qb_q8k *a, int64_t nb) {
    float s = 0;
    for (int64_t i = 0; i < nb; i++) {
        int32_t isum = 0;
        for (int n = 0; n < 2; n++) {
            const uint8_t *ql = w[i].ql + 64 * n, *qh = w[i].qh + 32 * n;
            const int8_t *sc = w[i].scales + 8 * n;
            const int8_t *aq = a[i].qs + 128 * n;
            for (int k = 0; k < 4; k++) {
                int sums[2] = {0, 0};
                for (int l = 0; l < 32; l++) {
                    uint8_t lo = (k & 1) ? ql[l + 32] : ql[l];
                    int q = ((k & 2) ? (lo >> 4) : (lo & 0xF)) | (((qh[l] >> (2 * k)) & 3) << 4);
                    sums[l / 16] += (q - 32) * aq[32 * k + l];
                }
                isum += sc[2 * k] * sums[0] + sc[2 * k + 1] * sums[1];
            }
        }
        s += a[i].d * h2f(w[i].d) * (float)isum;
    }
    return s;
}

#if defined(__AVX2__)
#define PREFETCH_K 4096

// pick[c]: the 16-bit element c of each 128-bit lane, repeated across the lane.
static inline __m256i repeat16(int c) { return _mm256_set1_epi16((short)(((2 * c + 1) << 8) | (2 * c))); }

// A Q4_K block's eight 6-bit scales as bytes (GGML's packing undone on three 32-bit words),
// and sum_j min_j x (activation sum of sub-block j) as eight int32 in `msum` (each minimum
// taken twice, against the activations' sums per 16).
static inline uint64_t q4k_scales(const block_q4_K *w, const qb_q8k *a, __m256i *msum) {
    uint64_t sc, mn;
    q4k_unpack_scales(w->scales, &sc, &mn);
    __m128i mn8 = _mm_cvtsi64_si128((long long)mn);
    *msum = _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mn8, mn8)), _mm256_loadu_si256((const __m256i *)a->s16));
    return sc;
}

static float q4_K_q8k_avx2(const block_q4_K *w, const qb_q8k *a, int64_t nb) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m256i pick[8];
    for (int c = 0; c < 8; c++) pick[c] = repeat16(c);
    __m256 acc = _mm256_setzero_ps(), accm = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        for (int l = 0; l < 3; l++) _mm_prefetch((const char *)(w + i) + PREFETCH_K + 64 * l, _MM_HINT_T0);
        __m256i msum;
        uint64_t sc = q4k_scales(w + i, a + i, &msum);
        // The eight scales as 16-bit values in both lanes.
        __m256i sc16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long)sc)));
        __m256i is0 = _mm256_setzero_si256(), is1 = _mm256_setzero_si256();
        for (int j = 0; j < 4; j++) {
            __m256i q = _mm256_loadu_si256((const __m256i *)(w[i].qs + 32 * j));
            __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            __m256i p0 = _mm256_maddubs_epi16(lo, _mm256_loadu_si256((const __m256i *)(a[i].qs + 64 * j)));
            __m256i p1 = _mm256_maddubs_epi16(hi, _mm256_loadu_si256((const __m256i *)(a[i].qs + 64 * j + 32)));
            is0 = _mm256_add_epi32(is0, _mm256_madd_epi16(p0, _mm256_shuffle_epi8(sc16, pick[2 * j])));
            is1 = _mm256_add_epi32(is1, _mm256_madd_epi16(p1, _mm256_shuffle_epi8(sc16, pick[2 * j + 1])));
        }
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(is0, is1)), _mm256_set1_ps(h2f(w[i].d) * a[i].d), acc);
        accm = _mm256_fmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_set1_ps(h2f(w[i].dmin) * a[i].d), accm);
    }
    return hsum_ps(_mm256_sub_ps(acc, accm));
}

static float q6_K_q8k_avx2(const block_q6_K *w, const qb_q8k *a, int64_t nb) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), m03 = _mm256_set1_epi8(0x03), m0c = _mm256_set1_epi8(0x0C),
                  m30 = _mm256_set1_epi8(0x30);
    // Block k of a half takes scale 2k (its first 16 values, low lane) and 2k + 1 (high lane)
    // of the half's eight, which are held in both lanes.
    __m256i pick[4];
    for (int k = 0; k < 4; k++) pick[k] = _mm256_permute2x128_si256(repeat16(2 * k), repeat16(2 * k + 1), 0x20);
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        for (int l = 0; l < 4; l++) _mm_prefetch((const char *)(w + i) + PREFETCH_K + 64 * l, _MM_HINT_T0);
        __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)w[i].scales));
        // The -32 offset of every value, through the activations' sums per 16.
        __m256i corr = _mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *)a[i].s16));
        __m256i is0 = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(corr, 5)), is1 = _mm256_setzero_si256();
        for (int n = 0; n < 2; n++) {
            const uint8_t *ql = w[i].ql + 64 * n, *qh = w[i].qh + 32 * n;
            const int8_t *aq = a[i].qs + 128 * n;
            __m256i half = n ? _mm256_permute2x128_si256(sc16, sc16, 0x11) : _mm256_permute2x128_si256(sc16, sc16, 0x00);
            __m256i l0 = _mm256_loadu_si256((const __m256i *)ql), l1 = _mm256_loadu_si256((const __m256i *)(ql + 32));
            __m256i h = _mm256_loadu_si256((const __m256i *)qh);
            __m256i q[4];
            q[0] = _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_slli_epi16(_mm256_and_si256(h, m03), 4));
            q[1] = _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_slli_epi16(_mm256_and_si256(h, m0c), 2));
            q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(h, m30));
            q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4), _mm256_and_si256(_mm256_srli_epi16(h, 2), m30));
            for (int k = 0; k < 4; k++) {
                __m256i p = _mm256_maddubs_epi16(q[k], _mm256_loadu_si256((const __m256i *)(aq + 32 * k)));
                __m256i m = _mm256_madd_epi16(p, _mm256_shuffle_epi8(half, pick[k]));
                if (k & 1) is1 = _mm256_add_epi32(is1, m);
                else is0 = _mm256_add_epi32(is0, m);
            }
        }
        // Two accumulators: consecutive super-blocks' multiply-adds do not wait on each other.
        __m256 f = _mm256_cvtepi32_ps(_mm256_add_epi32(is0, is1));
        if (i & 1) acc1 = _mm256_fmadd_ps(f, _mm256_set1_ps(h2f(w[i].d) * a[i].d), acc1);
        else acc0 = _mm256_fmadd_ps(f, _mm256_set1_ps(h2f(w[i].d) * a[i].d), acc0);
    }
    return hsum_ps(_mm256_add_ps(acc0, acc1));
}
#endif

#if defined(QB_AVX512)
// The same products on 64-byte vectors. 16-bit products of quants and activations are
// scaled and summed into 32-bit lanes by one vpdpwssd (the sub-block scales spread over the
// lanes by a word permute), so each super-block is converted to float once.

// Word index vector: lanes 0..15 take word a, lanes 16..31 word b.
static inline __m512i pick_words(int a, int b) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16((short)a)), _mm256_set1_epi16((short)b), 1);
}

static float q4_K_q8k_512(const block_q4_K *w, const qb_q8k *a, int64_t nb) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const __m512i pick[4] = {pick_words(0, 2), pick_words(1, 3), pick_words(4, 6), pick_words(5, 7)};
    __m512 acc = _mm512_setzero_ps();
    __m256 accm = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        for (int l = 0; l < 3; l++) _mm_prefetch((const char *)(w + i) + PREFETCH_K + 64 * l, _MM_HINT_T0);
        __m256i msum;
        uint64_t sc = q4k_scales(w + i, a + i, &msum);
        __m512i sc16 = _mm512_castsi128_si512(_mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long)sc)));
        __m512i is[2];
        for (int k = 0; k < 2; k++) {
            __m512i q = _mm512_loadu_si512((const void *)(w[i].qs + 64 * k));
            __m512i lo = _mm512_and_si512(q, m4), hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
            __m512i p0 = _mm512_maddubs_epi16(lo, _mm512_loadu_si512((const void *)(a[i].qs_q4k + 128 * k)));
            __m512i p1 = _mm512_maddubs_epi16(hi, _mm512_loadu_si512((const void *)(a[i].qs_q4k + 128 * k + 64)));
            is[k] = _mm512_dpwssd_epi32(_mm512_madd_epi16(p0, _mm512_permutexvar_epi16(pick[2 * k], sc16)), p1,
                                        _mm512_permutexvar_epi16(pick[2 * k + 1], sc16));
        }
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(is[0], is[1])), _mm512_set1_ps(h2f(w[i].d) * a[i].d), acc);
        accm = _mm256_fmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_set1_ps(h2f(w[i].dmin) * a[i].d), accm);
    }
    return _mm512_reduce_add_ps(acc) - hsum_ps(accm);
}

// Word index vector for Q6_K scales: lane j (0..31) takes scale base + j / 8.
static inline __m512i pick_scales(int base) {
    short v[32];
    for (int j = 0; j < 32; j++) v[j] = (short)(base + j / 8);
    return _mm512_loadu_si512((const void *)v);
}

static float q6_K_q8k_512(const block_q6_K *w, const qb_q8k *a, int64_t nb) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), m3 = _mm512_set1_epi8(0x03);
    const __m512i pick[4] = {pick_scales(0), pick_scales(4), pick_scales(8), pick_scales(12)};
    __m512 acc = _mm512_setzero_ps();
    __m256 accc = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        for (int l = 0; l < 4; l++) _mm_prefetch((const char *)(w + i) + PREFETCH_K + 64 * l, _MM_HINT_T0);
        __m256i sc256 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)w[i].scales));
        __m512i sc16 = _mm512_castsi256_si512(sc256);
        // The -32 offset of every value, through the activations' sums per 16.
        __m256i corr = _mm256_madd_epi16(sc256, _mm256_loadu_si256((const __m256i *)a[i].s16));
        __m512i is[2];
        for (int n = 0; n < 2; n++) {
            __m512i ql = _mm512_loadu_si512((const void *)(w[i].ql + 64 * n));
            __m256i h = _mm256_loadu_si256((const __m256i *)(w[i].qh + 32 * n));
            // High bits of values 0..63 of the half: h (first 32), h >> 2 (next 32); of 64..127: h >> 4, h >> 6.
            __m512i hl = _mm512_inserti64x4(_mm512_castsi256_si512(h), _mm256_srli_epi16(h, 2), 1);
            __m512i hh = _mm512_srli_epi16(hl, 4);
            __m512i qlo = _mm512_or_si512(_mm512_and_si512(ql, m4), _mm512_slli_epi16(_mm512_and_si512(hl, m3), 4));
            __m512i qhi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m4),
                                          _mm512_slli_epi16(_mm512_and_si512(hh, m3), 4));
            __m512i p0 = _mm512_maddubs_epi16(qlo, _mm512_loadu_si512((const void *)(a[i].qs + 128 * n)));
            __m512i p1 = _mm512_maddubs_epi16(qhi, _mm512_loadu_si512((const void *)(a[i].qs + 128 * n + 64)));
            is[n] = _mm512_dpwssd_epi32(_mm512_madd_epi16(p0, _mm512_permutexvar_epi16(pick[2 * n], sc16)), p1,
                                        _mm512_permutexvar_epi16(pick[2 * n + 1], sc16));
        }
        float dd = h2f(w[i].d) * a[i].d;
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(is[0], is[1])), _mm512_set1_ps(dd), acc);
        accc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(corr), _mm256_set1_ps(dd), accc);
    }
    return _mm512_reduce_add_ps(acc) - 32.0f * hsum_ps(accc);
}
#endif

void qb_matvec_kquant(int32_t type, const void *w, const qb_q8k *x, float *y, int64_t r0, int64_t r1, int64_t cols) {
    int64_t nb = cols / 256, row_bytes = nb * qb_block_bytes(type);
    for (int64_t r = r0; r < r1; r++) {
        const void *row = (const uint8_t *)w + r * row_bytes;
#if defined(QB_AVX512)
        y[r] = type == QB_Q4_K ? q4_K_q8k_512(row, x, nb) : type == QB_Q6_K ? q6_K_q8k_512(row, x, nb) : NAN;
#elif defined(__AVX2__)
        y[r] = type == QB_Q4_K ? q4_K_q8k_avx2(row, x, nb) : type == QB_Q6_K ? q6_K_q8k_avx2(row, x, nb) : NAN;
#else
        y[r] = type == QB_Q4_K ? q4_K_q8k(row, x, nb) : type == QB_Q6_K ? q6_K_q8k(row, x, nb) : NAN;
#endif
    }
}

float qb_dot_kquant_portable(int32_t type, const void *w, const qb_q8k *x, int64_t cols) {
    return type == QB_Q4_K ? q4_K_q8k(w, x, cols / 256) : type == QB_Q6_K ? q6_K_q8k(w, x, cols / 256) : NAN;
}

// ---------------------------------------------------------------------------------------
// MLX affine quantization.

void qb_dequantize_row_mlx(int32_t bits, int64_t group, const uint32_t *q, const void *scales, const void *biases,
                           int32_t sdtype, float *dst, int64_t n) {
    int64_t per = 32 / bits;
    uint32_t mask = (1u << bits) - 1;
    // Group by group: the scale and bias are widened once, and the inner loop has no
    // divisions (it vectorizes).
    for (int64_t g = 0; g < n / group; g++) {
        float sc = load_scale(scales, sdtype, g), b = load_scale(biases, sdtype, g);
        const uint32_t *w = q + g * group / per;
        float *o = dst + g * group;
        for (int64_t j = 0; j < group / per; j++)
            for (int64_t k = 0; k < per; k++) o[j * per + k] = sc * (float)((w[j] >> (bits * k)) & mask) + b;
    }
}

#if defined(__AVX2__)
// MLX 4-bit bytes hold (even, odd) value pairs: the activations are regrouped the same way
// once per product (all even positions of a block, then all odd ones), not once per row.
static const qb_q8a *mlx4_shuffle(const qb_q8a *x, int64_t blocks, qb_q8a *out) {
    const __m256i evens_odds = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,
                                                0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    for (int64_t b = 0; b < blocks; b++) {
        __m256i v = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)x[b].qs), evens_odds);
        _mm256_storeu_si256((__m256i *)out[b].qs, _mm256_permute4x64_epi64(v, 0xD8));
        out[b].d = x[b].d;
        out[b].s = x[b].s;
    }
    return out;
}

static float mlx_row_avx2(int32_t bits, int64_t group, const uint8_t *row, const void *scales, const void *biases,
                          int32_t sdtype, int64_t srow, const qb_q8a *a, const float *asum, int64_t groups) {
    __m256 acc = _mm256_setzero_ps();
    float bias_acc = 0;
    int64_t blocks = group / 32;
    for (int64_t g = 0; g < groups; g++) {
        float sc = load_scale(scales, sdtype, srow + g), bi = load_scale(biases, sdtype, srow + g);
        bias_acc += (bits == 8 ? bi + 128.0f * sc : bi) * asum[g];
        for (int64_t b = 0; b < blocks; b++) {
            const qb_q8a *ab = a + g * blocks + b;
            __m256i x = _mm256_loadu_si256((const __m256i *)ab->qs);
            __m256i p;
            if (bits == 4) {
                __m128i t = _mm_loadu_si128((const __m128i *)(row + (g * blocks + b) * 16));
                __m128i lo = _mm_and_si128(t, _mm_set1_epi8(0x0F));
                __m128i hi = _mm_and_si128(_mm_srli_epi16(t, 4), _mm_set1_epi8(0x0F));
                p = dot_u8(_mm256_set_m128i(hi, lo), x);
            } else {
                __m256i w = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(row + (g * blocks + b) * 32)),
                                             _mm256_set1_epi8((char)0x80));
                p = dot_s8(w, x);
            }
            acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(sc * ab->d), acc);
        }
    }
    return hsum_ps(acc) + bias_acc;
}
// Eight consecutive scales (or biases) of dtype `dtype` for blocks [b, b + 8) of a row whose
// groups span `bpg` blocks, widened to f32 and repeated per block. Reads only the
// 8 / bpg values those blocks use.
static inline __m256 mlx_block_scales(const void *p, int32_t dtype, int64_t first, int64_t bpg) {
    int n = (int)(8 / bpg);
    __m256 v;
    if (dtype == QB_F32) {
        __m128 lo = n >= 4 ? _mm_loadu_ps((const float *)p + first) : n == 2 ? _mm_castpd_ps(_mm_load_sd((const double *)((const float *)p + first))) : _mm_load_ss((const float *)p + first);
        v = n == 8 ? _mm256_loadu_ps((const float *)p + first) : _mm256_castps128_ps256(lo);
    } else {
        const uint16_t *h = (const uint16_t *)p + first;
        __m128i raw = n == 8 ? _mm_loadu_si128((const __m128i *)h)
                    : n == 4 ? _mm_loadl_epi64((const __m128i *)h)
                    : _mm_cvtsi32_si128((int32_t)((uint32_t)h[0] | (uint32_t)h[1] << 16));
        v = dtype == QB_F16 ? _mm256_cvtph_ps(raw) : _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(raw), 16));
    }
    if (bpg == 1) return v;
    const __m256i idx = bpg == 2 ? _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3)
                      : bpg == 4 ? _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1) : _mm256_setzero_si256();
    return _mm256_permutevar8x32_ps(v, idx);
}

// 4-bit MLX rows, eight blocks per step. Bytes hold (even, odd) value pairs, so 32 bytes
// (two blocks) give the even values of both blocks in their low nibbles and the odd ones
// in their high nibbles; `xe`/`xo` hold the activations regrouped the same way, once per
// call. Each block's scale times its activation scale multiplies its four integer lanes;
// biases times the activation block sums accumulate on the side.
static float mlx4_row(const uint8_t *row, const void *scales, const void *biases, int32_t sdtype, int64_t srow,
                      int64_t bpg, const __m256i *xe, const __m256i *xo, const float *xd, const float *xs, int64_t blocks) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
    __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    __m256 accb = _mm256_setzero_ps();
    for (int64_t b = 0; b < blocks; b += 8) {
        _mm_prefetch((const char *)(row + 16 * b) + 1024, _MM_HINT_T0);
        _mm_prefetch((const char *)(row + 16 * b) + 1088, _MM_HINT_T0);
        int64_t g = srow + b / bpg;
        __m256 sd = _mm256_mul_ps(mlx_block_scales(scales, sdtype, g, bpg), _mm256_loadu_ps(xd + b));
        accb = _mm256_fmadd_ps(mlx_block_scales(biases, sdtype, g, bpg), _mm256_loadu_ps(xs + b), accb);
        for (int k = 0; k < 4; k++) {
            __m256i q = _mm256_loadu_si256((const __m256i *)(row + 16 * b + 32 * k));
            int64_t pr = b / 2 + k;
            __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(_mm256_and_si256(q, m4), xe[pr]),
                                         _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), xo[pr]));
            __m256 lanes = _mm256_permutevar8x32_ps(sd, _mm256_setr_epi32(2 * k, 2 * k, 2 * k, 2 * k, 2 * k + 1, 2 * k + 1, 2 * k + 1, 2 * k + 1));
            acc[k & 1] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(p, ones)), lanes, acc[k & 1]);
        }
    }
    return hsum_ps(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), accb));
}

#if defined(QB_AVX512)
// mlx4_row on 64-byte steps: a load holds four blocks, whose even (odd) activations are two
// consecutive entries of `xe` (`xo`); vpdpbusd sums both halves into each block's 4 lanes.
static float mlx4_row512(const uint8_t *row, const void *scales, const void *biases, int32_t sdtype, int64_t srow,
                         int64_t bpg, const __m256i *xe, const __m256i *xo, const float *xd, const float *xs, int64_t blocks) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const __m512i first = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    const __m512i second = _mm512_add_epi32(first, _mm512_set1_epi32(4));
    __m512 acc[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
    __m256 accb = _mm256_setzero_ps();
    for (int64_t b = 0; b < blocks; b += 8) {
        // 4 KiB ahead: a row is 1-4 KiB, and at 1 KiB the loads still waited on memory.
        _mm_prefetch((const char *)(row + 16 * b) + 4096, _MM_HINT_T0);
        _mm_prefetch((const char *)(row + 16 * b) + 4160, _MM_HINT_T0);
        int64_t g = srow + b / bpg;
        __m512 sd = _mm512_castps256_ps512(_mm256_mul_ps(mlx_block_scales(scales, sdtype, g, bpg), _mm256_loadu_ps(xd + b)));
        accb = _mm256_fmadd_ps(mlx_block_scales(biases, sdtype, g, bpg), _mm256_loadu_ps(xs + b), accb);
        for (int k = 0; k < 2; k++) {
            __m512i q = _mm512_loadu_si512((const void *)(row + 16 * b + 64 * k));
            int64_t pr = b / 2 + 2 * k;
            __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_and_si512(q, m4), _mm512_loadu_si512((const void *)(xe + pr)));
            p = _mm512_dpbusd_epi32(p, _mm512_and_si512(_mm512_srli_epi16(q, 4), m4), _mm512_loadu_si512((const void *)(xo + pr)));
            acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_permutexvar_ps(k ? second : first, sd), acc[k]);
        }
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(acc[0], acc[1])) + hsum_ps(accb);
}
#endif

// Activations for mlx4_row: for each pair of blocks, their even values then their odd ones.
static void mlx4_regroup(const qb_q8a *x, int64_t blocks, __m256i *xe, __m256i *xo, float *xd, float *xs) {
    const __m256i evens_odds = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,
                                                0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    for (int64_t b = 0; b < blocks; b += 2) {
        // Within each block: 16 evens then 16 odds (per 128-bit lane: 8 + 8).
        __m256i a0 = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)x[b].qs), evens_odds), 0xD8);
        __m256i a1 = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)x[b + 1].qs), evens_odds), 0xD8);
        xe[b / 2] = _mm256_permute2x128_si256(a0, a1, 0x20);
        xo[b / 2] = _mm256_permute2x128_si256(a0, a1, 0x31);
    }
    for (int64_t b = 0; b < blocks; b++) {
        xd[b] = x[b].d;
        xs[b] = x[b].s;
    }
}
#endif

// Sum over one group of q * a (integer, per 32-value block scaled by the block's d).
static float mlx_group_dot(int32_t bits, const uint8_t *qb, const qb_q8a *a, int64_t blocks) {
#if defined(__AVX2__)
    __m256 acc = _mm256_setzero_ps();
    if (bits == 4) {
        // Bytes hold (even, odd) value pairs; gather the activations the same way.
        const __m256i evens_odds = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,
                                                    0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
        for (int64_t b = 0; b < blocks; b++) {
            __m128i t = _mm_loadu_si128((const __m128i *)(qb + 16 * b));
            __m128i lo = _mm_and_si128(t, _mm_set1_epi8(0x0F));
            __m128i hi = _mm_and_si128(_mm_srli_epi16(t, 4), _mm_set1_epi8(0x0F));
            __m256i w = _mm256_set_m128i(hi, lo);
            __m256i x = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)a[b].qs), evens_odds);
            x = _mm256_permute4x64_epi64(x, 0xD8);  // (0, 2, 1, 3): all evens, then all odds
            acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot_u8(w, x)), _mm256_set1_ps(a[b].d), acc);
        }
    } else {
        for (int64_t b = 0; b < blocks; b++) {
            // q - 128 is a signed byte; the 128 * sum(a) it removes is added back by the caller.
            __m256i w = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(qb + 32 * b)), _mm256_set1_epi8((char)0x80));
            __m256i p = dot_s8(w, _mm256_loadu_si256((const __m256i *)a[b].qs));
            acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(a[b].d), acc);
        }
    }
    return hsum_ps(acc);
#else
    float s = 0;
    for (int64_t b = 0; b < blocks; b++) {
        int sum = 0;
        for (int j = 0; j < 32; j++) {
            int v = bits == 4 ? ((qb[16 * b + j / 2] >> (4 * (j & 1))) & 0xF) : (int)qb[32 * b + j] - 128;
            sum += v * a[b].qs[j];
        }
        s += a[b].d * sum;
    }
    return s;
#endif
}

void qb_matvec_mlx(int32_t bits, int64_t group, const uint32_t *w, const void *scales, const void *biases, int32_t sdtype,
                   const qb_q8a *x, float *y, int64_t r0, int64_t r1, int64_t cols) {
    int64_t groups = cols / group, words = cols * bits / 32, blocks = group / 32;
    int64_t group_bytes = group * bits / 8;
    float offset = bits == 8 ? 128.0f : 0.0f;
#if defined(__AVX2__)
    if (bits == 4 && blocks <= 8 && (cols / 32) % 8 == 0 && cols <= 65536) {
        int64_t nblk = cols / 32;
        __m256i *xe = aligned_alloc(32, (size_t)nblk * 32), *xo = aligned_alloc(32, (size_t)nblk * 32);
        float *xd = malloc((size_t)nblk * 2 * sizeof(float));
        if (xe && xo && xd) {
            mlx4_regroup(x, nblk, xe, xo, xd, xd + nblk);
            for (int64_t r = r0; r < r1; r++)
#if defined(QB_AVX512)
                y[r] = mlx4_row512((const uint8_t *)(w + r * words), scales, biases, sdtype, r * groups, blocks, xe, xo, xd, xd + nblk, nblk);
#else
                y[r] = mlx4_row((const uint8_t *)(w + r * words), scales, biases, sdtype, r * groups, blocks, xe, xo, xd, xd + nblk, nblk);
#endif
        }
        free(xe);
        free(xo);
        free(xd);
        if (xe && xo && xd) return;
    }
    if (groups <= 4096) {
        // Per-group activation sums and (4-bit) regrouped activations, once per call.
        float asum[4096];
        qb_q8a shuffled[bits == 4 ? cols / 32 : 1];
        for (int64_t g = 0; g < groups; g++) {
            float t = 0;
            for (int64_t k = 0; k < blocks; k++) t += x[g * blocks + k].s;
            asum[g] = t;
        }
        const qb_q8a *xa = bits == 4 ? mlx4_shuffle(x, cols / 32, shuffled) : x;
        for (int64_t r = r0; r < r1; r++)
            y[r] = mlx_row_avx2(bits, group, (const uint8_t *)(w + r * words), scales, biases, sdtype, r * groups, xa, asum, groups);
        return;
    }
#endif
    for (int64_t r = r0; r < r1; r++) {
        const uint8_t *row = (const uint8_t *)(w + r * words);
        float v = 0;
        for (int64_t g = 0; g < groups; g++) {
            float sc = load_scale(scales, sdtype, r * groups + g), b = load_scale(biases, sdtype, r * groups + g);
            const qb_q8a *a = x + g * blocks;
            float asum = 0;
            for (int64_t k = 0; k < blocks; k++) asum += a[k].s;
            v += sc * mlx_group_dot(bits, row + g * group_bytes, a, blocks) + (b + offset * sc) * asum;
        }
        y[r] = v;
    }
}

// ---------------------------------------------------------------------------------------
// Weight quantizers.

static void quant_q8_0(const float *x, block_q8_0 *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, x += QK) {
        float amax = 0;
        for (int j = 0; j < QK; j++) amax = fmaxf(amax, fabsf(x[j]));
        float d = amax / 127.0f, id = d ? 1.0f / d : 0.0f;
        y[i].d = f2h(d);
        for (int j = 0; j < QK; j++) y[i].qs[j] = (int8_t)roundf(x[j] * id);
    }
}

// The value of largest magnitude, sign kept (first on ties).
static float signed_max(const float *x, int n) {
    float amax = 0, max = 0;
    for (int j = 0; j < n; j++)
        if (amax < fabsf(x[j])) { amax = fabsf(x[j]); max = x[j]; }
    return max;
}

static void quant_q4_0(const float *x, block_q4_0 *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, x += QK) {
        float d = signed_max(x, QK) / -8, id = d ? 1.0f / d : 0.0f;
        y[i].d = f2h(d);
        for (int j = 0; j < 16; j++) {
            int8_t a = (int8_t)(x[j] * id + 8.5f), b = (int8_t)(x[16 + j] * id + 8.5f);
            uint8_t xi0 = a < 15 ? a : 15, xi1 = b < 15 ? b : 15;
            y[i].qs[j] = xi0 | (xi1 << 4);
        }
    }
}

static void min_max(const float *x, int n, float *mn, float *mx) {
    *mn = x[0];
    *mx = x[0];
    for (int j = 1; j < n; j++) {
        if (x[j] < *mn) *mn = x[j];
        if (x[j] > *mx) *mx = x[j];
    }
}

static void quant_q4_1(const float *x, block_q4_1 *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, x += QK) {
        float mn, mx;
        min_max(x, QK, &mn, &mx);
        float d = (mx - mn) / 15, id = d ? 1.0f / d : 0.0f;
        y[i].d = f2h(d);
        y[i].m = f2h(mn);
        for (int j = 0; j < 16; j++) {
            int8_t a = (int8_t)((x[j] - mn) * id + 0.5f), b = (int8_t)((x[16 + j] - mn) * id + 0.5f);
            uint8_t xi0 = a < 15 ? a : 15, xi1 = b < 15 ? b : 15;
            y[i].qs[j] = xi0 | (xi1 << 4);
        }
    }
}

static void quant_q5_0(const float *x, block_q5_0 *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, x += QK) {
        float d = signed_max(x, QK) / -16, id = d ? 1.0f / d : 0.0f;
        y[i].d = f2h(d);
        uint32_t qh = 0;
        for (int j = 0; j < 16; j++) {
            int8_t a = (int8_t)(x[j] * id + 16.5f), b = (int8_t)(x[16 + j] * id + 16.5f);
            uint8_t xi0 = a < 31 ? a : 31, xi1 = b < 31 ? b : 31;
            y[i].qs[j] = (xi0 & 0x0F) | ((xi1 & 0x0F) << 4);
            qh |= ((xi0 & 0x10u) >> 4) << (j + 0);
            qh |= ((xi1 & 0x10u) >> 4) << (j + 16);
        }
        memcpy(y[i].qh, &qh, 4);
    }
}

static void quant_q5_1(const float *x, block_q5_1 *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, x += QK) {
        float mn, mx;
        min_max(x, QK, &mn, &mx);
        float d = (mx - mn) / 31, id = d ? 1.0f / d : 0.0f;
        y[i].d = f2h(d);
        y[i].m = f2h(mn);
        uint32_t qh = 0;
        for (int j = 0; j < 16; j++) {
            uint8_t xi0 = (uint8_t)((x[j] - mn) * id + 0.5f), xi1 = (uint8_t)((x[16 + j] - mn) * id + 0.5f);
            y[i].qs[j] = (xi0 & 0x0F) | ((xi1 & 0x0F) << 4);
            qh |= ((xi0 & 0x10u) >> 4) << (j + 0);
            qh |= ((xi1 & 0x10u) >> 4) << (j + 16);
        }
        memcpy(y[i].qh, &qh, 4);
    }
}

static inline int nearest_int(float f) { return (int)lrintf(f); }

// Q4_K: each 32-value sub-block gets x ~= scale * q - min (q in 0..15), scale and min
// themselves stored as 6-bit multiples of two per-superblock f16 factors. The sub-block
// range is first fitted by min/max, then refined by a small search over the step that
// minimises the squared error (the idea of GGML's make_qkx2_quants).
static void fit_sub_block(const float *x, float *scale, float *min) {
    float mn, mx;
    min_max(x, 32, &mn, &mx);
    if (mn > 0) mn = 0;
    if (mx == mn) { *scale = 0; *min = -mn; return; }
    float best_err = INFINITY, best_scale = (mx - mn) / 15, best_min = -mn;
    for (int step = -4; step <= 8; step++) {
        float iscale = (15 + 0.25f * step) / (mx - mn);
        // Least-squares fit of scale and min for the levels this step assigns.
        float sum_l = 0, sum_l2 = 0, sum_x = 0, sum_xl = 0;
        for (int j = 0; j < 32; j++) {
            int l = nearest_int(iscale * (x[j] - mn));
            l = l < 0 ? 0 : (l > 15 ? 15 : l);
            sum_l += l; sum_l2 += (float)l * l; sum_x += x[j]; sum_xl += l * x[j];
        }
        float det = 32 * sum_l2 - sum_l * sum_l;
        if (det <= 0) continue;
        float sc = (32 * sum_xl - sum_x * sum_l) / det;
        float off = (sum_l2 * sum_x - sum_l * sum_xl) / det;  // x ~= sc * l + off
        if (off > 0) { off = 0; sc = sum_l2 > 0 ? sum_xl / sum_l2 : 0; }
        if (sc <= 0) continue;
        float err = 0;
        for (int j = 0; j < 32; j++) {
            int l = nearest_int((x[j] - off) / sc);
            l = l < 0 ? 0 : (l > 15 ? 15 : l);
            float e = sc * l + off - x[j];
            err += e * e;
        }
        if (err < best_err) { best_err = err; best_scale = sc; best_min = -off; }
    }
    *scale = best_scale;
    *min = best_min;
}

static void quant_q4_K(const float *x, block_q4_K *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, x += QK_K) {
        float scales[8], mins[8], max_scale = 0, max_min = 0;
        for (int j = 0; j < 8; j++) {
            fit_sub_block(x + 32 * j, &scales[j], &mins[j]);
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f, inv_min = max_min > 0 ? 63.f / max_min : 0.f;
        uint8_t ls[8], lm[8];
        for (int j = 0; j < 8; j++) {
            int a = nearest_int(inv_scale * scales[j]), b = nearest_int(inv_min * mins[j]);
            ls[j] = a > 63 ? 63 : a;
            lm[j] = b > 63 ? 63 : b;
        }
        memset(y[i].scales, 0, 12);
        for (int j = 0; j < 8; j++) {
            if (j < 4) {
                y[i].scales[j] = ls[j];
                y[i].scales[j + 4] = lm[j];
            } else {
                y[i].scales[j + 4] = (ls[j] & 0xF) | ((lm[j] & 0xF) << 4);
                y[i].scales[j - 4] |= ((ls[j] >> 4) << 6);
                y[i].scales[j - 0] |= ((lm[j] >> 4) << 6);
            }
        }
        y[i].d = f2h(max_scale / 63.f);
        y[i].dmin = f2h(max_min / 63.f);
        float d = h2f(y[i].d), dmin = h2f(y[i].dmin);
        uint8_t L[QK_K];
        for (int j = 0; j < 8; j++) {
            uint8_t sc, m;
            get_scale_min_k4(j, y[i].scales, &sc, &m);
            float dl = d * sc, ml = dmin * m;
            for (int k = 0; k < 32; k++) {
                int l = dl != 0 ? nearest_int((x[32 * j + k] + ml) / dl) : 0;
                L[32 * j + k] = (uint8_t)(l < 0 ? 0 : (l > 15 ? 15 : l));
            }
        }
        uint8_t *q = y[i].qs;
        for (int j = 0; j < QK_K; j += 64, q += 32)
            for (int l = 0; l < 32; l++) q[l] = L[j + l] | (L[j + l + 32] << 4);
    }
}

void qb_quantize_row(int32_t type, const float *x, void *dst, int64_t n) {
    int64_t bs = qb_block_size(type);
    if (bs == 0) return;
    int64_t nb = n / bs;
    switch (type) {
    case QB_F32: memcpy(dst, x, (size_t)n * 4); break;
    case QB_F16: for (int64_t i = 0; i < n; i++) ((qb_half *)dst)[i] = f2h(x[i]); break;
    case QB_Q8_0: quant_q8_0(x, dst, nb); break;
    case QB_Q4_0: quant_q4_0(x, dst, nb); break;
    case QB_Q4_1: quant_q4_1(x, dst, nb); break;
    case QB_Q5_0: quant_q5_0(x, dst, nb); break;
    case QB_Q5_1: quant_q5_1(x, dst, nb); break;
    case QB_Q4_K: quant_q4_K(x, dst, nb); break;
    default: break;
    }
}

void qb_quantize_row_mlx(int32_t bits, int64_t group, const float *x, uint32_t *q, float *scales, float *biases, int64_t n) {
    int64_t per = 32 / bits;
    float n_bins = (float)((1 << bits) - 1);
    memset(q, 0, (size_t)(n / per) * 4);
    for (int64_t g = 0; g < n / group; g++) {
        const float *v = x + g * group;
        float mn, mx;
        min_max(v, (int)group, &mn, &mx);
        // MLX anchors the grid on the edge of larger magnitude so that value is exact.
        int neg = fabsf(mn) > fabsf(mx);
        float scale = fmaxf((mx - mn) / n_bins, 1e-7f);
        scale = neg ? scale : -scale;
        float edge = neg ? mn : mx;
        float q0 = rintf(edge / scale);
        float bias = 0;
        if (q0 != 0) { scale = edge / q0; bias = edge; }
        scales[g] = scale;
        biases[g] = bias;
        for (int64_t j = 0; j < group; j++) {
            float l = rintf((v[j] - bias) / scale);
            l = l < 0 ? 0 : (l > n_bins ? n_bins : l);
            int64_t i = g * group + j;
            q[i / per] |= ((uint32_t)l) << (bits * (i % per));
        }
    }
}
