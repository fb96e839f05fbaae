// One-thread decode kernels streaming a large matrix of random blocks from memory: GB/s of
// weights read, best of REPS, for the avx512 and the avx2 set's kernel in one binary. Build
// (from the repository's root; set.c files as in README.md, QB_ISA avx512 and avx2):
//   clang -O3 -march=x86-64-v4 -mavx512vnni -mavx512bf16 -ffp-contract=on -ISources/CQBKernels/{kernels,include} -c s512.c
//   clang -O3 -march=x86-64-v3 -ffp-contract=on -ISources/CQBKernels/{kernels,include} -c s2.c
//   clang -O2 -march=x86-64-v3 -ISources/CQBKernels/include decode-stream.c s512.o s2.o -o decode-stream -lm
//   ./decode-stream q4_k 65536 2048 5      # also q4_0, q8_0, q6_k
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "qb_activation.h"
#include "qb_formats.h"
#define SET(p) \
  void qb_##p##_matvec_kquant(int32_t, const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t); \
  void qb_##p##_quantize_q8k(const float *, qb_q8k *, int64_t); \
  void qb_##p##_quantize_q8a(const float *, qb_q8a *, int64_t); \
  void qb_##p##_matvec_repacked(int32_t, const void *, const qb_q8a *, float *, int64_t, int64_t, int64_t);
SET(avx512) SET(avx2)
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc, char **argv) {
  const char *f = argv[1]; int rows = atoi(argv[2]), cols = atoi(argv[3]), reps = atoi(argv[4]);
  int type = !strcmp(f,"q4_k") ? QB_Q4_K : !strcmp(f,"q6_k") ? QB_Q6_K : !strcmp(f,"q8_0") ? QB_Q8_0 : QB_Q4_0;
  int kq = type == QB_Q4_K || type == QB_Q6_K;
  size_t bb = type == QB_Q4_K ? 144 : type == QB_Q6_K ? 210 : type == QB_Q8_0 ? 34 : 18, per = kq ? 256 : 32;
  size_t bytes = (size_t)rows * cols / per * bb;
  uint8_t *w = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  srand(3); for (size_t i = 0; i < bytes; i++) w[i] = rand();
  // sane f16 scales: every block's first two bytes (Q6_K: its last two) small
  for (size_t b = 0; b < bytes / bb; b++) { _Float16 h = 0.001f; memcpy(w + b * bb + (type == QB_Q6_K ? 208 : 0), &h, 2); if (type == QB_Q4_K) memcpy(w + b * bb + 2, &h, 2); }
  float *x = malloc(cols * 4); for (int i = 0; i < cols; i++) x[i] = rand() / (float)RAND_MAX - 0.5f;
  qb_q8k *xk = malloc(cols / 256 * sizeof(qb_q8k)); qb_q8a *xa = malloc(cols / 32 * sizeof(qb_q8a));
  qb_avx2_quantize_q8k(x, xk, cols); qb_avx2_quantize_q8a(x, xa, cols);
  float *y = malloc(rows * 4);
  // Q4_0/Q8_0 go through the four-row interleaved layout; random bytes serve as well as repacked ones here.
  for (int s = 0; s < 2; s++) {
    double best = 1e9;
    for (int r = 0; r < reps; r++) {
      double t0 = now();
      if (kq) (s ? qb_avx2_matvec_kquant : qb_avx512_matvec_kquant)(type, w, xk, y, 0, rows, cols);
      else (s ? qb_avx2_matvec_repacked : qb_avx512_matvec_repacked)(type, w, xa, y, 0, rows / 4, cols);
      double dt = now() - t0; if (dt < best) best = dt;
    }
    printf("%s %s %dx%d: %.1f GB/s (%.2f ms)\n", f, s ? "avx2" : "avx512", rows, cols, bytes / best / 1e9, best * 1e3);
  }
}
