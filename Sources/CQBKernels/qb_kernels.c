// Dense f32/f16/bf16 kernels. Plain C that clang vectorizes for the native CPU
// (-march=native): reassociation is allowed only inside these loops, so the
// reduction is split across vector lanes in an order fixed by the loop itself.
#include "qb_kernels.h"
#include <string.h>

// QB_REASSOC opens a block whose float reductions may be reassociated (vectorized).
#define QB_REASSOC _Pragma("clang fp reassociate(on)")
#define QB_UNROLL _Pragma("clang loop vectorize(enable) interleave_count(4)")

static inline float qb_bf16(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float qb_dot_f32(const float *a, const float *b, int64_t n) {
    QB_REASSOC
    float s = 0;
    QB_UNROLL
    for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

void qb_axpy_f32(float a, const float *x, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] += a * x[i];
}

void qb_matvec_f32(const float *w, const float *x, float *y, int64_t r0, int64_t r1, int64_t cols) {
    for (int64_t r = r0; r < r1; r++) y[r] = qb_dot_f32(w + r * cols, x, cols);
}

void qb_matvec_f16(const uint16_t *w, const float *x, float *y, int64_t r0, int64_t r1, int64_t cols) {
    for (int64_t r = r0; r < r1; r++) {
        QB_REASSOC
        const _Float16 *row = (const _Float16 *)(w + r * cols);
        float s = 0;
        QB_UNROLL
        for (int64_t i = 0; i < cols; i++) s += (float)row[i] * x[i];
        y[r] = s;
    }
}

void qb_matvec_bf16(const uint16_t *w, const float *x, float *y, int64_t r0, int64_t r1, int64_t cols) {
    for (int64_t r = r0; r < r1; r++) {
        QB_REASSOC
        const uint16_t *row = w + r * cols;
        float s = 0;
        QB_UNROLL
        for (int64_t i = 0; i < cols; i++) s += qb_bf16(row[i]) * x[i];
        y[r] = s;
    }
}

void qb_f16_to_f32(const uint16_t *src, float *dst, int64_t n) {
    const _Float16 *h = (const _Float16 *)src;
    for (int64_t i = 0; i < n; i++) dst[i] = (float)h[i];
}

void qb_bf16_to_f32(const uint16_t *src, float *dst, int64_t n) {
    for (int64_t i = 0; i < n; i++) dst[i] = qb_bf16(src[i]);
}

void qb_f32_to_f16(const float *src, uint16_t *dst, int64_t n) {
    _Float16 *h = (_Float16 *)dst;
    for (int64_t i = 0; i < n; i++) h[i] = (_Float16)src[i];
}

void qb_f32_to_bf16(const float *src, uint16_t *dst, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &src[i], 4);
        if ((u & 0x7fffffffu) > 0x7f800000u) { dst[i] = (uint16_t)((u >> 16) | 0x40); continue; } // quiet NaN
        u += 0x7fffu + ((u >> 16) & 1u);
        dst[i] = (uint16_t)(u >> 16);
    }
}

#include <math.h>

void qb_rmsnorm(const float *x, const float *weight, float *out, int64_t n, float eps) {
    float ss = 0;
    {
        QB_REASSOC
        QB_UNROLL
        for (int64_t i = 0; i < n; i++) ss += x[i] * x[i];
    }
    float inv = 1.0f / sqrtf(ss / (float)n + eps);
    for (int64_t i = 0; i < n; i++) out[i] = weight[i] * (x[i] * inv);
}

void qb_softmax(float *x, int64_t n) {
    if (n <= 0) return;
    float m = x[0];
    for (int64_t i = 1; i < n; i++) m = x[i] > m ? x[i] : m;
    float s = 0;
    for (int64_t i = 0; i < n; i++) { x[i] = expf(x[i] - m); s += x[i]; }
    float inv = 1.0f / s;
    for (int64_t i = 0; i < n; i++) x[i] *= inv;
}

