// Times the avx512 set's Q4_K prefill tiles (qb_gemm_tiles_q8s) as the engine calls them: 4 tiles
// of 16 rows x COLS (NCOLS, 8192 unless given) against 16 activation rows; BASE and NEW builds
// (run.sh, or ../../q4k-tuning-zen4-2026-12-05/kernel/runc.sh) in turn, medians and bests of the
// GOP/s, against the int8 peak probe of the same process. Random Q4_K super-blocks (seeded) packed
// by the set's own packer; the outputs of the two compared. Arguments: repetitions (9 unless
// given), then BASE's and NEW's qb_set_q4k_dpwssd setting (1, the vpdpwssd way Intel's CPUs take,
// unless given; run.sh gives none).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "qb_activation.h"
#include "qb_gemm.h"
void qb_avx512_pack_tile_ggml(int32_t type, int32_t interleaved, const void *w, int64_t r0, int64_t cols, uint8_t *tile);
void qb_avx512_gemm_tiles_q8s(const uint8_t *tile, int64_t tiles, const qb_q8s *x, int64_t count, int64_t cols, float *y, int64_t ystride);
void qb_avx512_quantize_q8s(const float *x, qb_q8s *y, int64_t n);

double qb_avx512_int8_peak_kernel(int64_t iterations, int32_t *sink);
void qb_avx512b_gemm_tiles_q8s(const uint8_t *tile, int64_t tiles, const qb_q8s *x, int64_t count, int64_t cols, float *y, int64_t ystride);
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9;}
#ifndef NCOLS
#define NCOLS 8192
#endif
enum { COLS = NCOLS, ROWS = 64, COUNT = 16 };
int32_t qb_avx512_set_q4k_dpwssd(int32_t on);
int32_t qb_avx512b_set_q4k_dpwssd(int32_t on);
int main(int argc, char **argv) {
  qb_avx512b_set_q4k_dpwssd(argc > 2 ? atoi(argv[2]) : 1); qb_avx512_set_q4k_dpwssd(argc > 3 ? atoi(argv[3]) : 1);
  int reps = argc > 1 ? atoi(argv[1]) : 9;
  srand(7);
  size_t sbytes = 144, nsb = COLS / 256;  // block_q4_K: d dmin (f16) scales[12] qs[128]
  uint8_t *w = malloc(ROWS * nsb * sbytes);
  for (size_t i = 0; i < ROWS * nsb; i++) {
    uint8_t *b = w + i * sbytes;
    for (int k = 4; k < 144; k++) b[k] = rand();
    uint16_t d = 0x2000 + (rand() & 0x3ff); memcpy(b, &d, 2); d = 0x2000 + (rand() & 0x3ff); memcpy(b + 2, &d, 2);
  }
  int64_t tb = 6528 * (COLS / 256);
  uint8_t *tile = aligned_alloc(64, ROWS / 16 * tb);
  for (int t = 0; t < ROWS / 16; t++) qb_avx512_pack_tile_ggml(QB_Q4_K, 0, w, 16 * t, COLS, tile + t * tb);
  float *x = malloc(sizeof(float) * COUNT * COLS), *y = malloc(sizeof(float) * COUNT * ROWS), *y2 = malloc(sizeof(float) * COUNT * ROWS);
  for (int i = 0; i < COUNT * COLS; i++) x[i] = rand() / (float)RAND_MAX - 0.5f;
  qb_q8s *xq = malloc(sizeof(qb_q8s) * COUNT * COLS / 256);
  for (int c = 0; c < COUNT; c++) qb_avx512_quantize_q8s(x + c * COLS, xq + c * COLS / 256, COLS);
  double ops = 2.0 * ROWS * COLS * COUNT, best[2] = {1e9, 1e9}, med[2][64];
  for (int r = 0; r < reps; r++)
    for (int k = 0; k < 2; k++) {
      double t0 = now();
      for (int it = 0; it < 20; it++) (k ? qb_avx512_gemm_tiles_q8s : qb_avx512b_gemm_tiles_q8s)(tile, ROWS / 16, xq, COUNT, COLS, k ? y : y2, ROWS);
      double dt = (now() - t0) / 20; med[k][r] = dt; if (dt < best[k]) best[k] = dt;
    }
  int bad = 0; for (int i = 0; i < COUNT * ROWS; i++) bad += y[i] != y2[i];
  int32_t sink[8];
  double t0 = now(); double pk = qb_avx512_int8_peak_kernel(20000000, sink); pk = pk / (now() - t0) / 1e9;
  for (int k = 0; k < 2; k++) { // median
    for (int i = 0; i < reps; i++) for (int j = i + 1; j < reps; j++) if (med[k][j] < med[k][i]) { double s = med[k][i]; med[k][i] = med[k][j]; med[k][j] = s; }
    printf("%s: median %.1f GOP/s, best %.1f GOP/s (%.0f%% of the int8 peak %.1f)\n", k ? "NEW " : "BASE", ops / med[k][reps / 2] / 1e9, ops / best[k] / 1e9, 100 * ops / med[k][reps / 2] / 1e9 / pk, pk);
  }
  printf("outputs differing: %d of %d\n", bad, COUNT * ROWS);
}
