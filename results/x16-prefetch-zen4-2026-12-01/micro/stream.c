// One token's decode streams from memory, the 1B Q4_0 file's shapes: its 112 layer products
// in sixteen-row Q4_0 groups (qb_matvec_q4_0_x16), then the 128256 x 2048 Q6_K head
// (qb_matvec_kquant), by the tree's AVX-512 and AVX2 units with their own prefetches switched
// on and off (qb_set_x16_prefetch) and by a copy without the far L2 ones (build.sh), beside the engine's read probe over the same bytes and the four-row
// layout on the AVX-512 tiles. One or two threads (each product split in halves of whole
// groups, a spinning barrier after each, as the engine's pool spins); variants take turns,
// the order rotated every pass. Prints GB/s: median [min, max] over the passes.
//   ./stream PASSES THREADS
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

#define SET(p)                                                                                                        \
    void qb_##p##_matvec_kquant(int32_t, const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t);          \
    void qb_##p##_matvec_q4_0_x16(const void *, const qb_q8a *const *, const int32_t *const *, float *const *,        \
                                  int64_t, int64_t, int64_t, int64_t);                                                \
    void qb_##p##_matvec_q4_0_tiles(const void *, const qb_q8a *const *, const int32_t *const *, float *const *,      \
                                    int64_t, int64_t, int64_t, int64_t);                                              \
    void qb_##p##_repack(int32_t, int32_t, const void *, void *, int64_t, int64_t, int64_t);                          \
    uint64_t qb_##p##_read_bandwidth_kernel(const void *, int64_t);                                                   \
    int32_t qb_##p##_set_x16_prefetch(int32_t);
SET(t512) SET(l1512) SET(t2)

typedef struct {
    const char *name;
    void (*x16)(const void *, const qb_q8a *const *, const int32_t *const *, float *const *, int64_t, int64_t, int64_t,
                int64_t);
    void (*head)(int32_t, const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t);
    int32_t (*set_prefetch)(int32_t);
    int32_t prefetch;
} variant;
enum { X4TILES = -1, PROBE = -2 };
// The kernels' own prefetches on, the near L1 ones alone (a copy without the far L2 ones),
// off (the hardware prefetcher alone); avx512 and avx2 units. The head is the same code in
// each unit of a set.
static const variant V[] = {
    {"avx512, own prefetches", qb_t512_matvec_q4_0_x16, qb_t512_matvec_kquant, qb_t512_set_x16_prefetch, 1},
    {"avx512, near L1 ones only", qb_l1512_matvec_q4_0_x16, qb_l1512_matvec_kquant, qb_l1512_set_x16_prefetch, 1},
    {"avx512, none (hardware)", qb_t512_matvec_q4_0_x16, qb_t512_matvec_kquant, qb_t512_set_x16_prefetch, 0},
    {"avx2, own prefetches", qb_t2_matvec_q4_0_x16, qb_t2_matvec_kquant, qb_t2_set_x16_prefetch, 1},
    {"avx2, none (hardware)", qb_t2_matvec_q4_0_x16, qb_t2_matvec_kquant, qb_t2_set_x16_prefetch, 0},
};
enum { NV = sizeof V / sizeof V[0], NK = NV + 2, NM = 112 };

static uint8_t *w16[NM], *w4[NM], *head;
static int64_t rows[NM], cols[NM], head_bytes;
static const int64_t head_rows = 128256, head_cols = 2048, head_row_bytes = 2048 / 256 * 210;
static qb_q8a *xq;
static int32_t *offs;
static qb_q8k *xk;
static float *y;
static int threads = 1;
static _Atomic int arrived, generation, stop, cur_kind, cur_part;
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

static int kind_of(int k) { return k < NV ? k : k == NV ? X4TILES : PROBE; }

// Thread t's share of kind k's part (0: the layers, 1: the head), a barrier after each product.
static void work(int k, int part, int t) {
    const qb_q8a *xs[1] = {xq};
    const int32_t *os[1] = {offs};
    float *ys[1] = {y};
    const int kind = kind_of(k);
    if (part == 0) {
        for (int i = 0; i < NM; i++) {
            const int64_t groups = rows[i] / 16, a = t * groups / threads, b = (t + 1) * groups / threads;
            const int64_t group_bytes = cols[i] / 32 * 18 * 16;
            if (kind == PROBE) sink ^= qb_t512_read_bandwidth_kernel(w16[i] + a * group_bytes, (b - a) * group_bytes / 256 * 256);
            else if (kind == X4TILES) qb_t512_matvec_q4_0_tiles(w4[i], xs, os, ys, 1, 4 * a, 4 * b, cols[i]);
            else V[kind].x16(w16[i], xs, os, ys, 1, a, b, cols[i]);
            barrier();
        }
    } else {
        const int64_t a = t * head_rows / threads, b = (t + 1) * head_rows / threads;
        if (kind == PROBE) sink ^= qb_t512_read_bandwidth_kernel(head + a * head_row_bytes, (b - a) * head_row_bytes / 256 * 256);
        else V[kind == X4TILES ? 0 : kind].head(QB_Q6_K, head, xk, y, a, b, head_cols);
        barrier();
    }
}

