// One-thread Q4_K decode kernels on random blocks: the plain rows (qb_matvec_kquant), the
// 16-row decode layout (qb_matvec_q4_k_x16) and Q6_K rows, GB/s of the bytes read, best of
// REPS, avx512 and avx2 sets in one binary. Buffers on 2 MiB-aligned MADV_HUGEPAGE memory, as
// the engine keeps its weights (4 KiB pages misled by up to 40%). 512 x 2048 stays in cache;
// 131072 x 4096 (302 MB of Q4_K) is larger than this CPU's 260 MiB L3. From the repository's
// root, with s512.c / s2.c holding `#define QB_ISA avx512` (or avx2) and `#include "qb_isa_unit.h"`:
//   I="-ISources/CQBKernels/kernels -ISources/CQBKernels/include"
//   clang -O3 -march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512 -ffp-contract=on $I -c s512.c
//   clang -O3 -march=x86-64-v3 -ffp-contract=on $I -c s2.c
//   clang -O2 -march=x86-64-v3 -ISources/CQBKernels/include decode-stream-q4k.c s512.o s2.o -o decode-stream-q4k
//   ./decode-stream-q4k 512 2048 2000; ./decode-stream-q4k 131072 4096 5
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
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
static void *huge(size_t n){ n=(n+(2<<20)-1)/(2<<20)*(2<<20); void*p=aligned_alloc(2<<20,n); madvise(p,n,MADV_HUGEPAGE); memset(p,1,n); return p;}
int main(int argc, char **argv) {
  int rows = atoi(argv[1]), cols = atoi(argv[2]), reps = atoi(argv[3]);
  size_t nb = cols / 256, b4 = (size_t)rows * nb * 144, b6 = (size_t)rows * nb * 210, xb = qb_avx2_repack_bytes(QB_Q4_K, rows, cols);
  uint8_t *w = huge(b4), *wx = huge(xb), *w6 = huge(b6);
  srand(3); for (size_t i = 0; i < b4; i++) w[i] = rand(); for (size_t i = 0; i < b6; i++) w6[i] = rand();
  for (size_t b = 0; b < b4 / 144; b++) { _Float16 h = (rand() % 100) * 0.0001f; memcpy(w + b * 144, &h, 2); h = (rand()%100) * 0.00001f; memcpy(w + b * 144 + 2, &h, 2); }
  for (size_t b = 0; b < b6 / 210; b++) { _Float16 h = (rand() % 100) * 0.0001f; memcpy(w6 + b * 210 + 208, &h, 2); }
  qb_avx2_repack(QB_Q4_K, w, wx, 0, rows / 16, cols);
  float *x = malloc(cols * 4); for (int i = 0; i < cols; i++) x[i] = rand() / (float)RAND_MAX - 0.5f;
  qb_q8k *xk = malloc(nb * sizeof(qb_q8k)); qb_avx2_quantize_q8k(x, xk, cols);
  float *y = malloc(rows * 4);
  double best[6] = {1e9, 1e9, 1e9, 1e9, 1e9, 1e9};
  for (int r = 0; r < reps; r++) for (int s = 0; s < 6; s++) {
      double t0 = now();
      switch (s) {
      case 0: qb_avx512_matvec_kquant(QB_Q4_K, w, xk, y, 0, rows, cols); break;
      case 1: qb_avx512_matvec_q4_k_x16(wx, xk, y, 0, rows / 16, cols); break;
      case 2: qb_avx512_matvec_kquant(QB_Q6_K, w6, xk, y, 0, rows, cols); break;
      case 3: qb_avx2_matvec_kquant(QB_Q4_K, w, xk, y, 0, rows, cols); break;
      case 4: qb_avx2_matvec_q4_k_x16(wx, xk, y, 0, rows / 16, cols); break;
      case 5: qb_avx2_matvec_kquant(QB_Q6_K, w6, xk, y, 0, rows, cols); break;
      }
      double dt = now() - t0; if (dt < best[s]) best[s] = dt;
    }
  printf("%dx%d GB/s: avx512 q4k rows %.1f x16 %.1f q6k rows %.1f | avx2 q4k rows %.1f x16 %.1f q6k rows %.1f\n", rows, cols,
         b4/best[0]/1e9, b4/best[1]/1e9, b6/best[2]/1e9, b4/best[3]/1e9, b4/best[4]/1e9, b6/best[5]/1e9);
}
