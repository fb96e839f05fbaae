// The sixteen-row Q4_K decode kernel (Q6_K's with Q6=1): BEFORE's AVX2 unit (b256), AFTER's
// (t256) and BEFORE's AVX-512 unit (p512) taking turns in every pass, their prefetches on (as on
// Intel). A 2048-column matrix: hot, 256 rows, in L2, 256 times a pass; mem1 and mem2, 262144
// rows (1.2 GB for Q4_K), from memory on one thread or split over two. With ROWS the batched
// kernel over that many activation rows. Prints each's GB/s median [min, max] and the medians
// of the ratios in the same pass, and whether AFTER's outputs are bitwise BEFORE's.
//   ./q4k PASSES hot|mem1|mem2 [ROWS]
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "qb_activation.h"
#include "qb_formats.h"
#define SET(p)                                                                                                \
    void qb_##p##_matvec_q4_k_x16(const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t);  \
    void qb_##p##_matvec_q4_k_x16_rows(const void *, const qb_q8k *const *, float *const *, int64_t, int64_t, int64_t, int64_t);           \
    void qb_##p##_repack(int32_t, int32_t, const void *, void *, int64_t, int64_t, int64_t);                  \
    int32_t qb_##p##_set_stream_prefetch(int32_t);                                                            \
    void qb_##p##_quantize_q8k(const float *, qb_q8k *, int64_t);
SET(t256) SET(b256) SET(p512)
#define SET6(p) void qb_##p##_matvec_q6_k_x16(const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t);
SET6(t256) SET6(b256) SET6(p512)
enum { COLS = 2048, BLOCKS = COLS / 256 };
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, z = *(const double *)b; return (x > z) - (x < z); }
typedef void (*kfn)(const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t);
static int NR = 1;
static qb_q8k XR[8][BLOCKS]; static float *YR[8];
#define ROWSFN(p) static void r_##p(const void *w, const qb_q8k *x, float *y, int64_t a, int64_t b, int64_t c) { \
    (void)x; (void)y; const qb_q8k *xs[8]; for (int k = 0; k < 8; k++) xs[k] = XR[k]; qb_##p##_matvec_q4_k_x16_rows(w, xs, YR, NR, a, b, c); }
