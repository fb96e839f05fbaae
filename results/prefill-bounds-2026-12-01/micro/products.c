// The prefill products alone, one thread: Linear.matmulInt8's loop over T tiles (tasks of
// TASK tiles, argv[6], default 4; 16 activation rows per pass) of a K-column matrix against
// M activation rows, random tiles and activations (seed printed), int8 values with per-row
// offsets as Q8_0's (OFF=1) or the M x s term (OFF=0). Prints the best of 9 passes' thread
// CPU time and GOP/s, and writes the outputs to argv[5] so two builds can be compared byte
// for byte (build.sh). From ../../gemm-pairs-2026-11-29/micro/products.c, with the task size
// an argument and the parent tree's one-tile path gone.
#include "qb_isa_names.h"
#include "qb_kernel_list.h"
#include "qb_activation.h"
#include "qb_gemm.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
    if (argc < 6) { fprintf(stderr, "usage: %s K M T OFF OUT\n", argv[0]); return 2; }
    int TASK = argc > 6 ? atoi(argv[6]) : 4; int K = atoi(argv[1]), M = atoi(argv[2]), T = atoi(argv[3]), off = atoi(argv[4]);
    unsigned seed = 12345;
    srand(seed);
    int nb = K / 32;
    size_t tb = (size_t)nb * QB_TILE_BLOCK_BYTES;
    uint8_t *tiles = aligned_alloc(64, tb * T);
    for (size_t i = 0; i < tb * T; i++) tiles[i] = rand() & 255;
    for (int t = 0; t < T; t++)
        for (int b = 0; b < nb; b++) {
            float *d = (float *)(tiles + t * tb + b * QB_TILE_BLOCK_BYTES);
            for (int i = 0; i < 32; i++) d[i] = 0.01f * (1 + (rand() & 7)) * (i >= 16 ? -1 : 1);
        }
    float *x = malloc((size_t)M * K * 4);
    for (size_t i = 0; i < (size_t)M * K; i++) x[i] = rand() / (float)RAND_MAX - 0.5f;
    qb_q8a *xq = aligned_alloc(64, (size_t)M * nb * sizeof(qb_q8a));
    int32_t *offs = malloc((size_t)M * nb * 4);
    for (int c = 0; c < M; c++) {
        qb_quantize_q8a(x + (size_t)c * K, xq + (size_t)c * nb, K);
        qb_q8a_offsets(xq + (size_t)c * nb, nb, 32, -128, offs + (size_t)c * nb);
    }
    int rows = T * 16;
    float *y = calloc((size_t)M * rows, 4);
    double best = 1e9;
    for (int rep = 0; rep < 9; rep++) {
        double t0 = now();
        for (int task = 0; task < T; task += TASK) {
            int nt = T - task < TASK ? T - task : TASK;
            for (int c0 = 0; c0 < M; c0 += 16) {
                int n = M - c0 < 16 ? M - c0 : 16;
                const int32_t *o = off ? offs + (size_t)c0 * nb : NULL;
                float *out = y + (size_t)c0 * rows + task * 16;
                qb_gemm_tiles(tiles + task * tb, nt, 8, xq + (size_t)c0 * nb, o, n, K, out, rows);
            }
        }
        double dt = now() - t0;
        if (dt < best) best = dt;
    }
    printf("seed %u K %d M %d T %d off %d: %.3f ms, %.1f GOP/s\n", seed, K, M, T, off, best * 1e3, 2.0 * T * 16 * (double)M * K / best / 1e9);
    FILE *f = fopen(argv[5], "wb");
    if (!f || fwrite(y, 4, (size_t)M * rows, f) != (size_t)M * rows) return 1;
    fclose(f);
    return 0;
}
