// Prefill products of f16/bf16 weights (qb_gemm.h). Register tiles of R weight rows by 6
// activation rows: each step of one vector's columns loads and widens the R weight rows once
// and the 6 activation rows once and makes 6R multiply-adds into 6R accumulators, summed
// across lanes once at the end. R is 4 on AVX-512 (24 accumulators of its 32 registers) and
// 2 on AVX2 (12 of 16; 4 x 6 would spill). Weights are read in their stored width (no
// packing pass), a block of rows at a time against every activation row, so they come from
// L1/L2 while the activations stream from L2/L3. Without this kernel (on AVX2 before
// 2026-11-30) each tile was widened for OpenBLAS sgemm: 25-26% of the fp32 peak, against
// 72-82% with it, 55-61% on AVX-512 (64 tokens, 8192 x 2048, Emerald Rapids;
// results/kernel-benchmarks-2026-11-30-emr/).
#include "qb_gemm.h"
#include "qb_scalar.h"
#include <string.h>

// Weight rows per tile (the vectors and widening are qb_scalar.h's).
#if defined(__AVX512F__)
enum { HALF_ROWS = 4 };
#else
enum { HALF_ROWS = 2 };
#endif

#if defined(__AVX2__)
static inline __attribute__((always_inline)) void tile_n(int32_t type, const uint16_t *w, int64_t cols, const float *x,
                                                         float *y, int64_t ystride, const int n) {
    half_vec acc[HALF_ROWS][6];
    for (int i = 0; i < HALF_ROWS; i++)
        for (int j = 0; j < n; j++) acc[i][j] = half_zero();
    for (int64_t k = 0; k < cols; k += HALF_LANES) {
        half_vec a[HALF_ROWS];
        for (int i = 0; i < HALF_ROWS; i++) a[i] = widen16(type, w + i * cols + k);
        for (int j = 0; j < n; j++) {
            half_vec b = half_load(x + j * cols + k);
            for (int i = 0; i < HALF_ROWS; i++) acc[i][j] = half_fma(a[i], b, acc[i][j]);
        }
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < HALF_ROWS; i++) y[j * ystride + i] = half_sum(acc[i][j]);
}

static void tile_6(int32_t t, const uint16_t *w, int64_t c, const float *x, float *y, int64_t s) { tile_n(t, w, c, x, y, s, 6); }
static void tile_5(int32_t t, const uint16_t *w, int64_t c, const float *x, float *y, int64_t s) { tile_n(t, w, c, x, y, s, 5); }
static void tile_4(int32_t t, const uint16_t *w, int64_t c, const float *x, float *y, int64_t s) { tile_n(t, w, c, x, y, s, 4); }
static void tile_3(int32_t t, const uint16_t *w, int64_t c, const float *x, float *y, int64_t s) { tile_n(t, w, c, x, y, s, 3); }
static void tile_2(int32_t t, const uint16_t *w, int64_t c, const float *x, float *y, int64_t s) { tile_n(t, w, c, x, y, s, 2); }
static void tile_1(int32_t t, const uint16_t *w, int64_t c, const float *x, float *y, int64_t s) { tile_n(t, w, c, x, y, s, 1); }
#endif

int qb_gemm_half(int32_t type, const uint16_t *w, int64_t r0, int64_t r1, int64_t cols, const float *x, int64_t count,
                 float *y, int64_t ystride) {
#if defined(__AVX2__)
    // Callers pass rows in multiples of 4 and columns of 16 on every set (Linear.matmul).
    if ((type != QB_F16 && type != QB_BF16) || cols % 16 != 0 || (r1 - r0) % 4 != 0) return 0;
    typedef void (*tile_fn)(int32_t, const uint16_t *, int64_t, const float *, float *, int64_t);
    static const tile_fn tails[6] = {tile_1, tile_2, tile_3, tile_4, tile_5, tile_6};
    // Rows in blocks whose 16-bit weights stay in L2 while every activation row passes.
    int64_t block = 32;
    for (int64_t b0 = r0; b0 < r1; b0 += block) {
        int64_t b1 = b0 + block < r1 ? b0 + block : r1;
        for (int64_t c = 0; c < count; c += 6) {
            int64_t n = count - c < 6 ? count - c : 6;
            for (int64_t r = b0; r < b1; r += HALF_ROWS)
                tails[n - 1](type, w + r * cols, cols, x + c * cols, y + c * ystride + r, ystride);
        }
    }
    return 1;
#else
    (void)type, (void)w, (void)r0, (void)r1, (void)cols, (void)x, (void)count, (void)y, (void)ystride;
    return 0;
#endif
}
