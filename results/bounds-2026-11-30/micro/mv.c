// decode matvec from memory, one thread: TYPE ROWS COLS COPIES REPS (rotating copies, GB/s)
#include "qb_isa_names.h"
#include "qb_kernel_list.h"
#include "qb_activation.h"
#include "qb_formats.h"
#include "qb_quantizer.h"
#include "qb_repack.h"
#include "qb_dot_kquant.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
    int type = atoi(argv[1]); long rows = atol(argv[2]), cols = atol(argv[3]); int copies = atoi(argv[4]), reps = atoi(argv[5]);
    srand(5);
    long rb = cols / qb_block_size(type) * qb_block_bytes(type), bytes = rows * rb;
    float *f = malloc(4 * cols);
    char *plain = malloc(bytes);
    for (long r = 0; r < rows; r++) { for (long c = 0; c < cols; c++) f[c] = rand() / (float)RAND_MAX - 0.5f; qb_quantize_row(type, f, plain + r * rb, cols); }
    char **w = malloc(sizeof(char *) * copies);
    int gr = qb_repack_group_rows(type);
    for (int i = 0; i < copies; i++) { w[i] = aligned_alloc(64, (bytes + 63) / 64 * 64); if (gr) qb_repack(type, plain, w[i], 0, rows / gr, cols); else memcpy(w[i], plain, bytes); }
    qb_q8a *x = aligned_alloc(64, sizeof(qb_q8a) * cols / 32);
    for (long c = 0; c < cols; c++) f[c] = rand() / (float)RAND_MAX - 0.5f;
    qb_quantize_q8a(f, x, cols);
    qb_q8k *xk = aligned_alloc(64, sizeof(qb_q8k) * (cols / 256 + 1)); if (cols % 256 == 0) qb_quantize_q8k(f, xk, cols);
    float *y = malloc(4 * rows);
    double best = 1e9;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        for (int i = 0; i < copies; i++) { if (type == QB_Q4_K) qb_matvec_q4_k_x16(w[i], xk, y, 0, rows / 16, cols); else if (type == QB_Q6_K) qb_matvec_kquant(type, w[i], xk, y, 0, rows, cols); else qb_matvec_repacked(type, w[i], x, y, 0, rows / 4, cols); }
        double dt = now() - t0; if (dt < best) best = dt;
    }
    printf("type %d %ldx%ld x%d copies: %.1f us per matrix, %.2f GB/s\n", type, rows, cols, copies, best / copies * 1e6, (double)bytes * copies / best / 1e9);
    return 0;
}
