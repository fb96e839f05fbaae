// The avx512 Q4_0 prefill tiles in L2 on one thread: TASK (4) tiles of a 64 x 2048 matrix
// against COUNT activation rows (argument 1, default 16), 2000 times, 9 passes; GOP/s median
// against the int8 peak probe. By default the engine's product (qb_gemm_tiles, q8a activations
// per 32 and their offsets); with Q40S=1 the tried per-256 one (qb_gemm_tiles_q40s, q8s
// activations), so it builds against a tree with ../tried/q4_0-q8s.diff applied (the default
// product alone runs on any tree if the Q40S lines are deleted):
//   printf '#define QB_ISA avx512\n#include "qb_isa_unit.h"\n' > u.c
//   clang -O3 -march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512 -ffp-contract=on \
//       -ITREE/Sources/CQBKernels/kernels -ITREE/Sources/CQBKernels/include -c u.c -o u.o
//   (and the portable unit, p.o: QB_ISA portable, no -march flags)
//   clang -O2 -march=x86-64-v4 -ITREE/Sources/CQBKernels/include q4_0-hot.c u.o p.o -lm -o q4_0-hot
//   ./q4_0-hot 16; Q40S=1 ./q4_0-hot 16
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>
#include "qb_activation.h"
#include "qb_gemm.h"
void qb_avx512_pack_tile_ggml(int32_t type, int32_t interleaved, const void *w, int64_t r0, int64_t cols, uint8_t *tile);
void qb_avx512_gemm_tiles(const uint8_t *tile, int64_t tiles, int32_t bits, const qb_q8a *x, const int32_t *offs, int64_t count, int64_t cols, float *y, int64_t ystride);
void qb_avx512_gemm_tiles_q40s(const uint8_t *tile, int64_t tiles, const qb_q8s *x, int64_t count, int64_t cols, float *y, int64_t ystride);
void qb_avx512_quantize_q8s(const float *x, qb_q8s *y, int64_t n);
void qb_portable_gemm_tiles_q40s(const uint8_t *tile, int64_t tiles, const qb_q8s *x, int64_t count, int64_t cols, float *y, int64_t ystride);
void qb_avx512_quantize_q8a(const float *x, qb_q8a *y, int64_t n);
void qb_avx512_q8a_offsets(const qb_q8a *x, int64_t blocks, int32_t width, int32_t k, int32_t *offs);
int64_t qb_avx512_gemm_tile_block_bytes(int32_t bits);
double qb_avx512_int8_peak_kernel(int64_t iterations, int32_t *sink);
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9;}
enum { COLS = 2048, TASK = 4, ROWS = 16 * TASK };
int main(int argc, char **argv) {
  int count = argc > 1 ? atoi(argv[1]) : 16, reps = 2000;
  srand(7); int nb = COLS / 32;
  uint8_t *w = malloc(ROWS * nb * 18);
  for (int i = 0; i < ROWS * nb; i++) { uint8_t *b = w + i * 18; for (int k = 2; k < 18; k++) b[k] = rand(); uint16_t d = 0x2000 + (rand() & 0x3ff); memcpy(b, &d, 2); }
  int64_t tb = nb * qb_avx512_gemm_tile_block_bytes(4);
  uint8_t *tiles = aligned_alloc(64, TASK * tb);
  for (int t = 0; t < TASK; t++) qb_avx512_pack_tile_ggml(QB_Q4_0, 0, w, 16 * t, COLS, tiles + t * tb);
  float *x = malloc(sizeof(float) * count * COLS), *y = malloc(sizeof(float) * count * ROWS);
  for (int i = 0; i < count * COLS; i++) x[i] = rand() / (float)RAND_MAX - 0.5f;
  qb_q8a *xq = malloc(sizeof(qb_q8a) * count * nb); int32_t *offs = malloc(4 * count * nb);
  for (int c = 0; c < count; c++) { qb_avx512_quantize_q8a(x + c * COLS, xq + c * nb, COLS); qb_avx512_q8a_offsets(xq + c * nb, nb, 32, -8, offs + c * nb); }
  qb_q8s *xs = malloc(sizeof(qb_q8s) * count * (COLS / 256)); for (int c = 0; c < count; c++) qb_avx512_quantize_q8s(x + c * COLS, xs + c * (COLS / 256), COLS);
  int q40s = getenv("Q40S") != 0;
  if (q40s) {  // the AVX-512 product against the portable definition, and against the q8a product
    float *y1 = malloc(sizeof(float) * count * ROWS), *y2 = malloc(sizeof(float) * count * ROWS), *y3 = malloc(sizeof(float) * count * ROWS);
    qb_avx512_gemm_tiles_q40s(tiles, TASK, xs, count, COLS, y1, ROWS);
    qb_portable_gemm_tiles_q40s(tiles, TASK, xs, count, COLS, y2, ROWS);
    qb_avx512_gemm_tiles(tiles, TASK, 4, xq, offs, count, COLS, y3, ROWS);
    double num = 0, den = 0;
    for (int i = 0; i < count * ROWS; i++) { num += (double)(y1[i] - y3[i]) * (y1[i] - y3[i]); den += (double)y3[i] * y3[i]; }
    printf("q40s: avx512 against the portable definition, bitwise equal: %s; relative RMS difference from the q8a product %.2e\n",
           memcmp(y1, y2, sizeof(float) * count * ROWS) ? "NO" : "yes", sqrt(num / den));
  }
  double best = 1e9, med[9];
  for (int r = 0; r < 9; r++) { double t0 = now(); for (int i = 0; i < reps; i++) { if (q40s) qb_avx512_gemm_tiles_q40s(tiles, TASK, xs, count, COLS, y, ROWS); else qb_avx512_gemm_tiles(tiles, TASK, 4, xq, offs, count, COLS, y, ROWS); } med[r] = now() - t0; if (med[r] < best) best = med[r]; }
  for (int i = 0; i < 9; i++) for (int j = i + 1; j < 9; j++) if (med[j] < med[i]) { double s = med[i]; med[i] = med[j]; med[j] = s; }
  int32_t sink[8]; double t0 = now(); double pk = qb_avx512_int8_peak_kernel(20000000, sink); pk = pk / (now() - t0) / 1e9;
  double ops = 2.0 * ROWS * COLS * count * reps;
  printf("count %d: median %.1f GOP/s = %.1f%% of the int8 peak %.1f; best %.1f%%\n", count, ops / med[4] / 1e9, 100 * ops / med[4] / 1e9 / pk, pk, 100 * ops / best / 1e9 / pk);
  return 0;
}
