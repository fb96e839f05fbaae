// Q4_0 decode from memory at two threads: the four-row layout on 16-row tiles
// (qb_matvec_q4_0_tiles) against the sixteen-row layout, whose blocks hold the tile's steps
// as stored (qb_matvec_q4_0_x16; qb_repack.h), both the engine's own kernels compiled here
// from its AVX-512 unit. Both layouts are 288 bytes per block of 16 rows. Scale and
// activation values do not change the instruction stream, so they are fixed.
//
// Build, from this folder (an AVX-512 VNNI machine):
//   clang -O3 -ffp-contract=on -march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512 \
//     -I../../../Sources/CQBKernels/include -I../../../Sources/CQBKernels/kernels x16.c -o x16 -lpthread -lm
// The AVX2 set's build (an x86-64-v3 machine; results/q4_0-x16-avx2-2026-12-01/): add
// -DMICRO_AVX2 with -march=x86-64-v3 in place of the AVX-512 flags; the four-row layout then
// runs that set's own kernel (qb_matvec_repacked, two groups at a time).
// Run:
//   ./x16 token 40   the 1B Llama's 113 Q4_0 products of one token (16 layers of q, k, v, o,
//                    gate, up, down, then the 128256-row head: 695 MB) in each layout, and
//                    the same bytes read by the engine's bandwidth probe loop with the same
//                    split and barriers, taking turns (order reversed every pass)
//   ./x16 matrix 20  one 131072 x 8192 matrix (604 MB), the same turns
#if defined(MICRO_AVX2)
#include "../../../Sources/CQBKernelsAVX2/qb_kernels_avx2.c"
#else
#include "../../../Sources/CQBKernelsAVX512/qb_kernels_avx512.c"
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

enum { X4 = 0, X16 = 1, PROBE = 2 };

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct { int64_t rows, cols; uint8_t *w[2]; } matrix;  // w[X4], w[X16]

static matrix *mats;
static int nmats, layout;
static qb_q8a *xq;
static int32_t *offs;
static float *y;
static _Thread_local uint64_t probe_sink;

// Rows [16 t0, 16 t1) of matrix m in the current layout, by the engine's kernels.
static void product(const matrix *m, int64_t t0, int64_t t1) {
    const int64_t nb = m->cols / 32;
    const qb_q8a *xs[1] = {xq};
    const int32_t *os[1] = {offs};
    float *ys[1] = {y};
    if (layout == PROBE) {  // the same bytes read by the engine's probe loop
        const int64_t at = 16 * t0 * nb * 18, n = 16 * (t1 - t0) * nb * 18 / 256 * 256;
        probe_sink ^= QB_ISA_NAME(read_bandwidth_kernel)(m->w[X4] + at, n);
    } else if (layout == X4) {
#if defined(MICRO_AVX2)
        QB_ISA_NAME(matvec_repacked)(QB_Q4_0, m->w[X4], xq, y, 4 * t0, 4 * t1, m->cols);
#else
        QB_ISA_NAME(matvec_q4_0_tiles)(m->w[X4], xs, os, ys, 1, 4 * t0, 4 * t1, m->cols);
#endif
    } else {
        QB_ISA_NAME(matvec_q4_0_x16)(m->w[X16], xs, os, ys, 1, t0, t1, m->cols);
    }
}

// Two threads, a spinning barrier between products (the engine's pool spins too).
static _Atomic int arrived, generation, stop;
static void barrier(void) {
    const int g = atomic_load(&generation);
    if (atomic_fetch_add(&arrived, 1) == 1) {
        atomic_store(&arrived, 0);
        atomic_fetch_add(&generation, 1);
    } else {
        while (atomic_load(&generation) == g) _mm_pause();
    }
}
// One token: every product, each split into two halves of whole tiles.
static void token(int thread) {
    for (int i = 0; i < nmats; i++) {
        const int64_t tiles = mats[i].rows / 16;
        product(&mats[i], thread * tiles / 2, (thread + 1) * tiles / 2);
        barrier();
    }
}
static void *worker(void *unused) {
    (void)unused;
    for (;;) {
        barrier();
        if (atomic_load(&stop)) return NULL;
        token(1);
    }
}

static uint8_t *pages(int64_t bytes) {
    const int64_t huge = 2 << 20, n = (bytes + huge - 1) / huge * huge;
    uint8_t *p = aligned_alloc((size_t)huge, (size_t)n);
    madvise(p, (size_t)n, MADV_HUGEPAGE);
    return p;
}

