// The tied output head of the 1B (Q6_K, 128256 x 2048) against one token, from memory: as
// plain rows (qb_matvec_kquant) by the AVX2 unit, and in sixteen-row groups
// (qb_matvec_q6_k_x16, repacked by qb_repack from the same blocks) by the AVX2 unit with its
// prefetches off and on and by the AVX-512 unit (prefetches off), beside the engine's read
// probe over the same bytes. One or two threads (the rows split in halves, a spinning
// barrier after), the variants taking turns, the order rotated every pass. Prints GB/s:
// median [min, max] over the passes, the median over the passes of each variant's rate over
// the plain AVX2 rows' in the same pass, and how far the sixteen-row outputs are from the
// plain rows'. With `hot`, the first 256 rows over and over (430 KB, in L2).
//   ./q6k PASSES THREADS [hot]
#include <immintrin.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "qb_activation.h"
#include "qb_formats.h"

#define SET(p)                                                                                                \
    void qb_##p##_matvec_q6_k_x16(const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t);           \
    void qb_##p##_matvec_kquant(int32_t, const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t);    \
    void qb_##p##_repack(int32_t, int32_t, const void *, void *, int64_t, int64_t, int64_t);                  \
    int32_t qb_##p##_set_stream_prefetch(int32_t);                                                            \
    void qb_##p##_quantize_q8k(const float *, qb_q8k *, int64_t);                                             \
    uint64_t qb_##p##_read_bandwidth_kernel(const void *, int64_t);
SET(t512) SET(t256)

enum { ROWS_256, X16_OFF, X16_ON, X16_512, PROBE };
static const char *names[] = {"Q6_K rows, avx2", "Q6_K x16, avx2, pf off", "Q6_K x16, avx2, pf on", "Q6_K x16, avx512, pf off",
                              "read probe"};
enum { NV = 5, COLS = 2048, HEAD = 128256, HOT_ROWS = 256, HOT_REPS = 256, BLOCKS = COLS / 256 };

static uint8_t *plain, *x16;
static qb_q8k *xk;
static float *y;
static int threads = 1, hot = 0;
static _Atomic int arrived, generation, stop, cur_kind;
static _Thread_local uint64_t sink;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void barrier(void) {
    if (threads == 1) return;
    const int g = atomic_load(&generation);
    if (atomic_fetch_add(&arrived, 1) == threads - 1) {
        atomic_store(&arrived, 0);
        atomic_fetch_add(&generation, 1);
    } else {
        while (atomic_load(&generation) == g) _mm_pause();
    }
}

// Thread t's share of the first r rows by variant k (sixteen-row groups for x16).
static void share(int k, int64_t r, int t) {
    const int64_t groups = r / 16, a = t * groups / threads, b = (t + 1) * groups / threads, gb = 16 * BLOCKS * 210;
    switch (k) {
    case ROWS_256: qb_t256_matvec_kquant(QB_Q6_K, plain, xk, y, 16 * a, 16 * b, COLS); break;
    case PROBE: sink ^= qb_t512_read_bandwidth_kernel(plain + a * gb, (b - a) * gb / 256 * 256); break;
    case X16_512: qb_t512_matvec_q6_k_x16(x16, xk, y, a, b, COLS); break;
    default: qb_t256_matvec_q6_k_x16(x16, xk, y, a, b, COLS); break;
    }
}

static void work(int k, int t) {
    for (int r = 0; r < (hot ? HOT_REPS : 1); r++) share(k, hot ? HOT_ROWS : HEAD, t);
    barrier();
}

static void *worker(void *unused) {
    (void)unused;
    for (;;) {
        barrier();
        if (atomic_load(&stop)) return NULL;
        work(atomic_load(&cur_kind), 1);
    }
}

static uint8_t *pages(int64_t bytes) {
    const int64_t huge = 2 << 20, n = (bytes + huge - 1) / huge * huge;
    uint8_t *p = aligned_alloc((size_t)huge, (size_t)n);
    if (!p) exit(3);
    madvise(p, (size_t)n, MADV_HUGEPAGE);
    memset(p, 0, (size_t)n);
    return p;
}

static uint32_t seed = 1;