void qb_swiglu(float *gate, const float *up, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        float g = gate[i];
        gate[i] = g / (1.0f + expf(-g)) * up[i];
    }
}

void qb_attention_head(const float *q, const float *k, const float *v, int64_t n, int64_t hd,
                       float scale, float *scores, float *out) {
    for (int64_t j = 0; j < n; j++) scores[j] = qb_dot_f32(q, k + j * hd, hd) * scale;
    qb_softmax(scores, n);
    for (int64_t d = 0; d < hd; d++) out[d] = 0;
    for (int64_t j = 0; j < n; j++) qb_axpy_f32(scores[j], v + j * hd, out, hd);
}

// ---------------------------------------------------------------------------------------
// Narrow KV caches. Keys are widened while dotted with the query; values while
// accumulated: each cached value is read once per step, so the cache's bytes, not the
// conversion, bound the cost at depth.

#include "qb_quant.h"

void qb_store_kv_f16(const float *src, uint16_t *dst, int64_t hd) { qb_f32_to_f16(src, dst, hd); }

void qb_store_kv_q8_0(const float *src, void *dst, int64_t hd) { qb_quantize_row(QB_Q8_0, src, dst, hd); }

static float dot_f16_f32(const uint16_t *a, const float *b, int64_t n) {
    QB_REASSOC
    const _Float16 *h = (const _Float16 *)a;
    float s = 0;
    QB_UNROLL
    for (int64_t i = 0; i < n; i++) s += (float)h[i] * b[i];
    return s;
}

static void axpy_f16(float a, const uint16_t *x, float *y, int64_t n) {
    const _Float16 *h = (const _Float16 *)x;
    for (int64_t i = 0; i < n; i++) y[i] += a * (float)h[i];
}

void qb_attention_head_f16(const float *q, const uint16_t *k, const uint16_t *v, int64_t n, int64_t hd,
                           float scale, float *scores, float *out) {
    for (int64_t j = 0; j < n; j++) scores[j] = dot_f16_f32(k + j * hd, q, hd) * scale;
    qb_softmax(scores, n);
    for (int64_t d = 0; d < hd; d++) out[d] = 0;
    for (int64_t j = 0; j < n; j++) axpy_f16(scores[j], v + j * hd, out, hd);
}

// A Q8_0 block: f16 scale then 32 int8 (34 bytes).
static float dot_q8_0_f32(const uint8_t *blocks, const float *b, int64_t n) {
    float s = 0;
    for (int64_t i = 0; i < n / 32; i++, blocks += 34) {
        _Float16 d;
        memcpy(&d, blocks, 2);
        const int8_t *qs = (const int8_t *)(blocks + 2);
        float t = 0;
        {
            QB_REASSOC
            QB_UNROLL
            for (int j = 0; j < 32; j++) t += (float)qs[j] * b[i * 32 + j];
        }
        s += (float)d * t;
    }
    return s;
}

static void axpy_q8_0(float a, const uint8_t *blocks, float *y, int64_t n) {
    for (int64_t i = 0; i < n / 32; i++, blocks += 34) {
        _Float16 d;
        memcpy(&d, blocks, 2);
        const int8_t *qs = (const int8_t *)(blocks + 2);
        float ad = a * (float)d;
        for (int j = 0; j < 32; j++) y[i * 32 + j] += ad * (float)qs[j];
    }
}

void qb_attention_head_q8_0(const float *q, const void *k, const void *v, int64_t n, int64_t hd,
                            float scale, float *scores, float *out) {
    int64_t row = hd / 32 * 34;
    for (int64_t j = 0; j < n; j++) scores[j] = dot_q8_0_f32((const uint8_t *)k + j * row, q, hd) * scale;
    qb_softmax(scores, n);
    for (int64_t d = 0; d < hd; d++) out[d] = 0;
    for (int64_t j = 0; j < n; j++) axpy_q8_0(scores[j], (const uint8_t *)v + j * row, out, hd);
}
