// One-thread decode kernels from memory before and after the far L2 prefetch (qb_prefetch_l2),
// avx512 and avx2 sets in one process, interleaved; GB/s of the bytes read, best and median of
// REPS, beside the roofline's read probe. Buffers are 2 MiB-aligned MADV_HUGEPAGE memory, as the
// engine keeps its weights. 524288 x 2048 (604 MB of Q4_K) is larger than the Intel CPU's
// 260 MiB L3. From the repository's root, the parent's kernels unpacked beside the tree's:
//   mkdir -p /tmp/old && git archive 4a3b777 Sources/CQBKernels | tar -x -C /tmp/old
//   for s in new512:avx512:. new2:avx2:. old512:avx512:/tmp/old old2:avx2:/tmp/old; do IFS=: read p set root <<< "$s"
//     printf '#define QB_ISA %s\n#include "qb_isa_unit.h"\n' $p > u_$p.c
//     f="-march=x86-64-v3"; [ $set = avx512 ] && f="-march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512"
//     clang -O3 $f -ffp-contract=on -I$root/Sources/CQBKernels/kernels -I$root/Sources/CQBKernels/include -c u_$p.c; done
//   clang -O2 -march=x86-64-v3 -ISources/CQBKernels/include prefetch-stream.c u_*.o -lm -o prefetch-stream
//   ./prefetch-stream 524288 2048 7
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include "qb_activation.h"
#include "qb_formats.h"
#define SET(p)                                                                                                   \
    void qb_##p##_matvec_kquant(int32_t, const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t);    \
    void qb_##p##_matvec_q4_k_x16(const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t);           \
    void qb_##p##_matvec_repacked(int32_t, const void *, const qb_q8a *, float *, int64_t, int64_t, int64_t);  \
    void qb_##p##_repack(int32_t, const void *, void *, int64_t, int64_t, int64_t);                            \
    int64_t qb_##p##_repack_bytes(int32_t, int64_t, int64_t);                                                   \
    void qb_##p##_quantize_q8k(const float *, qb_q8k *, int64_t);                                              \
    void qb_##p##_quantize_q8a(const float *, qb_q8a *, int64_t);                                              \
    uint64_t qb_##p##_read_bandwidth_kernel(const void *, int64_t);