static int cmp(const void *a, const void *b) {
    const double x = *(const double *)a, z = *(const double *)b;
    return (x > z) - (x < z);
}

int main(int argc, char **argv) {
    const int passes = argc > 1 ? atoi(argv[1]) : 9;
    threads = argc > 2 ? atoi(argv[2]) : 1;
    hot = argc > 3 && !strcmp(argv[3], "hot");
    if (passes < 1 || passes > 1000 || threads < 1 || threads > 2) return 2;
    const int64_t bytes = (int64_t)HEAD * BLOCKS * 210;
    // Random blocks, every d 0.1 (no infinity or NaN), repacked from the same bytes.
    plain = pages(bytes);
    x16 = pages(bytes);
    for (int64_t i = 0; i < bytes; i++) plain[i] = (uint8_t)((seed = seed * 1664525u + 1013904223u) >> 24);
    for (int64_t b = 0; b < (int64_t)HEAD * BLOCKS; b++) memcpy(plain + b * 210 + 208, &(uint16_t){0x2E66}, 2);
    qb_t256_repack(QB_Q6_K, 16, plain, x16, 0, HEAD / 16, COLS);
    float *x = malloc(COLS * sizeof(float));
    for (int i = 0; i < COLS; i++) x[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    xk = aligned_alloc(64, BLOCKS * sizeof(qb_q8k));
    qb_t512_quantize_q8k(x, xk, COLS);
    y = aligned_alloc(64, HEAD * sizeof(float));
    float *ref = aligned_alloc(64, HEAD * sizeof(float));
    qb_t256_matvec_kquant(QB_Q6_K, plain, xk, ref, 0, HEAD, COLS);
    qb_t256_matvec_q6_k_x16(x16, xk, y, 0, HEAD / 16, COLS);
    double num = 0, den = 0;
    for (int r = 0; r < HEAD; r++) num += (double)(y[r] - ref[r]) * (y[r] - ref[r]), den += (double)ref[r] * ref[r];
    printf("x16 avx2 against rows avx2: relative error %.3g\n", sqrt(num / den));
    const double moved = (double)(hot ? (int64_t)HOT_REPS * HOT_ROWS * BLOCKS * 210 : bytes);
    pthread_t th;
    if (threads == 2) pthread_create(&th, NULL, worker, NULL);
    double *g = calloc((size_t)NV * passes, sizeof(double));
    for (int p = -1; p < passes; p++) {  // pass -1: untimed, the pages' first touch
        for (int j = 0; j < NV; j++) {
            const int k = (j + (p < 0 ? 0 : p)) % NV;
            qb_t512_set_stream_prefetch(0);
            qb_t256_set_stream_prefetch(k == X16_ON || k == ROWS_256);
            atomic_store(&cur_kind, k);
            const double t0 = now();
            barrier();
            work(k, 0);
            const double t1 = now();
            if (p >= 0) g[k * passes + p] = moved / (t1 - t0) / 1e9;
        }
    }
    if (threads == 2) {
        atomic_store(&stop, 1);
        barrier();
        pthread_join(th, NULL);
    }
    printf("%d thread(s), %s: %.0f MB a pass, %d passes; GB/s median [min, max]\n", threads,
           hot ? "hot (256 rows, in L2)" : "from memory", moved / 1e6, passes);
    // Each variant's rate over the plain AVX2 rows' in the same pass (milliseconds apart,
    // so the bandwidth's drift mostly cancels): the median of those ratios.
    double *ratio = calloc((size_t)NV * passes, sizeof(double));
    for (int k = 0; k < NV; k++)
        for (int p = 0; p < passes; p++) ratio[k * passes + p] = g[k * passes + p] / g[ROWS_256 * passes + p];
    for (int k = 0; k < NV; k++) {
        qsort(g + k * passes, (size_t)passes, sizeof(double), cmp);
        qsort(ratio + k * passes, (size_t)passes, sizeof(double), cmp);
        printf("  %-28s %7.2f [%7.2f, %7.2f]   x rows avx2, same pass: %.3f\n", names[k], g[k * passes + passes / 2], g[k * passes],
               g[k * passes + passes - 1], ratio[k * passes + passes / 2]);
    }
    return (int)(sink & 0);
}
