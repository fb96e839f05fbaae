// One token's layer products with the 1B file's shapes as Q8_0 in four-row groups (112
// products, qb_matvec_repacked, one activation row) from memory on the AVX-512 set: with the
// stream's prefetches off (the engine's setting on AMD), with its own (into L1 2 KiB ahead and
// into L2 12 KiB ahead), and with far L2 hints alone, 12 or 24 KiB ahead; the engine's read
// probe over the same bytes. The variants take turns, the order rotated every pass. This is
// ../../x4-avx2-one-stream-2026-12-01/micro/x4.c with its kernels replaced; GB/s: median
// [min, max] over the passes. Built from units of one tree with ../tried/q8_0-far-l2.diff
// applied, each under its own prefix:
//   P="-march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512"
//   unit() { printf '#define QB_ISA %s\n#include "qb_isa_unit.h"\n' $1 > u_$1.c
//            clang -O3 -ffp-contract=on $2 -ITREE/Sources/CQBKernels/kernels -ITREE/Sources/CQBKernels/include -c u_$1.c -o u_$1.o; }
//   unit u512 "$P"; unit t512 "$P"; unit f512 "$P -DQ8FAR=12288 -DQ8LINES=3"; unit g512 "$P -DQ8FAR=24576 -DQ8LINES=3"
//   clang -O2 -march=x86-64-v3 -ITREE/Sources/CQBKernels/include q8_0-stream.c u_*.o -lpthread -lm -o q8_0-stream
//   ./q8_0-stream q8_0 21 1
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

#define SET(p)                                                                                                 \
    void qb_##p##_matvec_repacked(int32_t, const void *, const qb_q8a *, float *, int64_t, int64_t, int64_t); \
    void qb_##p##_repack(int32_t, int32_t, const void *, void *, int64_t, int64_t, int64_t);                   \
    uint64_t qb_##p##_read_bandwidth_kernel(const void *, int64_t);
SET(u512) SET(t512) SET(f512) SET(g512)
#define PF(p) int32_t qb_##p##_set_stream_prefetch(int32_t);
PF(u512) PF(t512) PF(f512) PF(g512)

typedef void (*matvec)(int32_t, const void *, const qb_q8a *, float *, int64_t, int64_t, int64_t);
static const struct {
    const char *name;
    matvec f;
} V[] = {
    {"avx512, off (AMD's setting)", qb_u512_matvec_repacked},
    {"avx512, own prefetches", qb_t512_matvec_repacked},
    {"avx512, far L2 12 KiB", qb_f512_matvec_repacked},
    {"avx512, far L2 24 KiB", qb_g512_matvec_repacked},
};
enum { NV = sizeof V / sizeof V[0], NK = NV + 1, NM = 112, COLS = 2048 };

// The formats: GGML type, block bytes, and the f16 fields every block gets (a 0.1 scale; Q4_1's
// and Q5_1's minimum too), so no random byte makes an infinity or a NaN.
static const struct {
    const char *name;
    int32_t type, block, halves;
} T[] = {{"q8_0", QB_Q8_0, 34, 1}, {"q5_0", QB_Q5_0, 22, 1}, {"q5_1", QB_Q5_1, 24, 2}, {"q4_1", QB_Q4_1, 20, 2}};
static int32_t type, block, halves;

static uint8_t *w[NM], *hotw;
static int64_t rows[NM], cols[NM];
static int64_t hot_rows = 256, hot_reps = 64;
static qb_q8a *xq;
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

// Thread t's share of groups [0, groups) of matrix m (cols columns) by variant k.
static void share(int k, const uint8_t *m, int64_t groups, int64_t c, int t) {
    const int64_t a = t * groups / threads, b = (t + 1) * groups / threads, gb = c / 32 * block * 4;
    if (k == NV) sink ^= qb_t512_read_bandwidth_kernel(m + a * gb, (b - a) * gb / 256 * 256);
    else V[k].f(type, m, xq, y, a, b, c);
}

