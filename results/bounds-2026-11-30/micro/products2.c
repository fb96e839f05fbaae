// The prefill tile products alone, one thread, as Linear.matmulInt8 calls them (tasks of four
// tiles, 16 activation rows a call): K M T BITS OFF OUT, random tiles of BITS-bit values (6:
// Q6_K's tiles, with its offsets) and activations (seed printed); OFF 1 takes the symmetric
// formats' integer offsets. Prints the best of REPS (default 9) passes' thread CPU time and
// GOP/s, and writes the outputs to OUT.
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
    int K = atoi(argv[1]), M = atoi(argv[2]), T = atoi(argv[3]), bits = atoi(argv[4]), off = atoi(argv[5]);
    unsigned seed = 12345; srand(seed);
    int nb = K / 32, six = bits == 6;
    size_t bb = six ? QB_TILE6_BLOCK_BYTES : QB_TILE_BLOCK_BYTES;
    size_t tb = (size_t)nb * bb;
    uint8_t *tiles = aligned_alloc(64, tb * T);
    for (size_t i = 0; i < tb * T; i++) tiles[i] = rand() & ((1 << bits) - 1);
    for (int t = 0; t < T; t++) for (int b = 0; b < nb; b++) {
        float *d = (float *)(tiles + t * tb + b * bb);
        for (int i = 0; i < 32; i++) d[i] = 0.01f * (1 + (rand() & 7)) * (i >= 16 ? -1 : 1);
    }
    float *x = malloc((size_t)M * K * 4);
    for (size_t i = 0; i < (size_t)M * K; i++) x[i] = rand() / (float)RAND_MAX - 0.5f;
    qb_q8a *xq = aligned_alloc(64, (size_t)M * nb * sizeof(qb_q8a));
    int32_t *offs = malloc((size_t)M * nb * 2 * 4);
    for (int c = 0; c < M; c++) {
        qb_quantize_q8a(x + (size_t)c * K, xq + (size_t)c * nb, K);
        if (six) qb_q8a_offsets(xq + (size_t)c * nb, nb, 16, -32, offs + (size_t)c * 2 * nb);
        else qb_q8a_offsets(xq + (size_t)c * nb, nb, 32, -8, offs + (size_t)c * nb);
    }
    int rows = T * 16;
    float *y = calloc((size_t)M * rows, 4);
    double best = 1e9;
    for (int rep = 0; rep < (getenv("REPS") ? atoi(getenv("REPS")) : 9); rep++) {
        double t0 = now();
        for (int task = 0; task < T; task += 4) {
            int nt = T - task < 4 ? T - task : 4;
            for (int c0 = 0; c0 < M; c0 += 16) {
                int n = M - c0 < 16 ? M - c0 : 16;
                float *out = y + (size_t)c0 * rows + task * 16;
                if (six) qb_gemm_tiles6(tiles + task * tb, nt, xq + (size_t)c0 * nb, offs + (size_t)c0 * 2 * nb, n, K, out, rows);
                else qb_gemm_tiles(tiles + task * tb, nt, bits, xq + (size_t)c0 * nb, off ? offs + (size_t)c0 * nb : NULL, n, K, out, rows);
            }
        }
        double dt = now() - t0;
        if (dt < best) best = dt;
    }
    printf("seed %u K %d M %d T %d bits %d off %d: %.3f ms, %.1f GOP/s\n", seed, K, M, T, bits, off, best * 1e3, 2.0 * T * 16 * (double)M * K / best / 1e9);
    FILE *f = fopen(argv[6], "wb");
    if (!f || fwrite(y, 4, (size_t)M * rows, f) != (size_t)M * rows) return 1;
    fclose(f);
    return 0;
}
