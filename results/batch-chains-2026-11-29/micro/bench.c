// 8-row Q4_0 tile decode: rows x cols matrix, R activation rows, median time.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include "qb_activation.h"
#include "qb_formats.h"
#define SET(p) void qb_##p##_matvec_q4_0x16(const void *, const qb_q8a *const *, const int32_t *const *, float *const *, int64_t, int64_t, int64_t, int64_t); \
 void qb_##p##_repack(int32_t, const void *, void *, int64_t, int64_t, int64_t); int64_t qb_##p##_repack_bytes(int32_t, int64_t, int64_t); \
 void qb_##p##_quantize_q8a(const float *, qb_q8a *, int64_t);
SET(tcur) SET(tnew)
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9;}
static void *huge(size_t n){ n=(n+(2<<20)-1)/(2<<20)*(2<<20); void*p=aligned_alloc(2<<20,n); madvise(p,n,MADV_HUGEPAGE); memset(p,1,n); return p;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc, char **argv) {
  int rows = atoi(argv[1]), cols = atoi(argv[2]), R = atoi(argv[3]), reps = atoi(argv[4]);
  size_t b = (size_t)rows * (cols / 32) * 18, xb = qb_tcur_repack_bytes(QB_Q4_0, rows, cols);
  uint8_t *w = huge(b); srand(3); for (size_t i = 0; i < b; i++) w[i] = rand();
  for (size_t k = 0; k < b / 18; k++) { _Float16 d = (rand() % 100) * 0.0001f; memcpy(w + k * 18, &d, 2); }
  uint8_t *m = huge(xb); qb_tcur_repack(QB_Q4_0, w, m, 0, rows / 4, cols);
  const qb_q8a *xs[8]; const int32_t *offs[8]; float *ys[8], *ys2[8];
  for (int r = 0; r < 8; r++) {
    float *x = malloc(cols * 4); for (int i = 0; i < cols; i++) x[i] = rand() / (float)RAND_MAX - 0.5f;
    qb_q8a *xa = malloc(cols / 32 * sizeof(qb_q8a)); qb_tcur_quantize_q8a(x, xa, cols); xs[r] = xa;
    int32_t *off = malloc(cols / 32 * 4); for (int i = 0; i < cols/32; i++) off[i] = rand() % 1000 - 500; offs[r] = off;
    ys[r] = malloc(rows * 4); ys2[r] = malloc(rows * 4);
  }
  double *t = malloc(sizeof(double) * 2 * reps);
  for (int r = 0; r < reps; r++) for (int s = 0; s < 2; s++) {
      double t0 = now();
      if (s == 0) qb_tcur_matvec_q4_0x16(m, xs, offs, ys, R, 0, rows / 4, cols);
      else qb_tnew_matvec_q4_0x16(m, xs, offs, ys2, R, 0, rows / 4, cols);
      t[s * reps + r] = now() - t0;
  }
  for (int r = 0; r < R; r++) if (memcmp(ys[r], ys2[r], rows * 4)) { printf("MISMATCH row %d\n", r); }
  const char *names[] = {"cur", "new"};
  double ops = (double)rows * cols * R / 64;
  for (int s = 0; s < 2; s++) { qsort(t + s * reps, reps, sizeof(double), cmp); double md = t[s * reps + reps / 2];
    printf("%s R=%d median %8.1f us  %.2f G vpdpbusd/s  %.1f GB/s\n", names[s], R, md*1e6, ops/md/1e9, xb/md/1e9); }
}