SET(new512) SET(new2) SET(old512) SET(old2)
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static void *huge(size_t n) {
    n = (n + (2 << 20) - 1) / (2 << 20) * (2 << 20);
    void *p = aligned_alloc(2 << 20, n);
    madvise(p, n, MADV_HUGEPAGE);
    memset(p, 1, n);
    return p;
}
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
static volatile uint64_t sink;
int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: %s ROWS COLS REPS\n", argv[0]); return 2; }
    int rows = atoi(argv[1]), cols = atoi(argv[2]), reps = atoi(argv[3]);
    size_t nb = cols / 256, b4 = (size_t)rows * nb * 144, b6 = (size_t)rows * nb * 210, b8 = (size_t)rows * (cols / 32) * 34;
    size_t xb = qb_new2_repack_bytes(QB_Q4_K, rows, cols), x8 = qb_new2_repack_bytes(QB_Q8_0, rows, cols);
    uint8_t *w4 = huge(b4), *wx = huge(xb), *w6 = huge(b6), *w8 = huge(b8), *r8 = huge(x8);
    srand(3);
    for (size_t i = 0; i < b4; i++) w4[i] = rand();
    for (size_t i = 0; i < b6; i++) w6[i] = rand();
    for (size_t i = 0; i < b8; i++) w8[i] = rand();
    // Finite half-precision scales: random bytes there could be infinities or NaNs.
    for (size_t b = 0; b < b4 / 144; b++) {
        _Float16 d = (rand() % 100) * 0.0001f, m = (rand() % 100) * 0.00001f;
        memcpy(w4 + b * 144, &d, 2), memcpy(w4 + b * 144 + 2, &m, 2);
    }
    for (size_t b = 0; b < b6 / 210; b++) { _Float16 d = (rand() % 100) * 0.0001f; memcpy(w6 + b * 210 + 208, &d, 2); }
    for (size_t b = 0; b < b8 / 34; b++) { _Float16 d = (rand() % 100) * 0.0001f; memcpy(w8 + b * 34, &d, 2); }
    qb_new2_repack(QB_Q4_K, w4, wx, 0, rows / 16, cols);
    qb_new2_repack(QB_Q8_0, w8, r8, 0, rows / 4, cols);
    float *x = malloc(cols * 4), *y = malloc(rows * 4);
    for (int i = 0; i < cols; i++) x[i] = rand() / (float)RAND_MAX - 0.5f;
    qb_q8k *xk = malloc(nb * sizeof(qb_q8k));
    qb_q8a *xa = malloc(cols / 32 * sizeof(qb_q8a));
    qb_new2_quantize_q8k(x, xk, cols);
    qb_new2_quantize_q8a(x, xa, cols);
    enum { N = 17 };
    const char *names[N] = {"q4_k x16 avx512 before", "q4_k x16 avx512 after", "q4_k x16 avx2 before", "q4_k x16 avx2 after",
                            "q6_k rows avx512 before", "q6_k rows avx512 after", "q6_k rows avx2 before", "q6_k rows avx2 after",
                            "q4_k rows avx512 before", "q4_k rows avx512 after", "q4_k rows avx2 before", "q4_k rows avx2 after",
                            "q8_0 x4 avx512 before", "q8_0 x4 avx512 after", "q8_0 x4 avx2 before", "q8_0 x4 avx2 after",
                            "read probe (roofline, avx512)"};
    const double bytes[N] = {xb, xb, xb, xb, b6, b6, b6, b6, b4, b4, b4, b4, x8, x8, x8, x8, xb};
    double *t = malloc(sizeof(double) * N * reps);
    for (int r = 0; r < reps; r++)
        for (int s = 0; s < N; s++) {
            double t0 = now();
            switch (s) {
            case 0: qb_old512_matvec_q4_k_x16(wx, xk, y, 0, rows / 16, cols); break;
            case 1: qb_new512_matvec_q4_k_x16(wx, xk, y, 0, rows / 16, cols); break;
            case 2: qb_old2_matvec_q4_k_x16(wx, xk, y, 0, rows / 16, cols); break;
            case 3: qb_new2_matvec_q4_k_x16(wx, xk, y, 0, rows / 16, cols); break;
            case 4: qb_old512_matvec_kquant(QB_Q6_K, w6, xk, y, 0, rows, cols); break;
            case 5: qb_new512_matvec_kquant(QB_Q6_K, w6, xk, y, 0, rows, cols); break;
            case 6: qb_old2_matvec_kquant(QB_Q6_K, w6, xk, y, 0, rows, cols); break;
            case 7: qb_new2_matvec_kquant(QB_Q6_K, w6, xk, y, 0, rows, cols); break;
            case 8: qb_old512_matvec_kquant(QB_Q4_K, w4, xk, y, 0, rows, cols); break;
            case 9: qb_new512_matvec_kquant(QB_Q4_K, w4, xk, y, 0, rows, cols); break;
            case 10: qb_old2_matvec_kquant(QB_Q4_K, w4, xk, y, 0, rows, cols); break;
            case 11: qb_new2_matvec_kquant(QB_Q4_K, w4, xk, y, 0, rows, cols); break;
            case 12: qb_old512_matvec_repacked(QB_Q8_0, r8, xa, y, 0, rows / 4, cols); break;
            case 13: qb_new512_matvec_repacked(QB_Q8_0, r8, xa, y, 0, rows / 4, cols); break;
            case 14: qb_old2_matvec_repacked(QB_Q8_0, r8, xa, y, 0, rows / 4, cols); break;
            case 15: qb_new2_matvec_repacked(QB_Q8_0, r8, xa, y, 0, rows / 4, cols); break;
            default: sink += qb_new512_read_bandwidth_kernel(wx, (int64_t)xb); break;
            }
            t[s * reps + r] = now() - t0;
        }
    for (int s = 0; s < N; s++) {
        qsort(t + s * reps, reps, sizeof(double), cmp);
        printf("%-30s best %5.1f  median %5.1f GB/s\n", names[s], bytes[s] / t[s * reps] / 1e9, bytes[s] / t[s * reps + reps / 2] / 1e9);
    }
    return 0;
}
