// The avx512 Q4_K prefill tiles (qb_gemm_tiles_q8s) on one thread, six ways over one ROWS x COLS
// matrix and COUNT activation rows: "engine" as Linear.forEachTileTask drives them (tasks of 4 tiles
// copied into a scratch, then 16 activation rows at a time over all COUNT), "nocopy" reading each
// task's tiles where they were packed, "y in L2" as nocopy with every task's outputs in the first
// task's columns, "acts hot" as nocopy with every block the first 16 activation rows, "tiles hot"
// as nocopy with every task the first task's tiles, "hot" the first task's first 16 rows as many
// times. GOP/s against the int8 peak probe. Built against a tree's avx512 unit (n5.o as
// ../../q4k-tuning-zen4-2026-12-05/kernel/runc.sh makes it):
//   clang -O2 -march=x86-64-v4 -DNCOLS=2048 -Inew/Sources/CQBKernels/include q4engine.c n5.o -lm
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
int32_t qb_avx512_set_q4k_dpwssd(int32_t on);
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9;}
#ifndef NCOLS
#define NCOLS 2048
#endif
enum { COLS = NCOLS, ROWS = 2048, COUNT = 512, TASK = 4, BLOCK = 16 };
int main(int argc, char **argv) {
  qb_avx512_set_q4k_dpwssd(0);
  int reps = argc > 1 ? atoi(argv[1]) : 5;
  srand(7);
  size_t sbytes = 144, nsb = COLS / 256;
  uint8_t *w = malloc(ROWS * nsb * sbytes);
  for (size_t i = 0; i < ROWS * nsb; i++) {
    uint8_t *b = w + i * sbytes;
    for (int k = 4; k < 144; k++) b[k] = rand();
    uint16_t d = 0x2000 + (rand() & 0x3ff); memcpy(b, &d, 2); d = 0x2000 + (rand() & 0x3ff); memcpy(b + 2, &d, 2);
  }
  int64_t tb = 6528 * (COLS / 256);
  uint8_t *tiles = aligned_alloc(64, ROWS / 16 * tb), *scratch = aligned_alloc(64, TASK * tb);
  for (int t = 0; t < ROWS / 16; t++) qb_avx512_pack_tile_ggml(QB_Q4_K, 0, w, 16 * t, COLS, tiles + t * tb);
  float *x = malloc(sizeof(float) * COUNT * COLS), *y = malloc(sizeof(float) * COUNT * ROWS);
  for (int i = 0; i < COUNT * COLS; i++) x[i] = rand() / (float)RAND_MAX - 0.5f;
  qb_q8s *xq = malloc(sizeof(qb_q8s) * COUNT * nsb);
  for (int c = 0; c < COUNT; c++) qb_avx512_quantize_q8s(x + c * COLS, xq + c * nsb, COLS);
  // Each way: which of the tiles, the activation rows and the outputs stay those of the first task
  // and column block, and whether a task's tiles are first copied into the scratch.
  enum { COPY = 1, TILES_HOT = 2, ACTS_HOT = 4, Y_FIRST_COLUMNS = 8, Y_FIRST_ROWS = 16 };
  static const struct { const char *name; int how; } ways[] = {
    {"engine", COPY},  // every task's tiles copied into the scratch (as packing writes them)
    {"hot   ", TILES_HOT | ACTS_HOT | Y_FIRST_COLUMNS | Y_FIRST_ROWS},
    {"nocopy", 0},     // each task's tiles read where they were packed
    {"y in L2", Y_FIRST_COLUMNS},
    {"acts hot", ACTS_HOT},
    {"tiles hot", TILES_HOT},
  };
  enum { WAYS = sizeof ways / sizeof ways[0] };
  double ops = 2.0 * ROWS * COLS * COUNT, m[WAYS][32];
  for (int r = 0; r < reps; r++)
    for (int k = 0; k < WAYS; k++) {
      const int how = ways[k].how;
      double t0 = now();
      for (int task = 0; task < ROWS / 16 / TASK; task++) {
        const uint8_t *tp = tiles + (how & TILES_HOT ? 0 : (int64_t)task * TASK * tb);
        if (how & COPY) tp = memcpy(scratch, tp, TASK * tb);
        for (int c0 = 0; c0 < COUNT; c0 += BLOCK)
          qb_avx512_gemm_tiles_q8s(tp, TASK, xq + (how & ACTS_HOT ? 0 : c0 * nsb), BLOCK, COLS,
                                   y + (how & Y_FIRST_ROWS ? 0 : (int64_t)c0 * ROWS) + (how & Y_FIRST_COLUMNS ? 0 : task * TASK * 16), ROWS);
      }
      m[k][r] = now() - t0;
    }
  int32_t sink[8];
  double t0 = now(); double pk = qb_avx512_int8_peak_kernel(20000000, sink); pk = pk / (now() - t0) / 1e9;
  for (int k = 0; k < WAYS; k++) {
    for (int i = 0; i < reps; i++) for (int j = i + 1; j < reps; j++) if (m[k][j] < m[k][i]) { double s = m[k][i]; m[k][i] = m[k][j]; m[k][j] = s; }
    printf("%s: median %.1f GOP/s (%.0f%% of the int8 peak %.1f), best %.1f\n", ways[k].name, ops / m[k][reps / 2] / 1e9, 100 * ops / m[k][reps / 2] / 1e9 / pk, pk, ops / m[k][0] / 1e9);
  }
}
