// Attention alone, one thread, f16 cache of SPAN random rows for one KV head: HD GROUP SPAN
// REPS OUT [group]. By default qb_attention_rows over a SPAN-token prefill in chunks of 8
// (as TransformerSteps.attention calls it); with `group`, qb_attention_group for one decode
// position at depth SPAN. Prints the best of REPS passes' thread CPU time; writes the outputs.
#include "qb_isa_names.h"
#include "qb_kernel_list.h"
#include "qb_attention.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
    int hd = atoi(argv[1]), group = atoi(argv[2]), span = atoi(argv[3]), reps = atoi(argv[4]);
    srand(777);
    _Float16 *k = malloc(sizeof(_Float16) * span * hd), *v = malloc(sizeof(_Float16) * span * hd);
    for (int i = 0; i < span * hd; i++) { k[i] = (_Float16)(rand() / (float)RAND_MAX - 0.5f); v[i] = (_Float16)(rand() / (float)RAND_MAX - 0.5f); }
    int qdim = 8 * group * hd; // 8 kv heads
    float *q = malloc(4 * (size_t)span * qdim), *out = calloc((size_t)span * qdim, 4);
    for (size_t i = 0; i < (size_t)span * qdim; i++) q[i] = rand() / (float)RAND_MAX - 0.5f;
    float *scores = malloc(4 * (size_t)8 * group * span);
    double best = 1e9;
    int decode = argc > 6 && strcmp(argv[6], "group") == 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        if (decode) qb_attention_group(QB_F16, q, k, v, 0, span, hd, group, 0.125f, scores, out);
        else for (int b = 0; b < span / 8; b++)
            qb_attention_rows(QB_F16, q + (size_t)b * 8 * qdim, qdim, 8, k, v, b * 8 + 1, 0, hd, group, 0.125f, scores, out + (size_t)b * 8 * qdim, qdim);
        double dt = now() - t0;
        if (dt < best) best = dt;
    }
    double flops = 0;
    if (decode) flops = 4.0 * span * hd * group;
    else for (int p = 0; p < span; p++) flops += 4.0 * (p + 1) * hd * group;
    printf("%s hd %d group %d span %d: %.4f ms, %.1f GF/s\n", decode ? "group" : "rows", hd, group, span, best * 1e3, flops / best / 1e9);
    FILE *f = fopen(argv[5], "wb"); fwrite(out, 4, (size_t)span * qdim, f); fclose(f);
    return 0;
}
