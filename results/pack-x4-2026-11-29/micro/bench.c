// Packing against products at a prefill of N rows: a ROWS x COLS matrix in the decode layout
// (COPIES copies rotated, so the weights come from memory), four tiles packed, then their
// products with N activation rows, as Linear.matmulInt8 takes them; the two builds alternate
// (medians of REPS), with a plain read of the same bytes, and tiles and outputs compared bitwise.
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
 void qb_##p##_pack_tile_ggml(int32_t, int32_t, const void *, int64_t, int64_t, uint8_t *); \
 void qb_##p##_gemm_tile(const uint8_t *, int32_t, const qb_q8a *, const int32_t *, int64_t, int64_t, float *, int64_t); \
 void qb_##p##_q8a_offsets(const qb_q8a *, int64_t, int32_t, int32_t, int32_t *); int64_t qb_##p##_gemm_tile_block_bytes(int32_t);
SET(tcur) SET(tnew)
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9;}
static void *huge(size_t n){ n=(n+(2<<20)-1)/(2<<20)*(2<<20); void*p=aligned_alloc(2<<20,n); madvise(p,n,MADV_HUGEPAGE); memset(p,1,n); return p;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
static volatile uint64_t sink;
int main(int argc, char **argv) {
  int type = atoi(argv[1]), rows = atoi(argv[2]), cols = atoi(argv[3]), N = atoi(argv[4]), copies = atoi(argv[5]);
  int blockb = type == QB_Q4_0 ? 18 : type == QB_Q4_1 ? 20 : type == QB_Q5_0 ? 22 : type == QB_Q5_1 ? 24 : type == QB_Q8_0 ? 34 : 144, per = type == QB_Q4_K ? 256 : 32;
  int bits = type == QB_Q8_0 ? 8 : (type == QB_Q5_0 || type == QB_Q5_1) ? 5 : 4;
  size_t b = (size_t)rows * (cols / per) * blockb, xb = qb_tcur_repack_bytes(type, rows, cols);
  uint8_t *w = huge(b); srand(3); for (size_t i = 0; i < b; i++) w[i] = rand();
  for (size_t k = 0; k < b / blockb; k++) { _Float16 d = (rand() % 100) * 0.0001f; memcpy(w + k * blockb, &d, 2); if (type == QB_Q4_K) memcpy(w + k * blockb + 2, &d, 2); }
  uint8_t **m = malloc(sizeof(void*) * copies);
  int grp = type == QB_Q4_K ? 16 : 4;
  for (int c = 0; c < copies; c++) { m[c] = huge(xb); qb_tcur_repack(type, w, m[c], 0, rows / grp, cols); }
  int nb = cols / 32;
  float *x = malloc((size_t)cols * 4 * N); for (size_t i = 0; i < (size_t)cols * N; i++) x[i] = rand() / (float)RAND_MAX - 0.5f;
  qb_q8a *xa = malloc((size_t)nb * N * sizeof(qb_q8a)); for (int r = 0; r < N; r++) qb_tcur_quantize_q8a(x + (size_t)r * cols, xa + (size_t)r * nb, cols);
  int32_t *offs = malloc((size_t)nb * N * 4);
  for (int r = 0; r < N; r++) qb_tcur_q8a_offsets(xa + (size_t)r * nb, nb, 32, type == QB_Q8_0 ? -128 : type == QB_Q5_0 ? -16 : -8, offs + (size_t)r * nb);
  int32_t *op = (type == QB_Q4_K || type == QB_Q4_1 || type == QB_Q5_1) ? NULL : offs;
  size_t tb[2] = { (size_t)nb * qb_tcur_gemm_tile_block_bytes(bits), (size_t)nb * qb_tnew_gemm_tile_block_bytes(bits) };
  uint8_t *tile[2] = { huge(4 * tb[0]), huge(4 * tb[1]) };
  float *y[2] = { malloc((size_t)rows * N * 4), malloc((size_t)rows * N * 4) };
  int tiles = rows / 16, reps = atoi(argv[6]);
  double *tp = malloc(sizeof(double) * 2 * reps), *tg = malloc(sizeof(double) * 2 * reps), *tr = malloc(sizeof(double)*reps);
  int cc = 0;
  for (int rep = 0; rep < reps; rep++) {
    for (int s = 0; s < 2; s++) {
      double p = 0, g = 0;
      const uint8_t *mm = m[cc++ % copies];
      for (int t0i = 0; t0i < tiles; t0i += 4) {
        double t0 = now();
        for (int t = t0i; t < t0i + 4 && t < tiles; t++)
          if (s == 0) qb_tcur_pack_tile_ggml(type, 1, mm, 16 * t, cols, tile[0] + (t - t0i) * tb[0]); else qb_tnew_pack_tile_ggml(type, 1, mm, 16 * t, cols, tile[1] + (t - t0i) * tb[1]);
        double t1 = now();
        for (int t = t0i; t < t0i + 4 && t < tiles; t++)
          if (s == 0) qb_tcur_gemm_tile(tile[0] + (t - t0i) * tb[0], bits, xa, op, N, cols, y[0] + 16 * t, rows); else qb_tnew_gemm_tile(tile[1] + (t - t0i) * tb[1], bits, xa, op, N, cols, y[1] + 16 * t, rows);
        g += now() - t1; p += t1 - t0;
      }
      tp[s * reps + rep] = p; tg[s * reps + rep] = g;
    }
    { const uint64_t *q = (const uint64_t *)m[cc++ % copies]; double t0 = now(); uint64_t a = 0; for (size_t i = 0; i < xb / 8; i += 8) a += q[i] ^ q[i+1] ^ q[i+2] ^ q[i+3] ^ q[i+4] ^ q[i+5] ^ q[i+6] ^ q[i+7]; sink = a; tr[rep] = now() - t0; }
  }
  if (memcmp(y[0], y[1], (size_t)rows * N * 4)) printf("MISMATCH\n"); if (memcmp(tile[0], tile[1], tb[0] < tb[1] ? tb[0] : tb[1]) || tb[0] != tb[1]) printf("TILE MISMATCH\n");
  const char *names[] = {"cur", "new"};
  qsort(tr, reps, sizeof(double), cmp);
  printf("type %d %dx%d N=%d: read alone %.2f ms (%.1f GB/s)\n", type, rows, cols, N, tr[reps/2]*1e3, xb / tr[reps/2] / 1e9);
  for (int s = 0; s < 2; s++) { qsort(tp + s*reps, reps, sizeof(double), cmp); qsort(tg + s*reps, reps, sizeof(double), cmp);
    double p = tp[s*reps+reps/2], g = tg[s*reps+reps/2];
    printf("  %s pack %.2f ms (%.1f GB/s of weights)  gemm %.2f ms  pack share %.1f%%\n", names[s], p*1e3, xb/p/1e9, g*1e3, 100*p/(p+g)); }
}
