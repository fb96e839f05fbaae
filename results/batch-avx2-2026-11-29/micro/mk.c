// Decode of Q4_K in the sixteen-row layout or of Q6_K rows (argument 6: 12 or 14), one
// thread: tnew (the tree after) vs tvar (before), one row (matvec_q4_k_x16, matvec_kquant) or
// n rows (the _rows kernels); alternating, medians; outputs compared bitwise.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include "qb_activation.h"
#include "qb_formats.h"
#define SET(p) void qb_##p##_repack(int32_t, const void *, void *, int64_t, int64_t, int64_t); int64_t qb_##p##_repack_bytes(int32_t, int64_t, int64_t); \
 void qb_##p##_quantize_q8k(const float *, qb_q8k *, int64_t); \
 void qb_##p##_matvec_q4_k_x16(const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t); \
 void qb_##p##_matvec_q4_k_x16_rows(const void *, const qb_q8k *const *, float *const *, int64_t, int64_t, int64_t, int64_t); \
 void qb_##p##_matvec_kquant(int32_t, const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t); \
 void qb_##p##_matvec_kquant_rows(int32_t, const void *, const qb_q8k *const *, float *const *, int64_t, int64_t, int64_t, int64_t);
SET(tnew) SET(tvar)
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9;}
static void *huge(size_t n){ n=(n+(2<<20)-1)/(2<<20)*(2<<20); void*p=aligned_alloc(2<<20,n); madvise(p,n,MADV_HUGEPAGE); memset(p,1,n); return p;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc, char **argv) {
  int rows = atoi(argv[1]), cols = atoi(argv[2]), N = atoi(argv[3]), copies = atoi(argv[4]), reps = atoi(argv[5]), type = atoi(argv[6]);
  const int q6 = type == QB_Q6_K, bb = q6 ? 210 : 144;
  size_t b = (size_t)rows * (cols / 256) * bb, xb = q6 ? b : (size_t)qb_tnew_repack_bytes(QB_Q4_K, rows, cols);
  uint8_t *w = huge(b); srand(3); for (size_t i = 0; i < b; i++) w[i] = rand();
  for (size_t k = 0; k < b / bb; k++) { _Float16 d = (rand() % 100) * 0.0001f; if (q6) memcpy(w + k * bb + 208, &d, 2); else { memcpy(w + k * bb, &d, 2); memcpy(w + k * bb + 2, &d, 2); } }
  uint8_t **m = malloc(sizeof(void*) * copies);
  for (int c = 0; c < copies; c++) { m[c] = huge(xb); if (q6) memcpy(m[c], w, b); else qb_tnew_repack(QB_Q4_K, w, m[c], 0, rows / 16, cols); }
  int nb = cols / 256;
  float *x = malloc((size_t)cols * 4 * N); for (size_t i = 0; i < (size_t)cols * N; i++) x[i] = rand() / (float)RAND_MAX - 0.5f;
  const qb_q8k *xs[16]; float *ys[2][16];
  for (int r = 0; r < N; r++) {
    qb_q8k *a = malloc(nb * sizeof(qb_q8k)); qb_tnew_quantize_q8k(x + (size_t)r * cols, a, cols); xs[r] = a;
    for (int k = 0; k < 2; k++) ys[k][r] = malloc(rows * 4);
  }
  double *t = malloc(sizeof(double) * 2 * reps); int cc = 0;
  for (int rep = 0; rep < reps; rep++)
    for (int s = 0; s < 2; s++) {
      const uint8_t *mm = m[cc++ % copies];
      double t0 = now();
      if (q6) {
        if (N == 1) { if (s == 0) qb_tvar_matvec_kquant(type, mm, xs[0], ys[0][0], 0, rows, cols); else qb_tnew_matvec_kquant(type, mm, xs[0], ys[1][0], 0, rows, cols); }
        else { if (s == 0) qb_tvar_matvec_kquant_rows(type, mm, xs, ys[0], N, 0, rows, cols); else qb_tnew_matvec_kquant_rows(type, mm, xs, ys[1], N, 0, rows, cols); }
      } else if (N == 1) { if (s == 0) qb_tvar_matvec_q4_k_x16(mm, xs[0], ys[0][0], 0, rows / 16, cols); else qb_tnew_matvec_q4_k_x16(mm, xs[0], ys[1][0], 0, rows / 16, cols); }
      else { if (s == 0) qb_tvar_matvec_q4_k_x16_rows(mm, xs, ys[0], N, 0, rows / 16, cols); else qb_tnew_matvec_q4_k_x16_rows(mm, xs, ys[1], N, 0, rows / 16, cols); }
      t[s * reps + rep] = now() - t0;
    }
  for (int s = 0; s < 2; s++) qsort(t + s * reps, reps, sizeof(double), cmp);
  for (int r = 0; r < N; r++) if (memcmp(ys[0][r], ys[1][r], rows * 4)) { printf("MISMATCH row %d\n", r); break; }
  double gb = xb / 1e9;
  printf("%s %dx%d n=%d copies=%d: before %.3f ms (%.1f GB/s)  after %.3f ms (%.1f)  after/before time %.3f\n", q6 ? "Q6_K rows" : "Q4_K x16", rows, cols, N, copies,
    t[reps/2]*1e3, gb/t[reps/2], t[reps+reps/2]*1e3, gb/t[reps+reps/2], t[reps+reps/2]/t[reps/2]);
}
