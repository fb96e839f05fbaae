// Dense f32/f16/bf16 kernels. The decode rows are written with the set's widest vectors
// (qb_scalar.h) on AVX2 and AVX-512; the rest, and the portable set's rows, are plain C that
// clang vectorizes for each kernel set's instruction set (qb_isa_unit.h): reassociation is
// allowed only inside these loops, so the reduction is split across vector lanes in an
// order fixed by the loop itself.
#include "qb_dense.h"
#include "qb_scalar.h"
#include <string.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

float qb_dot_f32(const float *a, const float *b, int64_t n) { return dot_f32(a, b, n); }

void qb_axpy_f32(float a, const float *x, float *y, int64_t n) { axpy_f32(a, x, y, n); }

#if defined(__AVX2__)
// One row of dense weights (`type` a constant: QB_F32, QB_F16, QB_BF16) against f32
// activations, four chains of the set's widest vectors, each line fetched 4 KiB ahead into
// L1 (and QB_L2_AHEAD into L2): decode reads these rows once per token from memory, and the
// compiler's loop (no prefetch) left a sixth of the bandwidth unused on AVX-512 and half of
// it on AVX2 (an 8192 x 2048 matrix from memory at 47% (f16) and 52% (bf16) of the read
// bandwidth on the Emerald Rapids, results/kernel-benchmarks-2026-11-30-emr/; f32 at 68-75%,
// results/f32-tiles-2026-11-30/).
static inline __attribute__((always_inline)) float dot_dense_row(const int32_t type, const void *row, const float *x,
                                                                 int64_t cols) {
    const int64_t size = type == QB_F32 ? 4 : 2;
    enum { STEP = 4 * WIDE_LANES };  // 64 or 32 values
    const int lines = (int)(STEP * size / 64);
    wide_vec a[4] = {wide_zero(), wide_zero(), wide_zero(), wide_zero()};
    int64_t i = 0;
    for (; i + STEP <= cols; i += STEP) {
        const char *at = (const char *)row + i * size;
        for (int l = 0; l < lines; l++) _mm_prefetch(at + 4096 + 64 * l, _MM_HINT_T0);
        qb_prefetch_l2(at, lines);
        for (int k = 0; k < 4; k++)
            a[k] = wide_fma(dense_vec(type, row, i + WIDE_LANES * k), wide_load(x + i + WIDE_LANES * k), a[k]);
    }
    float s = wide_sum(wide_add(wide_add(a[0], a[1]), wide_add(a[2], a[3])));
    const uint16_t *half = (const uint16_t *)row;
    for (; i < cols; i++) {
        const float v = type == QB_F32 ? ((const float *)row)[i] : type == QB_BF16 ? bf2f(half[i]) : h2f(half[i]);
        s += v * x[i];
    }
    return s;
}
#endif

void qb_matvec_f32(const float *w, const float *x, float *y, int64_t r0, int64_t r1, int64_t cols) {
    for (int64_t r = r0; r < r1; r++) {
#if defined(__AVX2__)
        y[r] = dot_dense_row(QB_F32, w + r * cols, x, cols);
#else
        y[r] = qb_dot_f32(w + r * cols, x, cols);
#endif
    }
}

void qb_matvec_f16(const uint16_t *w, const float *x, float *y, int64_t r0, int64_t r1, int64_t cols) {
    for (int64_t r = r0; r < r1; r++) {
#if defined(__AVX2__)
        y[r] = dot_dense_row(QB_F16, w + r * cols, x, cols);
#else
        QB_REASSOC
        const _Float16 *row = (const _Float16 *)(w + r * cols);
        float s = 0;
        QB_UNROLL
        for (int64_t i = 0; i < cols; i++) s += (float)row[i] * x[i];
        y[r] = s;
#endif
    }
}

void qb_matvec_bf16(const uint16_t *w, const float *x, float *y, int64_t r0, int64_t r1, int64_t cols) {
    for (int64_t r = r0; r < r1; r++) {
#if defined(__AVX2__)
        y[r] = dot_dense_row(QB_BF16, w + r * cols, x, cols);
#else
        QB_REASSOC
        const uint16_t *row = w + r * cols;
        float s = 0;
        QB_UNROLL
        for (int64_t i = 0; i < cols; i++) s += bf2f(row[i]) * x[i];
        y[r] = s;
#endif
    }
}

void qb_f16_to_f32(const uint16_t *src, float *dst, int64_t n) {
    const _Float16 *h = (const _Float16 *)src;
    for (int64_t i = 0; i < n; i++) dst[i] = (float)h[i];
}

void qb_bf16_to_f32(const uint16_t *src, float *dst, int64_t n) {
    for (int64_t i = 0; i < n; i++) dst[i] = bf2f(src[i]);
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
