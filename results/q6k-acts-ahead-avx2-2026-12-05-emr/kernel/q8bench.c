// Times the avx2 set's Q8_0 prefill tiles (qb_gemm_tiles, 8-bit) as the engine calls them: 4 tiles of
// 16 rows x COLS against 16 activation rows, from L2; BASE and NEW builds (build.sh) in turn,
// medians and bests of the GOP/s, against the int8 peak probe of the same process. Random
// Q8_0 blocks (seeded) packed by the set's own packer; the outputs of the two compared.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "qb_activation.h"
#include "qb_gemm.h"
void qb_avx2_pack_tile_ggml(int32_t type, int32_t interleaved, const void *w, int64_t r0, int64_t cols, uint8_t *tile);
void qb_avx2_gemm_tiles(const uint8_t *tile, int64_t tiles, int32_t bits, const qb_q8a *x, const int32_t *offs, int64_t count, int64_t cols, float *y, int64_t ystride);
void qb_avx2_quantize_q8a(const float *x, qb_q8a *y, int64_t n);
int64_t qb_avx2_gemm_tile_block_bytes(int32_t bits);
double qb_avx2_int8_peak_kernel(int64_t iterations, int32_t *sink);
void qb_base_gemm_tiles(const uint8_t *tile, int64_t tiles, int32_t bits, const qb_q8a *x, const int32_t *offs, int64_t count, int64_t cols, float *y, int64_t ystride);
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9;}
enum { COLS = 8192, ROWS = 64, COUNT = 16 };
int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 9;
  srand(7);
  size_t sbytes = 34, nsb = COLS / 32;  // block_q8_0: d(f16) qs[32]
  uint8_t *w = malloc(ROWS * nsb * sbytes);
  for (size_t i = 0; i < ROWS * nsb; i++) {
    uint8_t *b = w + i * sbytes;
    for (int k = 2; k < 34; k++) b[k] = (uint8_t)(rand() % 255 - 127);
    uint16_t d = 0x2000 + (rand() & 0x3ff); memcpy(b, &d, 2);
  }
  int64_t bb = qb_avx2_gemm_tile_block_bytes(8), tb = bb * (COLS / 32);
  uint8_t *tile = aligned_alloc(64, ROWS / 16 * tb);
  for (int t = 0; t < ROWS / 16; t++) qb_avx2_pack_tile_ggml(QB_Q8_0, 0, w, 16 * t, COLS, tile + t * tb);
  float *x = malloc(sizeof(float) * COUNT * COLS), *y = malloc(sizeof(float) * COUNT * ROWS), *y2 = malloc(sizeof(float) * COUNT * ROWS);
  for (int i = 0; i < COUNT * COLS; i++) x[i] = rand() / (float)RAND_MAX - 0.5f;
  qb_q8a *xq = malloc(sizeof(qb_q8a) * COUNT * COLS / 32);
  for (int c = 0; c < COUNT; c++) qb_avx2_quantize_q8a(x + c * COLS, xq + c * COLS / 32, COLS);
  double ops = 2.0 * ROWS * COLS * COUNT, best[2] = {1e9, 1e9}, med[2][64];
  for (int r = 0; r < reps; r++)
    for (int k = 0; k < 2; k++) {
      double t0 = now();
      for (int it = 0; it < 20; it++) (k ? qb_avx2_gemm_tiles : qb_base_gemm_tiles)(tile, ROWS / 16, 8, xq, NULL, COUNT, COLS, k ? y : y2, ROWS);
      double dt = (now() - t0) / 20; med[k][r] = dt; if (dt < best[k]) best[k] = dt;
    }
  int bad = 0; for (int i = 0; i < COUNT * ROWS; i++) bad += y[i] != y2[i];
  int32_t sink[8];
  double t0 = now(); double pk = qb_avx2_int8_peak_kernel(20000000, sink); pk = pk / (now() - t0) / 1e9;
  for (int k = 0; k < 2; k++) { // median
    for (int i = 0; i < reps; i++) for (int j = i + 1; j < reps; j++) if (med[k][j] < med[k][i]) { double s = med[k][i]; med[k][i] = med[k][j]; med[k][j] = s; }
    printf("%s: median %.1f GOP/s, best %.1f GOP/s (%.0f%% of the int8 peak %.1f)\n", k ? "NEW " : "BASE", ops / med[k][reps / 2] / 1e9, ops / best[k] / 1e9, 100 * ops / med[k][reps / 2] / 1e9 / pk, pk);
  }
  printf("outputs differing: %d of %d\n", bad, COUNT * ROWS);
}
