// Prefill products of f16/bf16 weights (qb_gemm.h). Register tiles of 4 weight rows by 6
// activation rows: each 16-column step loads and widens the 4 weight rows once and the 6
// activation rows once and makes 24 multiply-adds into 24 accumulators, summed across lanes
// once at the end. Weights are read in their stored width (no packing pass), a block of
// rows at a time against every activation row, so they come from L1/L2 while the
// activations stream from L2/L3.
#include "qb_gemm.h"
#include <string.h>
#if defined(__AVX512F__)
#include <immintrin.h>

static inline __m512 widen16(int32_t type, const uint16_t *p) {
    __m256i h = _mm256_loadu_si256((const __m256i *)p);
    if (type == QB_F16) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

static inline __attribute__((always_inline)) void tile4xn(int32_t type, const uint16_t *w, int64_t cols, const float *x,
                                                          float *y, int64_t ystride, const int n) {
    __m512 acc[4][6];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < n; j++) acc[i][j] = _mm512_setzero_ps();
    for (int64_t k = 0; k < cols; k += 16) {
        __m512 a[4];
        for (int i = 0; i < 4; i++) a[i] = widen16(type, w + i * cols + k);
        for (int j = 0; j < n; j++) {
            __m512 b = _mm512_loadu_ps(x + j * cols + k);
            for (int i = 0; i < 4; i++) acc[i][j] = _mm512_fmadd_ps(a[i], b, acc[i][j]);
        }
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < 4; i++) y[j * ystride + i] = _mm512_reduce_add_ps(acc[i][j]);
}

static void tile4x6(int32_t t, const uint16_t *w, int64_t c, const float *x, float *y, int64_t s) { tile4xn(t, w, c, x, y, s, 6); }
static void tile4x5(int32_t t, const uint16_t *w, int64_t c, const float *x, float *y, int64_t s) { tile4xn(t, w, c, x, y, s, 5); }
static void tile4x4(int32_t t, const uint16_t *w, int64_t c, const float *x, float *y, int64_t s) { tile4xn(t, w, c, x, y, s, 4); }
static void tile4x3(int32_t t, const uint16_t *w, int64_t c, const float *x, float *y, int64_t s) { tile4xn(t, w, c, x, y, s, 3); }
static void tile4x2(int32_t t, const uint16_t *w, int64_t c, const float *x, float *y, int64_t s) { tile4xn(t, w, c, x, y, s, 2); }
static void tile4x1(int32_t t, const uint16_t *w, int64_t c, const float *x, float *y, int64_t s) { tile4xn(t, w, c, x, y, s, 1); }
#endif

int qb_gemm_half(int32_t type, const uint16_t *w, int64_t r0, int64_t r1, int64_t cols, const float *x, int64_t count,
                 float *y, int64_t ystride) {
#if defined(__AVX512F__)
    if ((type != QB_F16 && type != QB_BF16) || cols % 16 != 0 || (r1 - r0) % 4 != 0) return 0;
    typedef void (*tile_fn)(int32_t, const uint16_t *, int64_t, const float *, float *, int64_t);
    static const tile_fn tails[6] = {tile4x1, tile4x2, tile4x3, tile4x4, tile4x5, tile4x6};
    // Rows in blocks whose 16-bit weights stay in L2 while every activation row passes.
    int64_t block = 32;
    for (int64_t b0 = r0; b0 < r1; b0 += block) {
        int64_t b1 = b0 + block < r1 ? b0 + block : r1;
        for (int64_t c = 0; c < count; c += 6) {
            int64_t n = count - c < 6 ? count - c : 6;
            for (int64_t r = b0; r < b1; r += 4)
                tails[n - 1](type, w + r * cols, cols, x + c * cols, y + c * ystride + r, ystride);
        }
    }
    return 1;
#else
    (void)type, (void)w, (void)r0, (void)r1, (void)cols, (void)x, (void)count, (void)y, (void)ystride;
    return 0;
#endif
}
