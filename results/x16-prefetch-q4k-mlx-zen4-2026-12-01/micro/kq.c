// Where a one-thread 1B Q4_K_M token's weight reads go: the layers' products as Q4_K in
// sixteen-row groups (qb_matvec_q4_k_x16, the 1B's 112 shapes) and the tied output head as
// Q6_K rows (qb_matvec_kquant, 128256 x 2048), each from memory, by the AVX-512 and AVX2
// units with their prefetches on and off, beside the engine's read probe over the same bytes.
// One or two threads (each product split in halves, a spinning barrier after each, as the
// engine's pool spins); the variants take turns, the order rotated every pass. Prints GB/s:
// median [min, max] over the passes. With `hot`, instead the first 256 rows of a layer
// matrix and of the head (295 and 430 KB, in L2), over and over.
//   ./kq PASSES THREADS [hot]
#include <immintrin.h>
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
    void qb_##p##_matvec_q4_k_x16(const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t);           \
    void qb_##p##_matvec_kquant(int32_t, const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t);    \
    int32_t qb_##p##_set_stream_prefetch(int32_t);                                                            \
    void qb_##p##_quantize_q8k(const float *, qb_q8k *, int64_t);                                             \
    uint64_t qb_##p##_read_bandwidth_kernel(const void *, int64_t);
SET(t512) SET(t256)

enum { Q4K, Q6K, PROBE };
static const struct {
    const char *name;
    int what, set, pf;  // set: 0 avx512, 1 avx2
} V[] = {
    {"Q4_K x16 layers, avx512, pf off", Q4K, 0, 0}, {"Q4_K x16 layers, avx512, pf on", Q4K, 0, 1},
    {"Q4_K x16 layers, avx2, pf off", Q4K, 1, 0},   {"Q4_K x16 layers, avx2, pf on", Q4K, 1, 1},
    {"layers' read probe", Q4K, 0, -1},            {"Q6_K head, avx512", Q6K, 0, 1},
    {"Q6_K head, avx2", Q6K, 1, 1},                {"head's read probe", Q6K, 0, -1},
};
enum { NV = sizeof V / sizeof V[0], NM = 112, COLS = 2048, HEAD = 128256 };

static uint8_t *w[NM], *head;
static int64_t rows[NM], cols[NM];
static qb_q8k *xk;
static float *y;
static int threads = 1, hot = 0;
enum { HOT_ROWS = 256, HOT_REPS = 256 };
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

// Thread t's share of matrix m (r rows, c columns) by variant k: Q4_K by sixteen-row groups,
// Q6_K by rows.
static void share(int k, const uint8_t *m, int64_t r, int64_t c, int t) {
    const int64_t units = V[k].what == Q4K ? r / 16 : r, a = t * units / threads, b = (t + 1) * units / threads;
    const int64_t ub = V[k].what == Q4K ? c / 256 * 2304 : c / 256 * 210;
    if (V[k].pf < 0) sink ^= qb_t512_read_bandwidth_kernel(m + a * ub, (b - a) * ub / 256 * 256);
    else if (V[k].what == Q4K) (V[k].set ? qb_t256_matvec_q4_k_x16 : qb_t512_matvec_q4_k_x16)(m, xk, y, a, b, c);
    else (V[k].set ? qb_t256_matvec_kquant : qb_t512_matvec_kquant)(QB_Q6_K, m, xk, y, a, b, c);
}

