// Decode of the four-row interleaved layout (argument 6: ggml type, Q4_0 by default), one
// thread: tnew (the tree after) vs tvar (before), one row (matvec_repacked) or n rows
// (matvec_repacked_rows), from memory (copies rotated) or from cache (copies = 1);
// alternating, medians; outputs compared bitwise.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include "qb_activation.h"
#include "qb_formats.h"
#define SET(p) void qb_##p##_repack(int32_t, const void *, void *, int64_t, int64_t, int64_t); int64_t qb_##p##_repack_bytes(int32_t, int64_t, int64_t); \
 void qb_##p##_quantize_q8a(const float *, qb_q8a *, int64_t); \
 void qb_##p##_q8a_offsets(const qb_q8a *, int64_t, int32_t, int32_t, int32_t *); \
 void qb_##p##_matvec_repacked_rows(int32_t, const void *, const qb_q8a *const *, float *const *, int64_t, int64_t, int64_t, int64_t); \
 void qb_##p##_matvec_repacked(int32_t, const void *, const qb_q8a *, float *, int64_t, int64_t, int64_t); \

SET(tnew) SET(tvar)
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9;}
static void *huge(size_t n){ n=(n+(2<<20)-1)/(2<<20)*(2<<20); void*p=aligned_alloc(2<<20,n); madvise(p,n,MADV_HUGEPAGE); memset(p,1,n); return p;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc, char **argv) {
  int rows = atoi(argv[1]), cols = atoi(argv[2]), N = atoi(argv[3]), copies = atoi(argv[4]), reps = atoi(argv[5]), type = argc > 6 ? atoi(argv[6]) : QB_Q4_0;
  int bb = type == QB_Q4_0 ? 18 : type == QB_Q4_1 ? 20 : type == QB_Q5_0 ? 22 : type == QB_Q5_1 ? 24 : 34;
  size_t b = (size_t)rows * (cols / 32) * bb, xb = qb_tnew_repack_bytes(type, rows, cols);
  uint8_t *w = huge(b); srand(3); for (size_t i = 0; i < b; i++) w[i] = rand();
  for (size_t k = 0; k < b / bb; k++) { _Float16 d = (rand() % 100) * 0.0001f; memcpy(w + k * bb, &d, 2); if (bb == 20 || bb == 24) memcpy(w + k * bb + 2, &d, 2); }
  uint8_t **m = malloc(sizeof(void*) * copies);
  for (int c = 0; c < copies; c++) { m[c] = huge(xb); qb_tnew_repack(type, w, m[c], 0, rows / 4, cols); }
  int nb = cols / 32;
  float *x = malloc((size_t)cols * 4 * N); for (size_t i = 0; i < (size_t)cols * N; i++) x[i] = rand() / (float)RAND_MAX - 0.5f;
  const qb_q8a *xs[16]; float *ys[2][16];
  for (int r = 0; r < N; r++) {
    qb_q8a *a = malloc(nb * sizeof(qb_q8a)); qb_tnew_quantize_q8a(x + (size_t)r * cols, a, cols); xs[r] = a;
    for (int k = 0; k < 2; k++) ys[k][r] = malloc(rows * 4);
  }
  double *t = malloc(sizeof(double) * 2 * reps); int cc = 0;
  for (int rep = 0; rep < reps; rep++)
    for (int s = 0; s < 2; s++) {
      const uint8_t *mm = m[cc++ % copies];
      double t0 = now();
      if (N == 1) { if (s == 0) qb_tvar_matvec_repacked(type, mm, xs[0], ys[0][0], 0, rows / 4, cols); else qb_tnew_matvec_repacked(type, mm, xs[0], ys[1][0], 0, rows / 4, cols); }
      else if (s == 0) qb_tvar_matvec_repacked_rows(type, mm, xs, ys[0], N, 0, rows / 4, cols);
      else qb_tnew_matvec_repacked_rows(type, mm, xs, ys[1], N, 0, rows / 4, cols);
      t[s * reps + rep] = now() - t0;
    }
  for (int s = 0; s < 2; s++) qsort(t + s * reps, reps, sizeof(double), cmp);
  for (int r = 0; r < N; r++) if (memcmp(ys[0][r], ys[1][r], rows * 4)) { printf("MISMATCH row %d\n", r); break; }
  double gb = xb / 1e9;
  printf("type %d %dx%d n=%d copies=%d: before %.3f ms (%.1f GB/s)  after %.3f ms (%.1f)  after/before time %.3f\n", type, rows, cols, N, copies,
    t[reps/2]*1e3, gb/t[reps/2], t[reps+reps/2]*1e3, gb/t[reps+reps/2], t[reps+reps/2]/t[reps/2]);
}