static void *worker(void *unused) {
    (void)unused;
    for (;;) {
        barrier();
        if (atomic_load(&stop)) return NULL;
        work(atomic_load(&cur_kind), atomic_load(&cur_part), 1);
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

static int cmp(const void *a, const void *b) {
    const double x = *(const double *)a, z = *(const double *)b;
    return (x > z) - (x < z);
}

int main(int argc, char **argv) {
    const int passes = argc > 1 ? atoi(argv[1]) : 9;
    threads = argc > 2 ? atoi(argv[2]) : 1;
    if (passes < 1 || passes > 1000 || threads < 1 || threads > 2) return 2;
    static const int64_t layer[7][2] = {{2048, 2048}, {512, 2048}, {512, 2048}, {2048, 2048},
                                        {8192, 2048}, {8192, 2048}, {2048, 8192}};  // q k v o gate up down
    int64_t layer_bytes = 0;
    for (int i = 0; i < NM; i++) {
        rows[i] = layer[i % 7][0];
        cols[i] = layer[i % 7][1];
        const int64_t blocks = rows[i] * cols[i] / 32, bytes = blocks * 18;
        uint8_t *plain = pages(bytes);
        fill(plain, bytes);
        for (int64_t b = 0; b < blocks; b++) memcpy(plain + 18 * b, &(uint16_t){0x2E66}, 2);  // scales 0.1
        w16[i] = pages(bytes);
        w4[i] = pages(bytes);
        qb_t512_repack(QB_Q4_0, 16, plain, w16[i], 0, rows[i] / 16, cols[i]);
        qb_t512_repack(QB_Q4_0, 4, plain, w4[i], 0, rows[i] / 4, cols[i]);
        free(plain);
        layer_bytes += bytes;
    }
    head_bytes = head_rows * head_row_bytes;
    head = pages(head_bytes);
    fill(head, head_bytes);
    for (int64_t b = 0; b < head_bytes / 210; b++) memcpy(head + 210 * b + 208, &(uint16_t){0x2E66}, 2);
    xq = aligned_alloc(64, 256 * sizeof(qb_q8a));
    offs = calloc(256, sizeof(int32_t));
    xk = aligned_alloc(64, 8 * sizeof(qb_q8k));
    y = aligned_alloc(64, (size_t)head_rows * sizeof(float));
    memset(xk, 0, 8 * sizeof(qb_q8k));
    for (int b = 0; b < 256; b++) {
        xq[b].d = 0.01f;
        xq[b].s = 0;
        for (int k = 0; k < 32; k++) xq[b].qs[k] = (int8_t)(k - 16);
        offs[b] = 128;
    }
    pthread_t th;
    if (threads == 2) pthread_create(&th, NULL, worker, NULL);
    double *gl = calloc((size_t)NK * passes, sizeof(double)), *gh = calloc((size_t)NK * passes, sizeof(double));
    for (int p = -1; p < passes; p++) {  // pass -1: untimed, the pages' first touch
        for (int j = 0; j < NK; j++) {
            const int k = (j + (p < 0 ? 0 : p)) % NK;
            if (k < NV) V[k].set_prefetch(V[k].prefetch);
            atomic_store(&cur_kind, k);
            atomic_store(&cur_part, 0);
            const double t0 = now();
            barrier();
            work(k, 0, 0);
            const double t1 = now();
            atomic_store(&cur_part, 1);
            barrier();
            work(k, 1, 0);
            const double t2 = now();
            if (p >= 0) {
                gl[k * passes + p] = (double)layer_bytes / (t1 - t0) / 1e9;
                gh[k * passes + p] = (double)head_bytes / (t2 - t1) / 1e9;
            }
        }
    }
    if (threads == 2) {
        atomic_store(&stop, 1);
        barrier();
        pthread_join(th, NULL);
    }
    printf("%d thread(s): layers %.0f MB (Q4_0, sixteen-row groups), head %.0f MB (Q6_K), %d passes; GB/s median [min, max]\n",
           threads, (double)layer_bytes / 1e6, (double)head_bytes / 1e6, passes);
    for (int k = 0; k < NK; k++) {
        qsort(gl + k * passes, (size_t)passes, sizeof(double), cmp);
        qsort(gh + k * passes, (size_t)passes, sizeof(double), cmp);
        const int kind = kind_of(k);
        const char *name = kind == PROBE ? "read probe, same bytes" : kind == X4TILES ? "avx512 four-row tiles" : V[kind].name;
        printf("  %-28s layers %6.2f [%6.2f, %6.2f]   head %6.2f [%6.2f, %6.2f]\n", name, gl[k * passes + passes / 2],
               gl[k * passes], gl[k * passes + passes - 1], gh[k * passes + passes / 2], gh[k * passes],
               gh[k * passes + passes - 1]);
    }
    return (int)(sink & 0);
}
