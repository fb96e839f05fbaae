// The Q6_K prefill products alone, one thread, as Linear.matmulInt8 runs them (tasks of 4
// tiles, 16 activation rows a call): T tiles of K columns against M activation rows, random
// 6-bit values, scales and activations (seed printed). The before (b256) and after (t256)
// AVX2 units take turns, PASSES passes each; prints each one's median and best thread CPU
// time, GOP/s at the median, and whether their outputs are byte for byte the same.
#include "qb_activation.h"
#include "qb_gemm.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
void qb_b256_quantize_q8a(const float *x, qb_q8a *y, int64_t n);
void qb_b256_q8a_offsets(const qb_q8a *x, int64_t blocks, int32_t width, int32_t k, int32_t *offs);
void qb_b256_gemm_tiles6(const uint8_t *, int64_t, const qb_q8a *, const int32_t *, int64_t, int64_t, float *, int64_t);
void qb_t256_gemm_tiles6(const uint8_t *, int64_t, const qb_q8a *, const int32_t *, int64_t, int64_t, float *, int64_t);
typedef void (*gemm6_fn)(const uint8_t *, int64_t, const qb_q8a *, const int32_t *, int64_t, int64_t, float *, int64_t);
static double now(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
enum { PASSES = 15, TASK = 4 };
static double pass(gemm6_fn f, const uint8_t *tiles, size_t tb, int T, const qb_q8a *xq, const int32_t *offs, int nb, int M,
                   int K, float *y) {
    double t0 = now();
    for (int task = 0; task < T; task += TASK) {
        int nt = T - task < TASK ? T - task : TASK;
        for (int c0 = 0; c0 < M; c0 += 16) {
            int n = M - c0 < 16 ? M - c0 : 16;
            f(tiles + task * tb, nt, xq + (size_t)c0 * nb, offs + (size_t)c0 * 2 * nb, n, K, y + (size_t)c0 * 16 * T + 16 * task,
              16 * T);
        }
    }
    return now() - t0;
}
int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: %s K M T [seed]\n", argv[0]); return 2; }
    int K = atoi(argv[1]), M = atoi(argv[2]), T = atoi(argv[3]);
    unsigned seed = argc > 4 ? (unsigned)atoi(argv[4]) : 12345;
    srand(seed);
    int nb = K / 32;
    size_t tb = (size_t)nb * QB_TILE6_BLOCK_BYTES;
    uint8_t *tiles = aligned_alloc(64, tb * T);
    for (int t = 0; t < T; t++)
        for (int b = 0; b < nb; b++) {
            uint8_t *blk = tiles + t * tb + b * QB_TILE6_BLOCK_BYTES;
            float *d = (float *)blk;
            for (int i = 0; i < 32; i++) d[i] = 0.001f * (float)((rand() % 255) - 127);
            for (int i = 128; i < QB_TILE6_BLOCK_BYTES; i++) blk[i] = (uint8_t)(rand() & 63);
        }
    float *x = malloc((size_t)M * K * 4);
    for (size_t i = 0; i < (size_t)M * K; i++) x[i] = rand() / (float)RAND_MAX - 0.5f;
    qb_q8a *xq = aligned_alloc(64, (size_t)M * nb * sizeof(qb_q8a));
    int32_t *offs = malloc((size_t)M * 2 * nb * 4);
    for (int c = 0; c < M; c++) {
        qb_b256_quantize_q8a(x + (size_t)c * K, xq + (size_t)c * nb, K);
        qb_b256_q8a_offsets(xq + (size_t)c * nb, nb, 16, -32, offs + (size_t)c * 2 * nb);
    }
    size_t ny = (size_t)M * 16 * T;
    float *y[2] = {calloc(ny, 4), calloc(ny, 4)};
    gemm6_fn f[2] = {qb_b256_gemm_tiles6, qb_t256_gemm_tiles6};
    double t[2][PASSES];
    for (int p = 0; p < PASSES; p++)
        for (int v = 0; v < 2; v++) {
            int w = p % 2 ? 1 - v : v;  // ABBA
            t[w][p] = pass(f[w], tiles, tb, T, xq, offs, nb, M, K, y[w]);
        }
    const char *name[2] = {"before", "after"};
    double med[2];
    for (int v = 0; v < 2; v++) {
        qsort(t[v], PASSES, sizeof(double), cmpd);
        med[v] = t[v][PASSES / 2];
        printf("seed %u K %d M %d T %d %-6s median %.3f ms best %.3f ms, %.1f GOP/s\n", seed, K, M, T, name[v], med[v] * 1e3,
               t[v][0] * 1e3, 2.0 * T * 16 * (double)M * K / med[v] / 1e9);
    }
    printf("after/before speed %.3f, outputs %s\n", med[0] / med[1], memcmp(y[0], y[1], ny * 4) ? "DIFFER" : "byte for byte the same");
    return 0;
}
