// decode matvec sections on the pool, tapered chunks as Linear.shareUnits: TYPE ROWS COLS COPIES REPS THREADS [NMAT]
// NMAT matrices of the shape fused in one section (gate+up: 2). Rotating copies (cold), time per section
// (the sections' own wall time; SPIN=us spins on the caller before each; GRAIN and MINU set the chunks).
#include "qb_isa_names.h"
#include "qb_kernel_list.h"
#include "qb_activation.h"
#include "qb_formats.h"
#include "qb_quantizer.h"
#include "qb_repack.h"
#include "qb_dot_kquant.h"
#include "qb_pool.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
typedef struct { int type, gr, nmat; long units, cols; char **w; qb_q8a *x; qb_q8k *xk; float *y; long *bounds; } ctx_t;
static void task(void *vc, int64_t b, int64_t e, int32_t th) {
    ctx_t *c = vc;
    for (int64_t k = b; k < e; k++) {
        long lo = c->bounds[k], hi = c->bounds[k + 1];
        while (lo < hi) {
            int m = lo / c->units; long l = lo % c->units, h = hi - (long)m * c->units; if (h > c->units) h = c->units;
            char *w = c->w[m];
            if (c->type == QB_Q4_K) qb_matvec_q4_k_x16(w, c->xk, c->y, l, h, c->cols);
            else if (c->type == QB_Q6_K) qb_matvec_kquant(c->type, w, c->xk, c->y, l, h, c->cols);
            else qb_matvec_repacked(c->type, w, c->x, c->y, l, h, c->cols);
            lo = (long)m * c->units + h;
        }
    }
}
int main(int argc, char **argv) {
    int type = atoi(argv[1]); long rows = atol(argv[2]), cols = atol(argv[3]); int copies = atoi(argv[4]), reps = atoi(argv[5]), threads = atoi(argv[6]);
    int nmat = argc > 7 ? atoi(argv[7]) : 1;
    srand(5);
    long rb = cols / qb_block_size(type) * qb_block_bytes(type), bytes = rows * rb;
    float *f = malloc(4 * cols);
    char *plain = malloc(bytes);
    for (long r = 0; r < rows; r++) { for (long c = 0; c < cols; c++) f[c] = rand() / (float)RAND_MAX - 0.5f; qb_quantize_row(type, f, plain + r * rb, cols); }
    int gr = qb_repack_group_rows(type); if (type == QB_Q6_K) gr = 0;
    int n = copies * nmat;
    char **w = malloc(sizeof(char *) * n);
    for (int i = 0; i < n; i++) { w[i] = aligned_alloc(64, (bytes + 63) / 64 * 64); if (gr) qb_repack(type, plain, w[i], 0, rows / gr, cols); else memcpy(w[i], plain, bytes); }
    qb_q8a *x = aligned_alloc(64, sizeof(qb_q8a) * cols / 32);
    for (long c = 0; c < cols; c++) f[c] = rand() / (float)RAND_MAX - 0.5f;
    qb_quantize_q8a(f, x, cols);
    qb_q8k *xk = aligned_alloc(64, sizeof(qb_q8k) * (cols / 256 + 1)); if (cols % 256 == 0) qb_quantize_q8k(f, xk, cols);
    float *y = malloc(4 * rows);
    long units = gr ? rows / gr : rows, total = units * nmat;
    int tiles = type == QB_Q4_K;
    long minimum = tiles ? 1 : (gr ? 16 / gr : 16);
    long grain = total / (threads * 8); if (grain < minimum) grain = minimum; if (getenv("GRAIN")) grain = atol(getenv("GRAIN")); if (getenv("MINU")) minimum = atol(getenv("MINU"));
    long a = 1, floor_ = minimum; if (getenv("MINU")) floor_ = atol(getenv("MINU"));
    long *bounds = malloc(sizeof(long) * (total + 2)); int nb = 0; bounds[0] = 0; long at = 0;
    if (threads == 1) { for (at = 0; at < total;) { at = at + grain < total ? at + grain : total; bounds[++nb] = at; } }
    else while (at < total) { long share = (total - at) / (2 * threads) / a * a; long step = share > floor_ ? share : floor_; if (step > grain) step = grain; at = at + step < total ? at + step : total; bounds[++nb] = at; }
    qb_pool *pool = qb_pool_create(threads);
    ctx_t c = {type, gr, nmat, units, cols, NULL, x, xk, y, bounds};
    double best = 1e9;
    for (int r = 0; r < reps; r++) {
        double spin = getenv("SPIN") ? atof(getenv("SPIN")) * 1e-6 : 0, sec = 0;
        for (int i = 0; i < copies; i++) { if (spin > 0) { double s0 = now(); while (now() - s0 < spin) ; } double s1 = now(); c.w = w + i * nmat; qb_pool_run(pool, task, &c, nb, 1); sec += now() - s1; }
        if (sec < best) best = sec;
    }
    printf("type %d %ldx%ld x%d, %d threads, %d chunks: %.1f us per section, %.2f GB/s\n", type, rows, cols, nmat, threads, nb, best / copies * 1e6, (double)bytes * nmat * copies / best / 1e9);
    return 0;
}
