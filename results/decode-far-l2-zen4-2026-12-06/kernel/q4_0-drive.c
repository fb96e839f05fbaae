// The avx512 Q4_0 prefill tiles (qb_gemm_tiles, the engine's) on one thread over a 2048 x COLS
// matrix and 512 activation rows, driven several ways: as Linear.forEachTileTask does (tasks of
// 4 tiles packed into a scratch, then 16 activation rows at a time over all 512), with 2, 8 or
// 16 tiles a task, 32 rows a block, the outputs first into a small local block ("y local"),
// and with one of the three streams kept hot (tiles packed once, the first 16 activation rows
// every block, every block's outputs in the first rows); "hot" keeps all three. GOP/s median,
// and the median [min, max] of the ratio to "hot" in the same pass. Any tree's avx512 unit
// (u.o as q4_0-hot.c builds it):
//   clang -O2 -march=x86-64-v4 -ITREE/Sources/CQBKernels/include q4_0-drive.c u.o -lm -o q4_0-drive
//   ./q4_0-drive 9
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <immintrin.h>
#include "qb_activation.h"
#include "qb_gemm.h"
void qb_avx512_pack_tile_ggml(int32_t type, int32_t interleaved, const void *w, int64_t r0, int64_t cols, uint8_t *tile);
void qb_avx512_gemm_tiles(const uint8_t *tile, int64_t tiles, int32_t bits, const qb_q8a *x, const int32_t *offs, int64_t count, int64_t cols, float *y, int64_t ystride);
void qb_avx512_quantize_q8a(const float *x, qb_q8a *y, int64_t n);
void qb_avx512_q8a_offsets(const qb_q8a *x, int64_t blocks, int32_t width, int32_t k, int32_t *offs);
int64_t qb_avx512_gemm_tile_block_bytes(int32_t bits);
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9;}
#ifndef NCOLS
#define NCOLS 2048
#endif
enum { COLS = NCOLS, ROWS = 2048, COUNT = 512 };
static uint8_t *w; static int64_t tb, nb; static qb_q8a *xq; static int32_t *offs; static float *y, *yl;
static uint8_t *scratch;
static void pack(int t0, int n) { for (int t = 0; t < n; t++) qb_avx512_pack_tile_ggml(QB_Q4_0, 0, w, 16 * (t0 + t), COLS, scratch + t * tb); }
// way: task tiles, block rows, local y
static void drive(int task, int block, int local, int hot) {
  const int nopack = hot & 2, actshot = hot & 4, yhot = hot & 8; if (hot & 14) hot = 0;
  for (int t0 = 0; t0 < ROWS / 16; t0 += task) {
    if ((!hot && !nopack) || t0 == 0) pack(t0, task);
    for (int c0 = 0; c0 < COUNT; c0 += block) {
      int c = hot || actshot ? 0 : c0;
      if (local) {
        qb_avx512_gemm_tiles(scratch, task, 4, xq + c * nb, offs + c * nb, block, COLS, yl, 16 * task);
        for (int r = 0; r < block; r++) memcpy(y + (int64_t)(c0 + r) * ROWS + 16 * t0, yl + r * 16 * task, 64 * task);
      } else
        qb_avx512_gemm_tiles(scratch, task, 4, xq + c * nb, offs + c * nb, block, COLS, y + (hot || yhot ? 0 : (int64_t)c0 * ROWS + 16 * t0), ROWS);
    }
  }
}
int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 7;
  srand(7); nb = COLS / 32;
  w = malloc((size_t)ROWS * nb * 18);
  for (int64_t i = 0; i < ROWS * nb; i++) { uint8_t *b = w + i * 18; for (int k = 2; k < 18; k++) b[k] = rand(); uint16_t d = 0x2000 + (rand() & 0x3ff); memcpy(b, &d, 2); }
  tb = nb * qb_avx512_gemm_tile_block_bytes(4);
  scratch = aligned_alloc(64, 16 * tb);
  float *x = malloc(sizeof(float) * COUNT * COLS); y = aligned_alloc(64, sizeof(float) * COUNT * ROWS); yl = aligned_alloc(64, 4 * 64 * 16 * 16);
  for (int64_t i = 0; i < (int64_t)COUNT * COLS; i++) x[i] = rand() / (float)RAND_MAX - 0.5f;
  xq = malloc(sizeof(qb_q8a) * COUNT * nb); offs = malloc(4 * COUNT * nb);
  for (int c = 0; c < COUNT; c++) { qb_avx512_quantize_q8a(x + (int64_t)c * COLS, xq + c * nb, COLS); qb_avx512_q8a_offsets(xq + c * nb, nb, 32, -8, offs + c * nb); }
  memset(y, 0, sizeof(float) * COUNT * ROWS);
  static const struct { const char *name; int task, block, local, hot; } W[] = {
    {"hot (4 tiles, first 16 rows)", 4, 16, 0, 1}, {"engine (4 tiles x 16 rows)", 4, 16, 0, 0}, {"8 tiles x 16 rows", 8, 16, 0, 0},
    {"16 tiles x 16 rows", 16, 16, 0, 0}, {"4 tiles x 32 rows", 4, 32, 0, 0}, {"4 tiles x 16, y local", 4, 16, 1, 0},
    {"8 tiles x 16, y local", 8, 16, 1, 0}, {"2 tiles x 16 rows", 2, 16, 0, 0}, {"engine, packed once", 4, 16, 0, 2}, {"engine, acts hot", 4, 16, 0, 4}, {"engine, y hot", 4, 16, 0, 8}};
  enum { NW = sizeof W / sizeof W[0] };
  double ops = 2.0 * ROWS * COLS * COUNT, g[NW][64], r[NW][64];
  for (int p = 0; p < reps; p++) for (int k = 0; k < NW; k++) { double t0 = now(); drive(W[k].task, W[k].block, W[k].local, W[k].hot); g[k][p] = ops / (now() - t0) / 1e9; }
  for (int k = 0; k < NW; k++) for (int p = 0; p < reps; p++) r[k][p] = g[k][p] / g[0][p];
  for (int k = 0; k < NW; k++) {
    for (int i = 0; i < reps; i++) for (int j = i + 1; j < reps; j++) { if (g[k][j] < g[k][i]) { double s = g[k][i]; g[k][i] = g[k][j]; g[k][j] = s; } if (r[k][j] < r[k][i]) { double s = r[k][i]; r[k][i] = r[k][j]; r[k][j] = s; } }
    printf("%-30s %6.1f GOP/s  / hot %.3f [%.3f, %.3f]\n", W[k].name, g[k][reps / 2], r[k][reps / 2], r[k][0], r[k][reps - 1]);
  }
  return 0;
}
