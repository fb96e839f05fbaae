// Block-quantized weight formats: block sizes and dequantization. Block layouts and
// formulas are GGML's and MLX's (so files interoperate); the scalar code here is the
// readable definition the fast kernels (qb_dot_*.c, qb_gemm.c, qb_repack.c) are tested against.
#include "qb_formats.h"
#include "qb_blocks.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

// Dequantization must round like GGML's and MLX's own: a product, then a sum, each
// rounded (no fused multiply-add). The fast dot products use explicit FMA intrinsics.
#pragma clang fp contract(off)

int64_t qb_block_size(int32_t type) {
    switch (type) {
    case QB_F32: case QB_F16: case QB_BF16: return 1;
    case QB_Q4_0: case QB_Q4_1: case QB_Q5_0: case QB_Q5_1: case QB_Q8_0: case QB_IQ4_NL: return QK;
    case QB_Q2_K: case QB_Q3_K: case QB_Q4_K: case QB_Q5_K: case QB_Q6_K: case QB_IQ4_XS: return QK_K;
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
    case QB_Q2_K: return sizeof(block_q2_K);
    case QB_Q3_K: return sizeof(block_q3_K);
    case QB_Q4_K: return sizeof(block_q4_K);
    case QB_Q5_K: return sizeof(block_q5_K);
    case QB_Q6_K: return sizeof(block_q6_K);
    case QB_IQ4_NL: return sizeof(block_iq4_nl);
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

// Q2_K: w = d (scale & 15) q - dmin (scale >> 4) per sub-block of 16, q two bits.
static void dequant_q2_K(const block_q2_K *x, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        float d = h2f(x[i].d), dmin = h2f(x[i].dmin);
        for (int v = 0; v < QK_K; v++) {
            uint8_t sc = x[i].scales[v / 16];
            float dl = d * (float)(sc & 0xF), ml = dmin * (float)(sc >> 4);
            *y++ = dl * (float)k23_low_bits(x[i].qs, v) - ml;
        }
    }
}

// Q3_K: w = d (scale - 32) (q - 4) per sub-block of 16, q three bits (q3k_value).
static void dequant_q3_K(const block_q3_K *x, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        float d = h2f(x[i].d);
        int8_t sc[16];
        q3k_scales(x[i].scales, sc);
        for (int v = 0; v < QK_K; v++) *y++ = d * (float)sc[v / 16] * (float)(q3k_value(x + i, v) - 4);
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

// IQ4_NL: each nibble indexes kvalues_iq4nl, one f16 scale per 32 values.
static void dequant_iq4_nl(const block_iq4_nl *x, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, y += QK) {
        float d = h2f(x[i].d);
        for (int j = 0; j < 16; j++) {
            y[j + 0] = d * kvalues_iq4nl[x[i].qs[j] & 0xf];
            y[j + 16] = d * kvalues_iq4nl[x[i].qs[j] >> 4];
        }
    }
}

static void dequant_iq4_xs(const block_iq4_xs *x, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *qs = x[i].qs;
        float d = h2f(x[i].d);
        for (int ib = 0; ib < QK_K / 32; ib++) {
            float dl = d * (float)iq4xs_scale(x + i, ib);
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
    case QB_Q2_K: dequant_q2_K(src, dst, nb); break;
    case QB_Q3_K: dequant_q3_K(src, dst, nb); break;
    case QB_Q4_K: dequant_q4_K(src, dst, nb); break;
    case QB_Q5_K: dequant_q5_K(src, dst, nb); break;
    case QB_Q6_K: dequant_q6_K(src, dst, nb); break;
    case QB_IQ4_NL: dequant_iq4_nl(src, dst, nb); break;
    case QB_IQ4_XS: dequant_iq4_xs(src, dst, nb); break;
    }
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
