// Weight quantizers: GGML's reference algorithms for Q8_0/Q4_0/Q4_1/Q5_0/Q5_1, Q4_K by
// per-sub-block fitting, and MLX's affine quantizer (quantize-at-load and the writers).
#include "qb_quantizer.h"
#include "qb_blocks.h"
#include <math.h>
#include <string.h>

// Rounding must match GGML's and MLX's own code: a product, then a sum, each rounded (no
// fused multiply-add). The fast paths use explicit FMA intrinsics.
#pragma clang fp contract(off)

int64_t qb_first_beyond(const float *x, int64_t n, float limit) {
    // Blocks of 256 with a branch-free OR inside (vectorizes); the index is searched only
    // in a block that holds a bad value, so a clean row costs one pass. `!(a <= limit)`
    // is true for NaN too.
    for (int64_t b = 0; b < n; b += 256) {
        int64_t e = b + 256 < n ? b + 256 : n;
        int bad = 0;
        for (int64_t i = b; i < e; i++) bad |= !(fabsf(x[i]) <= limit);
        if (bad)
            for (int64_t i = b; i < e; i++)
                if (!(fabsf(x[i]) <= limit)) return i;
    }
    return -1;
}

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
        q4k_pack_scales(ls, lm, y[i].scales);
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