ROWSFN(b256) ROWSFN(t256) ROWSFN(p512)
static kfn K[3] = {qb_b256_matvec_q4_k_x16, qb_t256_matvec_q4_k_x16, qb_p512_matvec_q4_k_x16};
static const char *NM[3] = {"avx2 before", "avx2 after", "avx512 before"};
static uint8_t *W; static qb_q8k XK[BLOCKS]; static float *Y; static int64_t ROWS; static int REPS;
typedef struct { int k, t, nt; } job;
static void *run(void *p) {
    job *j = p; int64_t g = ROWS / 16, a = g * j->t / j->nt, b = g * (j->t + 1) / j->nt;
    for (int r = 0; r < REPS; r++) K[j->k](W, XK, Y, a, b, COLS);
    return 0;
}
int main(int argc, char **argv) {
    const int passes = argc > 1 ? atoi(argv[1]) : 21;
    const char *mode = argc > 2 ? argv[2] : "mem1";
    const int hot = !strncmp(mode, "hot", 3), nt = !strcmp(mode, "mem2") ? 2 : 1;
    if (argc > 3) { NR = atoi(argv[3]); K[0] = r_b256; K[1] = r_t256; K[2] = r_p512; }
    ROWS = hot ? 256 : 262144; REPS = hot ? 256 : 1;
    const int q6 = getenv("Q6") != 0;
    const int64_t bsz = q6 ? 210 : 144, bytes = ROWS * BLOCKS * bsz;
    if (q6) { K[0] = qb_b256_matvec_q6_k_x16; K[1] = qb_t256_matvec_q6_k_x16; K[2] = qb_p512_matvec_q6_k_x16; }
    uint8_t *plain = aligned_alloc(1 << 21, (size_t)bytes); W = aligned_alloc(1 << 21, (size_t)bytes);
    madvise(W, (size_t)bytes, MADV_HUGEPAGE);
    uint32_t seed = 1;
    for (int64_t i = 0; i < bytes; i++) plain[i] = (uint8_t)((seed = seed * 1664525u + 1013904223u) >> 24);
    for (int64_t b = 0; b < ROWS * BLOCKS; b++) { if (q6) memcpy(plain + b * 210 + 208, (uint16_t[]){0x2E66}, 2); else memcpy(plain + b * 144, (uint16_t[]){0x2E66, 0x2A66}, 4); }
    qb_b256_repack(q6 ? QB_Q6_K : QB_Q4_K, 16, plain, W, 0, ROWS / 16, COLS);
    float x[COLS];
    for (int i = 0; i < COLS; i++) x[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    qb_b256_quantize_q8k(x, XK, COLS);
    for (int k = 0; k < 8; k++) { for (int i = 0; i < COLS; i++) x[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f; qb_b256_quantize_q8k(x, XR[k], COLS); YR[k] = malloc(ROWS * 4); }
    Y = malloc(ROWS * 4); float *y0 = malloc(ROWS * 4);
    if (NR > 1) { r_b256(W, 0, 0, 0, ROWS / 16, COLS); memcpy(y0, YR[NR - 1], ROWS * 4); r_t256(W, 0, 0, 0, ROWS / 16, COLS);
        printf("rows %d: after vs before, last row, bitwise equal: %s\n", NR, memcmp(y0, YR[NR - 1], ROWS * 4) ? "NO" : "yes");
        qb_b256_matvec_q4_k_x16(W, XR[NR - 1], y0, 0, ROWS / 16, COLS);
        printf("rows %d: after batched vs before alone, last row, bitwise equal: %s\n", NR, memcmp(y0, YR[NR - 1], ROWS * 4) ? "NO" : "yes"); }
    qb_t256_set_stream_prefetch(1); qb_b256_set_stream_prefetch(1); qb_p512_set_stream_prefetch(1);
    if (NR == 1) {
        K[0](W, XK, y0, 0, ROWS / 16, COLS); K[1](W, XK, Y, 0, ROWS / 16, COLS);
        printf("after vs before bitwise equal: %s\n", memcmp(Y, y0, ROWS * 4) ? "NO" : "yes");
    }
    double *g[3]; for (int k = 0; k < 3; k++) g[k] = calloc(passes, 8);
    double *ra = calloc(passes, 8), *rb = calloc(passes, 8);
    for (int p = 0; p < passes; p++) {
        for (int v = 0; v < 3; v++) {
            const int k = (v + p) % 3;
            const double t0 = now();
            pthread_t th[2]; job jb[2];
            for (int t = 0; t < nt; t++) { jb[t] = (job){k, t, nt}; pthread_create(&th[t], 0, run, &jb[t]); }
            for (int t = 0; t < nt; t++) pthread_join(th[t], 0);
            g[k][p] = (double)bytes * REPS * NR / (now() - t0) / 1e9;
        }
        ra[p] = g[1][p] / g[0][p]; rb[p] = g[2][p] / g[0][p];
    }
    for (int k = 0; k < 3; k++) qsort(g[k], passes, 8, cmp);
    qsort(ra, passes, 8, cmp); qsort(rb, passes, 8, cmp);
    printf("%s, %d passes:", mode, passes);
    for (int k = 0; k < 3; k++) printf(" %s %.2f [%.2f, %.2f];", NM[k], g[k][passes / 2], g[k][0], g[k][passes - 1]);
    printf(" after/before %.3f [%.3f, %.3f], avx512/avx2 before %.3f [%.3f, %.3f]\n", ra[passes / 2], ra[0], ra[passes - 1], rb[passes / 2], rb[0], rb[passes - 1]);
    return 0;
}
