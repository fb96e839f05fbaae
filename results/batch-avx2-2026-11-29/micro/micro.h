// What the three kernel-alone programs share: timing, huge-page buffers, random activation
// rows, the before/after alternation with medians, and the bitwise comparison of outputs.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static void *huge(size_t n) { n = (n + (2 << 20) - 1) / (2 << 20) * (2 << 20); void *p = aligned_alloc(2 << 20, n); madvise(p, n, MADV_HUGEPAGE); memset(p, 1, n); return p; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

// n rows of cols values in [-0.5, 0.5).
static float *random_rows(int n, int cols) {
    float *x = malloc((size_t)cols * 4 * n);
    for (size_t i = 0; i < (size_t)cols * n; i++) x[i] = rand() / (float)RAND_MAX - 0.5f;
    return x;
}

// call(s, matrix, ctx) for s = 0 (before) and 1 (after), alternating, reps times each, each
// call on the next of `copies` matrices; returns the two medians in med[0], med[1].
typedef void (*side_fn)(int s, const uint8_t *m, void *ctx);
static void alternate(int reps, int copies, uint8_t *const *m, side_fn call, void *ctx, double med[2]) {
    double *t = malloc(sizeof(double) * 2 * reps);
    int cc = 0;
    for (int rep = 0; rep < reps; rep++)
        for (int s = 0; s < 2; s++) {
            double t0 = now();
            call(s, m[cc++ % copies], ctx);
            t[s * reps + rep] = now() - t0;
        }
    for (int s = 0; s < 2; s++) { qsort(t + s * reps, reps, sizeof(double), cmp); med[s] = t[s * reps + reps / 2]; }
    free(t);
}

// Prints MISMATCH when any of the n output rows differ between the sides, then the line.
static void report(const char *what, int rows, int cols, int n, int copies, float *const *before, float *const *after, double gb,
                   const double med[2]) {
    for (int r = 0; r < n; r++) if (memcmp(before[r], after[r], (size_t)rows * 4)) { printf("MISMATCH row %d\n", r); break; }
    printf("%s %dx%d n=%d copies=%d: before %.3f ms (%.1f GB/s)  after %.3f ms (%.1f)  after/before time %.3f\n", what, rows, cols, n,
           copies, med[0] * 1e3, gb / med[0], med[1] * 1e3, gb / med[1], med[1] / med[0]);
}
