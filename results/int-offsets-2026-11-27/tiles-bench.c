// Prefill tiles, one kernel set built twice: BASE (the parent commit's sources, compiled
// with QB_ISA=avx512 for distinct names) against NEW (this commit, QB_ISA=avx2), both with
// the same flags (x86-64-v3 for the avx2 set, x86-64-v4 with VNNI for the avx512 set).
// Packing and products of random weights, thread CPU time, best of REPS alternating
// repetitions; prints the largest difference of NEW's outputs from BASE's, relative to the
// largest |output|. See README.md.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "qb_activation.h"
#include "qb_formats.h"
#include "qb_gemm.h"

#include <math.h>
#define SET(p)                                                                                                    \
    void qb_##p##_pack_tile_ggml(int32_t, int32_t, const void *, int64_t, int64_t, uint8_t *);                   \
    void qb_##p##_pack_tile_q6k(const void *, int64_t, int64_t, uint8_t *);                                      \
    int64_t qb_##p##_gemm_tile_block_bytes(int32_t);
SET(avx512)  // BASE
SET(avx2)    // NEW
void qb_avx512_gemm_tile(const uint8_t *, int32_t, const qb_q8a *, int64_t, int64_t, float *, int64_t);
void qb_avx512_gemm_tile6(const uint8_t *, const qb_q8a *, const float *, int64_t, int64_t, float *, int64_t);
void qb_avx512_q8a_sums16(const qb_q8a *, int64_t, float *);
void qb_avx2_gemm_tile(const uint8_t *, int32_t, const qb_q8a *, const int32_t *, int64_t, int64_t, float *, int64_t);
void qb_avx2_gemm_tile6(const uint8_t *, const qb_q8a *, const int32_t *, int64_t, int64_t, float *, int64_t);
void qb_avx2_q8a_offsets(const qb_q8a *, int64_t, int32_t, int32_t, int32_t *);
void qb_avx2_quantize_q8a(const float *, qb_q8a *, int64_t);
int64_t qb_avx512_gemm_tile_block_bytes(int32_t);

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s q4_0|q8_0|q5_0|q6_k ROWS COLS COUNT REPS\n", argv[0]);
        return 2;
    }
    const char *f = argv[1];
    int rows = atoi(argv[2]), cols = atoi(argv[3]), count = atoi(argv[4]), reps = atoi(argv[5]);
    int q6 = !strcmp(f, "q6_k"), type = !strcmp(f, "q4_0") ? QB_Q4_0 : !strcmp(f, "q8_0") ? QB_Q8_0 : QB_Q5_0;
    int bits = q6 ? 6 : type == QB_Q4_0 ? 4 : type == QB_Q8_0 ? 8 : 5;
    int nb = cols / 32;
    size_t blockBytes = q6 ? 210 : type == QB_Q4_0 ? 18 : type == QB_Q8_0 ? 34 : 22, blocks = q6 ? cols / 256 : nb;
    unsigned seed = 19;
    printf("seed %u\n", seed);
    srand(seed);
    uint8_t *w = malloc((size_t)rows * blocks * blockBytes);
    for (size_t i = 0; i < (size_t)rows * blocks; i++) {
        uint8_t *b = w + i * blockBytes;
        for (size_t j = 0; j < blockBytes; j++) b[j] = (uint8_t)rand();
        _Float16 h = (_Float16)(rand() / (float)RAND_MAX * 0.01f);
        memcpy(q6 ? b + 208 : b, &h, 2);
    }
    float *x = malloc((size_t)count * cols * 4);
    for (size_t i = 0; i < (size_t)count * cols; i++) x[i] = rand() / (float)RAND_MAX - 0.5f;
    qb_q8a *xq = malloc((size_t)count * nb * sizeof(qb_q8a));
    float *s16 = malloc((size_t)count * nb * 8);
    // NEW's offsets (symmetric formats: Q4_0 -8, Q8_0 -128, Q5_0 -16 per 32; Q6_K -32 per 16).
    int width = q6 ? 16 : 32, k = q6 ? -32 : type == QB_Q4_0 ? -8 : type == QB_Q8_0 ? -128 : -16;
    int per = nb * 32 / width;
    int32_t *offs = malloc((size_t)count * per * 4);
    for (int c = 0; c < count; c++) {
        qb_avx2_quantize_q8a(x + (size_t)c * cols, xq + (size_t)c * nb, cols);
        qb_avx512_q8a_sums16(xq + (size_t)c * nb, nb, s16 + (size_t)c * nb * 2);
        qb_avx2_q8a_offsets(xq + (size_t)c * nb, nb, width, k, offs + (size_t)c * per);
    }
    // Q6_K tiles lost their M floats in NEW (768 -> 640 bytes per 32 columns).
    size_t tb0 = (size_t)nb * (q6 ? 768 : qb_avx512_gemm_tile_block_bytes(bits));
    size_t tb1 = (size_t)nb * (q6 ? QB_TILE6_BLOCK_BYTES : qb_avx2_gemm_tile_block_bytes(bits));
    uint8_t *t0 = malloc(tb0 * (rows / 16)), *t1 = malloc(tb1 * (rows / 16));
    float *y0 = malloc((size_t)count * rows * 4), *y1 = malloc((size_t)count * rows * 4);
    double p0 = 1e9, p1 = 1e9, g0 = 1e9, g1 = 1e9;
    for (int rep = 0; rep < reps; rep++) {
        for (int side = 0; side < 2; side++) {
            int base = (side + rep) % 2 == 0;  // alternate which goes first
            size_t tb = base ? tb0 : tb1;
            uint8_t *tile = base ? t0 : t1;
            float *y = base ? y0 : y1;
            double a = now();
            for (int t = 0; t < rows / 16; t++) {
                if (q6) (base ? qb_avx512_pack_tile_q6k : qb_avx2_pack_tile_q6k)(w, t * 16, cols, tile + t * tb);
                else (base ? qb_avx512_pack_tile_ggml : qb_avx2_pack_tile_ggml)(type, 0, w, t * 16, cols, tile + t * tb);
            }
            double b = now();
            for (int c0 = 0; c0 < count; c0 += 16) {
                int n = count - c0 < 16 ? count - c0 : 16;
                for (int t = 0; t < rows / 16; t++) {
                    float *out = y + (size_t)c0 * rows + t * 16;
                    const qb_q8a *xc = xq + (size_t)c0 * nb;
                    if (q6 && base) qb_avx512_gemm_tile6(tile + t * tb, xc, s16 + (size_t)c0 * nb * 2, n, cols, out, rows);
                    else if (q6) qb_avx2_gemm_tile6(tile + t * tb, xc, offs + (size_t)c0 * per, n, cols, out, rows);
                    else if (base) qb_avx512_gemm_tile(tile + t * tb, bits, xc, n, cols, out, rows);
                    else qb_avx2_gemm_tile(tile + t * tb, bits, xc, offs + (size_t)c0 * per, n, cols, out, rows);
                }
            }
            double e = now();
            if (base) { if (b - a < p0) p0 = b - a; if (e - b < g0) g0 = e - b; }
            else { if (b - a < p1) p1 = b - a; if (e - b < g1) g1 = e - b; }
        }
    }
    double ops = 2.0 * rows * cols * (double)count, big = 0, diff = 0;
    for (size_t i = 0; i < (size_t)count * rows; i++) {
        if (fabs(y0[i]) > big) big = fabs(y0[i]);
        if (fabs(y1[i] - y0[i]) > diff) diff = fabs(y1[i] - y0[i]);
    }
    printf("%s %dx%d, %d activation rows: products BASE %.1f GOP/s, NEW %.1f GOP/s (%.2fx); packing BASE %.1f us, "
           "NEW %.1f us (%.2fx); largest difference %.1e of the largest output\n",
           f, rows, cols, count, ops / g0 / 1e9, ops / g1 / 1e9, g0 / g1, p0 * 1e6, p1 * 1e6, p0 / p1, diff / big);
    return !(diff / big < 1e-5);
}