static void work(int k, int t) {
    if (hot) {
        for (int64_t r = 0; r < hot_reps; r++) share(k, hotw, hot_rows / 4, COLS, t);
        barrier();
        return;
    }
    for (int i = 0; i < NM; i++) {
        share(k, w[i], rows[i] / 4, cols[i], t);
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

// A random r x c matrix of the type (scales 0.1) in four-row groups.
static uint8_t *matrix(int64_t r, int64_t c) {
    const int64_t blocks = r * c / 32, bytes = blocks * block;
    uint8_t *plain = pages(bytes), *out = pages(bytes);
    fill(plain, bytes);
    for (int64_t b = 0; b < blocks; b++)
        for (int h = 0; h < halves; h++) memcpy(plain + block * b + 2 * h, &(uint16_t){0x2E66}, 2);
    qb_t512_repack(type, 4, plain, out, 0, r / 4, c);
    free(plain);
    return out;
}

static int cmp(const void *a, const void *b) {
    const double x = *(const double *)a, z = *(const double *)b;
    return (x > z) - (x < z);
}

int main(int argc, char **argv) {
    int t = -1;
    for (int i = 0; argc > 1 && i < (int)(sizeof T / sizeof T[0]); i++)
        if (!strcmp(argv[1], T[i].name)) t = i;
    if (t < 0) return 2;
    type = T[t].type;
    block = T[t].block;
    halves = T[t].halves;
    const int passes = argc > 2 ? atoi(argv[2]) : 9;
    threads = argc > 3 ? atoi(argv[3]) : 1;
    hot = argc > 4 && !strcmp(argv[4], "hot");
    if (argc > 5) hot_rows = atoi(argv[5]);
    if (passes < 1 || passes > 1000 || threads < 1 || threads > 2 || hot_rows < 8 || hot_rows > 256 || hot_rows % 8) return 2;
    hot_reps = 256 * 64 / hot_rows;
    static const int64_t layer[7][2] = {{2048, 2048}, {512, 2048}, {512, 2048}, {2048, 2048},
                                        {8192, 2048}, {8192, 2048}, {2048, 8192}};  // q k v o gate up down
    int64_t bytes = 0;
    if (hot) {
        hotw = matrix(256, COLS);
        bytes = hot_rows * COLS / 32 * block * hot_reps;
    } else {
        for (int i = 0; i < NM; i++) {
            rows[i] = layer[i % 7][0];
            cols[i] = layer[i % 7][1];
            w[i] = matrix(rows[i], cols[i]);
            bytes += rows[i] * cols[i] / 32 * block;
        }
    }
    xq = aligned_alloc(64, 256 * sizeof(qb_q8a));
    y = aligned_alloc(64, 8192 * sizeof(float));
    for (int b = 0; b < 256; b++) {
        xq[b].d = 0.01f;
        xq[b].s = 0;
        for (int k = 0; k < 32; k++) xq[b].qs[k] = (int8_t)(k - 16);
    }
    qb_u512_set_stream_prefetch(0); qb_t512_set_stream_prefetch(1);
    qb_f512_set_stream_prefetch(0); qb_g512_set_stream_prefetch(0);
    pthread_t th;
    if (threads == 2) pthread_create(&th, NULL, worker, NULL);
    double *g = calloc((size_t)NK * passes, sizeof(double));
    for (int p = -1; p < passes; p++) {  // pass -1: untimed, the pages' first touch
        for (int j = 0; j < NK; j++) {
            const int k = (j + (p < 0 ? 0 : p)) % NK;
            atomic_store(&cur_kind, k);
            const double t0 = now();
            barrier();
            work(k, 0);
            const double t1 = now();
            if (p >= 0) g[k * passes + p] = (double)bytes / (t1 - t0) / 1e9;
        }
    }
    if (threads == 2) {
        atomic_store(&stop, 1);
        barrier();
        pthread_join(th, NULL);
    }
    if (hot)
        printf("%s, %d thread(s), hot: the first %lld rows of a 256 x 2048 product, %.0f MB a pass", T[t].name, threads,
               (long long)hot_rows, (double)bytes / 1e6);
    else printf("%s, %d thread(s), from memory: the 1B's layers, %.0f MB a pass", T[t].name, threads, (double)bytes / 1e6);
    printf(", %d passes; GB/s median [min, max]\n", passes);
    for (int k = 0; k < NK; k++) {
        qsort(g + k * passes, (size_t)passes, sizeof(double), cmp);
        printf("  %-26s %7.2f [%7.2f, %7.2f]\n", k == NV ? "read probe, same bytes" : V[k].name, g[k * passes + passes / 2],
               g[k * passes], g[k * passes + passes - 1]);
    }
    return (int)(sink & 0);
}
