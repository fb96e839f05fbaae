// Decode attention alone (qb_attention_group), one thread: HD GROUP DEPTH HEADS REPS OUT [f16].
// HEADS caches of one KV head each (HEADS=1: its rows stay in L2 from pass to pass; 128 at
// head size 64 and depth 4096: 69 MB of Q8_0 rows, read from memory), random rows stored
// through the engine's own qb_store_kv_* (Q8_0, or f16 with a last argument f16). Prints the
// best of REPS passes over all the heads, per head pass and per cached row; writes the last
// head's outputs to OUT (the kernels before and after must give the same bytes).
#include "qb_isa_names.h"
#include "qb_kernel_list.h"
#include "qb_attention.h"
#include "qb_formats.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
    int hd = atoi(argv[1]), group = atoi(argv[2]), depth = atoi(argv[3]), heads = atoi(argv[4]), reps = atoi(argv[5]);
    srand(777);
    int f16 = argc > 7 && argv[7][0] == 'f';
    size_t row = f16 ? hd * 2 : hd / 32 * 34, bytes = row * depth;
    uint8_t *k = malloc(bytes * heads), *v = malloc(bytes * heads);
    float *tmp = malloc(4 * hd);
    for (size_t h = 0; h < (size_t)heads; h++)
        for (int p = 0; p < depth; p++) {
            for (int i = 0; i < hd; i++) tmp[i] = rand() / (float)RAND_MAX - 0.5f;
            if (f16) qb_store_kv_f16(tmp, (uint16_t *)(k + h * bytes + p * row), hd); else qb_store_kv_q8_0(tmp, k + h * bytes + p * row, hd);
            for (int i = 0; i < hd; i++) tmp[i] = rand() / (float)RAND_MAX - 0.5f;
            if (f16) qb_store_kv_f16(tmp, (uint16_t *)(v + h * bytes + p * row), hd); else qb_store_kv_q8_0(tmp, v + h * bytes + p * row, hd);
        }
    float *q = malloc(4 * group * hd), *out = calloc(group * hd, 4), *scores = malloc(4 * (size_t)group * depth);
    for (int i = 0; i < group * hd; i++) q[i] = 2 * (rand() / (float)RAND_MAX - 0.5f);
    double best = 1e9;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        for (int h = 0; h < heads; h++) qb_attention_group(f16 ? QB_F16 : QB_Q8_0, q, k + h * bytes, v + h * bytes, 0, depth, hd, group, 0.125f, scores, out);
        double dt = now() - t0;
        if (dt < best) best = dt;
    }
    printf("hd %d group %d depth %d heads %d: %.2f us per head pass, %.2f ns per row\n", hd, group, depth, heads, best * 1e6 / heads, best * 1e9 / heads / depth);
    FILE *f = fopen(argv[6], "wb"); fwrite(out, 4, group * hd, f); fclose(f);
    return 0;
}
