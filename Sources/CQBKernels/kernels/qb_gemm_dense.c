// Prefill products of dense f32/f16/bf16 weights (qb_gemm.h). Register tiles of R weight rows
// by 6 activation rows: each step of one vector's columns loads (and for 16-bit weights
// widens) the R weight rows once and the 6 activation rows once and makes 6R multiply-adds
// into 6R accumulators, summed across lanes once at the end. R is 4 on AVX-512 (24
// accumulators of its 32 registers) and 2 on AVX2 (12 of 16; 4 x 6 would spill). Weights are
// read in their stored width (no packing pass), a block of rows at a time against every
// activation row, so they come from L1/L2 while the activations stream from L2/L3. Without
// this kernel each tile went to OpenBLAS sgemm (16-bit weights widened first): 16-bit weights
// on AVX2 25-26% of the fp32 peak against 72-82% with it, 55-61% on AVX-512 (64 tokens,
// 8192 x 2048, Emerald Rapids; results/kernel-benchmarks-2026-11-30-emr/); f32 weights 16%
// (AVX-512) and 33% (AVX2) against 57% and 68% with it (results/f32-tiles-2026-11-30/).
#include "qb_gemm.h"
#include "qb_scalar.h"

// Weight rows per tile (the vectors and widening are qb_scalar.h's).
#if defined(__AVX512F__)
enum { DENSE_ROWS = 4 };
#else
enum { DENSE_ROWS = 2 };
#endif

#if defined(__AVX2__)
static inline __attribute__((always_inline)) void tile_n(const int32_t type, const void *w, int64_t cols, const float *x,
                                                         float *y, int64_t ystride, const int n) {
    wide_vec acc[DENSE_ROWS][6];
    for (int i = 0; i < DENSE_ROWS; i++)
        for (int j = 0; j < n; j++) acc[i][j] = wide_zero();
    for (int64_t k = 0; k < cols; k += WIDE_LANES) {
        wide_vec a[DENSE_ROWS];
        for (int i = 0; i < DENSE_ROWS; i++) a[i] = dense_vec(type, w, i * cols + k);
        for (int j = 0; j < n; j++) {
            wide_vec b = wide_load(x + j * cols + k);
            for (int i = 0; i < DENSE_ROWS; i++) acc[i][j] = wide_fma(a[i], b, acc[i][j]);
        }
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < DENSE_ROWS; i++) y[j * ystride + i] = wide_sum(acc[i][j]);
}

// One function per weight type and activation-row count (1..6), each with both constant.
typedef void (*tile_fn)(const void *, int64_t, const float *, float *, int64_t);
#define QB_DENSE_TILES(T, name)                                                                                      \
    static void name##_1(const void *w, int64_t c, const float *x, float *y, int64_t s) { tile_n(T, w, c, x, y, s, 1); } \
    static void name##_2(const void *w, int64_t c, const float *x, float *y, int64_t s) { tile_n(T, w, c, x, y, s, 2); } \
    static void name##_3(const void *w, int64_t c, const float *x, float *y, int64_t s) { tile_n(T, w, c, x, y, s, 3); } \
    static void name##_4(const void *w, int64_t c, const float *x, float *y, int64_t s) { tile_n(T, w, c, x, y, s, 4); } \
    static void name##_5(const void *w, int64_t c, const float *x, float *y, int64_t s) { tile_n(T, w, c, x, y, s, 5); } \
    static void name##_6(const void *w, int64_t c, const float *x, float *y, int64_t s) { tile_n(T, w, c, x, y, s, 6); } \
    static const tile_fn name[6] = {name##_1, name##_2, name##_3, name##_4, name##_5, name##_6};
QB_DENSE_TILES(QB_F32, tiles_f32)
QB_DENSE_TILES(QB_F16, tiles_f16)
QB_DENSE_TILES(QB_BF16, tiles_bf16)
#undef QB_DENSE_TILES
#endif

int qb_gemm_dense(int32_t type, const void *w, int64_t r0, int64_t r1, int64_t cols, const float *x, int64_t count,
                  float *y, int64_t ystride) {
#if defined(__AVX2__)
    // Callers pass rows in multiples of 4 and columns of 16 on every set (Linear.matmul).
    if ((type != QB_F32 && type != QB_F16 && type != QB_BF16) || cols % 16 != 0 || (r1 - r0) % 4 != 0) return 0;
    const tile_fn *tails = type == QB_F32 ? tiles_f32 : type == QB_F16 ? tiles_f16 : tiles_bf16;
    const int64_t size = type == QB_F32 ? 4 : 2;
    // Rows in blocks whose weights (64 KiB per 1024 columns) stay in L2 while every
    // activation row passes.
    const int64_t block = 64 / size;
    for (int64_t b0 = r0; b0 < r1; b0 += block) {
        int64_t b1 = b0 + block < r1 ? b0 + block : r1;
        for (int64_t c = 0; c < count; c += 6) {
            int64_t n = count - c < 6 ? count - c : 6;
            for (int64_t r = b0; r < b1; r += DENSE_ROWS)
                tails[n - 1]((const char *)w + r * cols * size, cols, x + c * cols, y + c * ystride + r, ystride);
        }
    }
    return 1;
#else
    (void)type, (void)w, (void)r0, (void)r1, (void)cols, (void)x, (void)count, (void)y, (void)ystride;
    return 0;
#endif
}
