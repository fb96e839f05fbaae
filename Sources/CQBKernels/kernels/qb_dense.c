// Dense f32/f16/bf16 kernels. Plain C that clang vectorizes for each kernel set's
// instruction set (qb_isa_unit.h): reassociation is allowed only inside these loops, so the
// reduction is split across vector lanes in an order fixed by the loop itself.
#include "qb_dense.h"
#include "qb_scalar.h"
#include <string.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

float qb_dot_f32(const float *a, const float *b, int64_t n) { return dot_f32(a, b, n); }

void qb_axpy_f32(float a, const float *x, float *y, int64_t n) { axpy_f32(a, x, y, n); }

void qb_matvec_f32(const float *w, const float *x, float *y, int64_t r0, int64_t r1, int64_t cols) {
    for (int64_t r = r0; r < r1; r++) y[r] = qb_dot_f32(w + r * cols, x, cols);
}

#if defined(__AVX2__)
// One row of 16-bit weights against f32 activations, four chains of the set's widest
// vectors, each line fetched 4 KiB ahead into L1 (and QB_L2_AHEAD into L2): decode reads
// these rows once per token from memory, and the compiler's loop (no prefetch) left a sixth
// of the bandwidth unused on AVX-512 and half of it on AVX2 (an 8192 x 2048 matrix from
// memory at 47% (f16) and 52% (bf16) of the read bandwidth on the Emerald Rapids,
// results/kernel-benchmarks-2026-11-30-emr/).
static inline float dot_half_row(const uint16_t *row, const float *x, int64_t cols, int bf16) {
    int64_t i = 0;
    float s;
#if defined(__AVX512F__)
    __m512 a[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    for (; i + 64 <= cols; i += 64) {
        _mm_prefetch((const char *)(row + i) + 4096, _MM_HINT_T0);
        _mm_prefetch((const char *)(row + i) + 4160, _MM_HINT_T0);
        qb_prefetch_l2(row + i, 2);
        for (int k = 0; k < 4; k++) {
            __m256i h = _mm256_loadu_si256((const __m256i *)(row + i + 16 * k));
            __m512 w = bf16 ? _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)) : _mm512_cvtph_ps(h);
            a[k] = _mm512_fmadd_ps(w, _mm512_loadu_ps(x + i + 16 * k), a[k]);
        }
    }
    s = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a[0], a[1]), _mm512_add_ps(a[2], a[3])));
#else
    __m256 a[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (; i + 32 <= cols; i += 32) {  // one 64-byte line of weights
        _mm_prefetch((const char *)(row + i) + 4096, _MM_HINT_T0);
        qb_prefetch_l2(row + i, 1);
        for (int k = 0; k < 4; k++) {
            __m128i h = _mm_loadu_si128((const __m128i *)(row + i + 8 * k));
            __m256 w = bf16 ? _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)) : _mm256_cvtph_ps(h);
            a[k] = _mm256_fmadd_ps(w, _mm256_loadu_ps(x + i + 8 * k), a[k]);
        }
    }
    s = hsum_ps(_mm256_add_ps(_mm256_add_ps(a[0], a[1]), _mm256_add_ps(a[2], a[3])));
#endif
    for (; i < cols; i++) s += (bf16 ? bf2f(row[i]) : h2f(row[i])) * x[i];
    return s;
}
#endif

void qb_matvec_f16(const uint16_t *w, const float *x, float *y, int64_t r0, int64_t r1, int64_t cols) {
    for (int64_t r = r0; r < r1; r++) {
#if defined(__AVX2__)
        y[r] = dot_half_row(w + r * cols, x, cols, 0);
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
        y[r] = dot_half_row(w + r * cols, x, cols, 1);
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
