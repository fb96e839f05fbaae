// Batched decode kernel alone: qb_matvec_q4_0_x16 over a ROWS x COLS Q4_0 matrix in
// sixteen-row groups (random quants, seed 3, scales 1.0), n = 1, 2, 4, 8 activation rows,
// one thread, the weights from memory (a 256 MiB read before each pass; COLD=0: none).
// Best of 7 passes; the checksum of the outputs shows two builds agree. Usage: pairs ROWS COLS COLD
#include "qb_isa_names.h"
#include "qb_kernel_list.h"
#include "qb_activation.h"
#include "qb_repack.h"
#include "qb_matvec_tiles.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
    int rows = atoi(argv[1]), cols = atoi(argv[2]), cold = atoi(argv[3]);
    int nb = cols / 32, groups = rows / 16;
    size_t bytes = (size_t)groups * nb * 288;
    uint8_t *w = aligned_alloc(64, bytes);
    srand(3);
    for (size_t i = 0; i < bytes; i++) w[i] = rand() & 255;
    for (size_t gbk = 0; gbk < (size_t)groups * nb; gbk++)
        for (int r = 0; r < 16; r++) { w[gbk * 288 + 2 * r] = 0x00; w[gbk * 288 + 2 * r + 1] = 0x3C; }
    size_t fb = 256u << 20;
    char *flush = malloc(fb); memset(flush, 1, fb);
    float *x = malloc((size_t)8 * cols * 4);
    for (int i = 0; i < 8 * cols; i++) x[i] = rand() / (float)RAND_MAX - 0.5f;
    qb_q8a *xq[8]; int32_t *of[8]; float *y[8];
    for (int i = 0; i < 8; i++) {
        xq[i] = malloc(nb * sizeof(qb_q8a)); of[i] = malloc(nb * 4); y[i] = malloc(rows * 4);
        qb_quantize_q8a(x + (size_t)i * cols, xq[i], cols);
        qb_q8a_offsets(xq[i], nb, 32, -8, of[i]);
    }
    for (int n = 1; n <= 8; n *= 2) {
        double best = 1e9; volatile long s = 0;
        for (int rep = 0; rep < 7; rep++) {
            if (cold) for (size_t i = 0; i < fb; i += 64) s += flush[i];
            double t0 = now();
            qb_matvec_q4_0_x16(w, (const qb_q8a *const *)xq, (const int32_t *const *)of, y, n, 0, groups, cols);
            double dt = now() - t0;
            if (dt < best) best = dt;
        }
        double cs = 0; for (int i = 0; i < n; i++) for (int r = 0; r < rows; r++) cs += y[i][r];
        printf("%dx%d cold %d n %d: %.3f ms, %.1f GB/s, %.1f GOP/s (checksum %.6g)\n", rows, cols, cold, n, best * 1e3, bytes / best / 1e9, 2.0 * n * rows * (double)cols / best / 1e9, cs);
    }
    return 0;
}
