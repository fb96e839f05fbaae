// Q4_K in sixteen-row groups on the AVX2 unit: the kernel before (b256) and after (t256) this
// change taking turns in every pass, one thread; a 2048-column matrix of ROWS rows (hot: 256
// rows, in L2; else 65536 rows, 302 MB, from memory). Prints each's GB/s median and the median
// of the after/before ratio in the same pass, and whether the outputs are bitwise equal.
//   ./q4k PASSES [hot]
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "qb_activation.h"
#include "qb_formats.h"
#define SET(p)                                                                                                \
    void qb_##p##_matvec_q4_k_x16(const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t);           \
    void qb_##p##_repack(int32_t, int32_t, const void *, void *, int64_t, int64_t, int64_t);                  \
    int32_t qb_##p##_set_stream_prefetch(int32_t);                                                            \
    void qb_##p##_quantize_q8k(const float *, qb_q8k *, int64_t);
SET(t256) SET(b256)
enum { COLS = 2048, BLOCKS = COLS / 256 };
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, z = *(const double *)b; return (x > z) - (x < z); }
int main(int argc, char **argv) {
    const int passes = argc > 1 ? atoi(argv[1]) : 21, hot = argc > 2 && !strcmp(argv[2], "hot");
    const int64_t rows = hot ? 256 : 65536, reps = hot ? 256 : 1, bytes = rows * BLOCKS * 144;
    uint8_t *plain = aligned_alloc(1 << 21, (size_t)bytes), *x16 = aligned_alloc(1 << 21, (size_t)bytes);
    madvise(x16, (size_t)bytes, MADV_HUGEPAGE);
    uint32_t seed = 1;
    for (int64_t i = 0; i < bytes; i++) plain[i] = (uint8_t)((seed = seed * 1664525u + 1013904223u) >> 24);
    for (int64_t b = 0; b < rows * BLOCKS; b++) memcpy(plain + b * 144, (uint16_t[]){0x2E66, 0x2A66}, 4);
    qb_t256_repack(QB_Q4_K, 16, plain, x16, 0, rows / 16, COLS);
    float x[COLS];
    for (int i = 0; i < COLS; i++) x[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    qb_q8k xk[BLOCKS];
    qb_t256_quantize_q8k(x, xk, COLS);
    float *ya = malloc(rows * 4), *yb = malloc(rows * 4);
    qb_t256_set_stream_prefetch(0);
    qb_b256_set_stream_prefetch(0);
    qb_t256_matvec_q4_k_x16(x16, xk, ya, 0, rows / 16, COLS);
    qb_b256_matvec_q4_k_x16(x16, xk, yb, 0, rows / 16, COLS);
    printf("outputs bitwise equal: %s\n", memcmp(ya, yb, rows * 4) ? "NO" : "yes");
    double *ga = calloc(passes, 8), *gb = calloc(passes, 8), *ra = calloc(passes, 8);
    for (int p = 0; p < passes; p++) {
        for (int v = 0; v < 2; v++) {
            const int after = (v + p) % 2;
            const double t0 = now();
            for (int r = 0; r < reps; r++) {
                if (after) qb_t256_matvec_q4_k_x16(x16, xk, ya, 0, rows / 16, COLS);
                else qb_b256_matvec_q4_k_x16(x16, xk, yb, 0, rows / 16, COLS);
            }
            const double gbs = (double)bytes * reps / (now() - t0) / 1e9;
            if (after) ga[p] = gbs; else gb[p] = gbs;
        }
        ra[p] = ga[p] / gb[p];
    }
    qsort(ga, passes, 8, cmp); qsort(gb, passes, 8, cmp); qsort(ra, passes, 8, cmp);
    printf("%s, 1 thread, %d passes: before %.2f GB/s [%.2f, %.2f], after %.2f [%.2f, %.2f], after/before same pass %.3f [%.3f, %.3f]\n",
           hot ? "hot (in L2)" : "from memory", passes, gb[passes / 2], gb[0], gb[passes - 1], ga[passes / 2], ga[0], ga[passes - 1],
           ra[passes / 2], ra[0], ra[passes - 1]);
    return 0;
}