// Both layouts of one matrix, repacked by the engine from the same plain rows: pseudo-random
// quants, every f16 scale 0.1.
static void make(matrix *m, int64_t rows, int64_t cols, uint32_t seed) {
    const int64_t nb = cols / 32, bytes = rows * nb * 18;
    m->rows = rows;
    m->cols = cols;
    uint8_t *plain = pages(bytes);
    uint32_t s = seed;
    for (int64_t i = 0; i < bytes; i++) plain[i] = (uint8_t)((s = s * 1664525u + 1013904223u) >> 24);
    for (int64_t b = 0; b < rows * nb; b++) memcpy(plain + 18 * b, &(uint16_t){0x2E66}, 2);
    m->w[X4] = pages(bytes);
    m->w[X16] = pages(bytes);
    QB_ISA_NAME(repack)(QB_Q4_0, 4, plain, m->w[X4], 0, rows / 4, cols);
    QB_ISA_NAME(repack)(QB_Q4_0, 16, plain, m->w[X16], 0, rows / 16, cols);
    free(plain);
}

static int cmp(const void *a, const void *b) {
    const double x = *(const double *)a, z = *(const double *)b;
    return (x > z) - (x < z);
}

int main(int argc, char **argv) {
    const int whole = argc > 1 && strcmp(argv[1], "matrix") == 0, passes = argc > 2 ? atoi(argv[2]) : 20;
    if (passes < 1 || passes > 1000) return 2;
    if (whole) {
        nmats = 1;
        mats = calloc(1, sizeof(matrix));
        make(&mats[0], 131072, 8192, 1);
    } else {
        static const int64_t layer[7][2] = {{2048, 2048}, {512, 2048}, {512, 2048}, {2048, 2048}, {8192, 2048}, {8192, 2048}, {2048, 8192}};
        nmats = 16 * 7 + 1;
        mats = calloc((size_t)nmats, sizeof(matrix));
        for (int i = 0; i < 16 * 7; i++) make(&mats[i], layer[i % 7][0], layer[i % 7][1], (uint32_t)i + 1);
        make(&mats[nmats - 1], 128256, 2048, 999);
    }
    int64_t bytes = 0, widest = 0;
    for (int i = 0; i < nmats; i++) {
        bytes += mats[i].rows * mats[i].cols / 32 * 18;
        if (mats[i].rows > widest) widest = mats[i].rows;
    }
    const int64_t nb = 8192 / 32;
    xq = aligned_alloc(64, (size_t)nb * sizeof(qb_q8a));
    offs = calloc((size_t)nb, sizeof(int32_t));
    y = aligned_alloc(64, (size_t)widest * sizeof(float));
    for (int64_t b = 0; b < nb; b++) {
        xq[b].d = 0.01f;
        xq[b].s = 0;
        for (int k = 0; k < 32; k++) xq[b].qs[k] = (int8_t)(k - 16);
        offs[b] = -8 * 16 * -1;
    }
    pthread_t th;
    pthread_create(&th, NULL, worker, NULL);
    double *gbps[4];
    for (int l = 0; l < 4; l++) gbps[l] = calloc((size_t)passes, sizeof(double));
    for (layout = 0; layout < 3; layout++) {  // untimed: the pages' first touch
        barrier();
        token(0);
    }
    static const int order[2][3] = {{X4, X16, PROBE}, {PROBE, X16, X4}};  // turns, reversed every pass
    for (int p = 0; p < passes; p++) {
        for (int k = 0; k < 3; k++) {
            layout = order[p % 2][k];
            const double t0 = now();
            barrier();
            token(0);
            gbps[layout][p] = (double)bytes / (now() - t0) / 1e9;
        }
        gbps[3][p] = gbps[X16][p] / gbps[X4][p];
    }
    atomic_store(&stop, 1);
    barrier();
    pthread_join(th, NULL);
    printf("%s: %.0f MB a pass, %d passes of each, median [min, max]\n", whole ? "matrix" : "token", (double)bytes / 1e6, passes);
    static const char *name[4] = {
#if defined(MICRO_AVX2)
                                  "four-row layout, GB/s",
#else
                                  "four-row layout (tiles), GB/s",
#endif
                                  "sixteen-row layout, GB/s", "read of the same bytes, GB/s",
                                  "sixteen / four, per pass"};
    for (int l = 0; l < 4; l++) {
        qsort(gbps[l], (size_t)passes, sizeof(double), cmp);
        printf("  %-32s %6.3f [%6.3f, %6.3f]\n", name[l], gbps[l][passes / 2], gbps[l][0], gbps[l][passes - 1]);
    }
    return 0;
}
