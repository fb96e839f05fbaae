// One-thread Q4_K decode kernels, the plain rows (qb_matvec_kquant) against the 16-row decode
// layout (qb_matvec_q4_k_x16), on a matrix of random blocks: GB/s of the plain bytes (the
// layout's are the same count), best of REPS, avx512 and avx2 sets in one binary. A matrix
// of 512 rows stays in cache (the kernels' compute rate); 65536 x 2048 and 16384 x 8192
// stream from memory. Build from the repository's root (s512.c / s2.c: `#define QB_ISA
// avx512` (or avx2) then `#include "qb_isa_unit.h"`):
//   clang -O3 -march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512 -ffp-contract=on -ISources/CQBKernels/{kernels,include} -c s512.c
//   clang -O3 -march=x86-64-v3 -ffp-contract=on -ISources/CQBKernels/{kernels,include} -c s2.c
//   clang -O2 -march=x86-64-v3 -ISources/CQBKernels/include decode-stream-x16.c s512.o s2.o -o decode-stream-x16 -lm
//   ./decode-stream-x16 512 2048 2000; ./decode-stream-x16 65536 2048 10; ./decode-stream-x16 16384 8192 10
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include "qb_activation.h"
#include "qb_formats.h"
#define SET(p) \
  void qb_##p##_matvec_kquant(int32_t, const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t); \
  void qb_##p##_matvec_q4_k_x16(const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t); \
  void qb_##p##_repack(int32_t, const void *, void *, int64_t, int64_t, int64_t); \
  int64_t qb_##p##_repack_bytes(int32_t, int64_t, int64_t); \
  void qb_##p##_quantize_q8k(const float *, qb_q8k *, int64_t);
SET(avx512) SET(avx2)
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc, char **argv) {
  int rows = atoi(argv[1]), cols = atoi(argv[2]), reps = atoi(argv[3]);
  size_t bb = 144, nb = cols / 256, bytes = (size_t)rows * nb * bb, xb = qb_avx2_repack_bytes(QB_Q4_K, rows, cols);
  uint8_t *w = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096), *wx = aligned_alloc(4096, (xb + 4095) / 4096 * 4096);
  srand(3); for (size_t i = 0; i < bytes; i++) w[i] = rand();
  for (size_t b = 0; b < bytes / bb; b++) { _Float16 h = (rand() % 100) * 0.0001f; memcpy(w + b * bb, &h, 2); h = (rand()%100) * 0.00001f; memcpy(w + b * bb + 2, &h, 2); }
  qb_avx2_repack(QB_Q4_K, w, wx, 0, rows / 16, cols);
  float *x = malloc(cols * 4); for (int i = 0; i < cols; i++) x[i] = rand() / (float)RAND_MAX - 0.5f;
  qb_q8k *xk = malloc(nb * sizeof(qb_q8k)); qb_avx2_quantize_q8k(x, xk, cols);
  float *y = malloc(rows * 4);
  double best[4] = {1e9, 1e9, 1e9, 1e9};
  for (int r = 0; r < reps; r++) for (int s = 0; s < 4; s++) {
      double t0 = now();
      switch (s) {
      case 0: qb_avx512_matvec_kquant(QB_Q4_K, w, xk, y, 0, rows, cols); break;
      case 1: qb_avx512_matvec_q4_k_x16(wx, xk, y, 0, rows / 16, cols); break;
      case 2: qb_avx2_matvec_kquant(QB_Q4_K, w, xk, y, 0, rows, cols); break;
      case 3: qb_avx2_matvec_q4_k_x16(wx, xk, y, 0, rows / 16, cols); break;
      }
      double dt = now() - t0; if (dt < best[s]) best[s] = dt;
    }
  printf("%dx%d GB/s of the plain bytes: avx512 rows %.1f, x16 %.1f (%.2fx); avx2 rows %.1f, x16 %.1f (%.2fx)\n", rows, cols,
         bytes / best[0] / 1e9, bytes / best[1] / 1e9, best[0] / best[1], bytes / best[2] / 1e9, bytes / best[3] / 1e9, best[2] / best[3]);
}
