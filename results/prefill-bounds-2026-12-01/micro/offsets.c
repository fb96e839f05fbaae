// The activations' quantizing for prefill alone, one thread: qb_quantize_q8a and then
// qb_q8a_offsets (width 32, k = -8) over M = 512 rows of K = 8192 random values (seed 7),
// the shape of the down product's input at pp512; five passes, wall time each. Built
// against the avx512 unit of 1ad48df (./base) and of this tree (offsets.sh).
#include "qb_isa_names.h"
#include "qb_kernel_list.h"
#include "qb_activation.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(void) {
    int M = 512, K = 8192, nb = K / 32;
    float *x = malloc((size_t)M * K * 4);
    srand(7);
    for (size_t i = 0; i < (size_t)M * K; i++) x[i] = rand() / (float)RAND_MAX - 0.5f;
    qb_q8a *y = malloc((size_t)M * nb * sizeof(qb_q8a));
    int32_t *o = malloc((size_t)M * nb * 4);
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now();
        for (int c = 0; c < M; c++) qb_quantize_q8a(x + (size_t)c * K, y + (size_t)c * nb, K);
        double t1 = now();
        for (int c = 0; c < M; c++) qb_q8a_offsets(y + (size_t)c * nb, nb, 32, -8, o + (size_t)c * nb);
        double t2 = now();
        long long sum = 0;
        for (size_t i = 0; i < (size_t)M * nb; i++) sum += o[i];
        printf("seed 7: quantize %.2f ms, offsets %.2f ms (checksum %lld)\n", (t1 - t0) * 1e3, (t2 - t1) * 1e3, sum);
    }
    return 0;
}