static void work(int k, int t) {
    if (hot) {
        for (int r = 0; r < HOT_REPS; r++) share(k, V[k].what == Q6K ? head : w[0], HOT_ROWS, COLS, t);
        barrier();
        return;
    }
    if (V[k].what == Q6K) {
        share(k, head, HEAD, COLS, t);
        barrier();
        return;
    }
    for (int i = 0; i < NM; i++) {
        share(k, w[i], rows[i], cols[i], t);
        barrier();
    }
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
static void fill(uint8_t *p, int64_t n) {
    for (int64_t i = 0; i < n; i++) p[i] = (uint8_t)((seed = seed * 1664525u + 1013904223u) >> 24);
}

// Random bytes with every f16 scale 0.1 (the group-blocks' 16 d and 16 dmin; a Q6_K block's
// d), so no byte makes an infinity or a NaN.
static uint8_t *matrix(int what, int64_t r, int64_t c) {
    const int64_t units = what == Q4K ? r / 16 * (c / 256) : r * (c / 256), ub = what == Q4K ? 2304 : 210;
    uint8_t *p = pages(units * ub);
    fill(p, units * ub);
    for (int64_t u = 0; u < units; u++) {
        if (what == Q4K)
            for (int h = 0; h < 32; h++) memcpy(p + u * ub + 2 * h, &(uint16_t){0x2E66}, 2);
        else memcpy(p + u * ub + 208, &(uint16_t){0x2E66}, 2);
    }
    return p;
}

static int cmp(const void *a, const void *b) {
    const double x = *(const double *)a, z = *(const double *)b;
    return (x > z) - (x < z);
}

int main(int argc, char **argv) {
    const int passes = argc > 1 ? atoi(argv[1]) : 9;
    threads = argc > 2 ? atoi(argv[2]) : 1;
    hot = argc > 3 && !strcmp(argv[3], "hot");
    if (passes < 1 || passes > 1000 || threads < 1 || threads > 2) return 2;
    static const int64_t layer[7][2] = {{2048, 2048}, {512, 2048}, {512, 2048}, {2048, 2048},
                                        {8192, 2048}, {8192, 2048}, {2048, 8192}};  // q k v o gate up down
    int64_t layer_bytes = 0;
    for (int i = 0; i < NM; i++) {
        rows[i] = layer[i % 7][0];
        cols[i] = layer[i % 7][1];
        w[i] = matrix(Q4K, rows[i], cols[i]);
        layer_bytes += rows[i] / 16 * (cols[i] / 256) * 2304;
    }
    head = matrix(Q6K, HEAD, COLS);
    int64_t head_bytes = (int64_t)HEAD * (COLS / 256) * 210;
    if (hot) {
        layer_bytes = (int64_t)HOT_REPS * HOT_ROWS / 16 * (COLS / 256) * 2304;
        head_bytes = (int64_t)HOT_REPS * HOT_ROWS * (COLS / 256) * 210;
    }
    float *x = malloc(8192 * sizeof(float));
    for (int i = 0; i < 8192; i++) x[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    xk = aligned_alloc(64, 32 * sizeof(qb_q8k));
    qb_t512_quantize_q8k(x, xk, 8192);
    y = aligned_alloc(64, HEAD * sizeof(float));
    pthread_t th;
    if (threads == 2) pthread_create(&th, NULL, worker, NULL);
    double *g = calloc((size_t)NV * passes, sizeof(double));
    for (int p = -1; p < passes; p++) {  // pass -1: untimed, the pages' first touch
        for (int j = 0; j < NV; j++) {
            const int k = (j + (p < 0 ? 0 : p)) % NV;
            if (V[k].pf >= 0) (V[k].set ? qb_t256_set_stream_prefetch : qb_t512_set_stream_prefetch)(V[k].pf);
            atomic_store(&cur_kind, k);
            const double t0 = now();
            barrier();
            work(k, 0);
            const double t1 = now();
            if (p >= 0) g[k * passes + p] = (double)(V[k].what == Q4K ? layer_bytes : head_bytes) / (t1 - t0) / 1e9;
        }
    }
    if (threads == 2) {
        atomic_store(&stop, 1);
        barrier();
        pthread_join(th, NULL);
    }
    printf("%d thread(s), %s: Q4_K layers %.0f MB, Q6_K head %.0f MB a pass, %d passes; GB/s median [min, max]\n", threads,
           hot ? "hot (256 rows, in L2)" : "from memory", (double)layer_bytes / 1e6, (double)head_bytes / 1e6, passes);
    for (int k = 0; k < NV; k++) {
        qsort(g + k * passes, (size_t)passes, sizeof(double), cmp);
        printf("  %-32s %7.2f [%7.2f, %7.2f]\n", V[k].name, g[k * passes + passes / 2], g[k * passes],
               g[k * passes + passes - 1]);
    }
    return (int)(sink & 0);
}
