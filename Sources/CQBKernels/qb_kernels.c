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
