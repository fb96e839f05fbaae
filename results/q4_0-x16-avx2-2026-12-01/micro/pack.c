// Times the AVX2 set's Q4_0 prefill packers (qb_pack_tile_ggml): four-row groups against
// sixteen-row groups of the same rows, ROWS x 2048 (default 2048: 128 tiles, 2.4 MB of
// weights, the 1B's q and o products), taking turns, medians of 31, every tile checked
// byte for byte against the other's. Buffers 64-byte aligned, as the engine's are (with
// malloc's 16-byte alignment the sixteen-row packer's 32-byte loads and stores split lines
// and it ran slower than the four-row one).
// Build, from this folder:
//   clang -O3 -ffp-contract=on -march=x86-64-v3 -I../../../Sources/CQBKernels/include \
//     -I../../../Sources/CQBKernels/kernels pack.c -o pack -lm
#include "../../../Sources/CQBKernelsAVX2/qb_kernels_avx2.c"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifndef ROWS
#define ROWS 2048
#endif
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec * 1e-3; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(void) {
    const int64_t rows = ROWS, cols = 2048, nb = cols / 32;
    uint8_t *plain = aligned_alloc(64, rows * nb * 18), *x4 = aligned_alloc(64, rows * nb * 18), *x16 = aligned_alloc(64, rows * nb * 18);
    srand(1);
    for (int64_t i = 0; i < rows * nb * 18; i++) plain[i] = rand();
    for (int64_t i = 0; i < rows * nb; i++) { plain[i * 18] = 0; plain[i * 18 + 1] = 0x3c; }
    QB_ISA_NAME(repack)(QB_Q4_0, 4, plain, x4, 0, rows / 4, cols);
    QB_ISA_NAME(repack)(QB_Q4_0, 16, plain, x16, 0, rows / 16, cols);
    const int64_t tb = nb * QB_ISA_NAME(gemm_tile_block_bytes)(4);
    uint8_t *t4 = aligned_alloc(64, tb), *t16 = aligned_alloc(64, tb);
    double a[31], b[31];
    for (int k = 0; k < 31; k++) {
        double t0 = now();
        for (int64_t r = 0; r < rows; r += 16) QB_ISA_NAME(pack_tile_ggml)(QB_Q4_0, 4, x4, r, cols, t4);
        double t1 = now();
        for (int64_t r = 0; r < rows; r += 16) QB_ISA_NAME(pack_tile_ggml)(QB_Q4_0, 16, x16, r, cols, t16);
        double t2 = now();
        a[k] = t1 - t0; b[k] = t2 - t1;
        if (memcmp(t4, t16, tb)) { printf("tiles differ\n"); return 1; }
    }
    qsort(a, 31, sizeof(double), cmp); qsort(b, 31, sizeof(double), cmp);
    printf("four-row %.1f us, sixteen-row %.1f us (medians of 31)\n", a[15], b[15]);
}
