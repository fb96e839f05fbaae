// Q6_K AVX2 prefill block kernel: current (unsigned values, offsets per 16, f32 scale per 16)
// against the sign trick (signed values, integer scales per 16 by vpmaddwd, f32 d per row).
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>
typedef struct { float d; float s; int8_t qs[32]; } q8a;
enum { R = 16, NB = 64, COLS = NB * 32, TILES = 4, COUNT = 16, BB = 640 };
static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return (uint32_t)rng; }
// weights: q[t][row][col] in 0..63, sc[t][row][col/16] int8, d[t][row][sb] f32
static uint8_t Q[TILES][R][COLS]; static int8_t SC[TILES][R][COLS / 16]; static float D[TILES][R][COLS / 256];
static q8a X[COUNT][NB]; static int32_t OFFS[COUNT][2 * NB];
static uint8_t T0[TILES][NB][BB], T2[TILES][NB][BB];
static void pack0(void) {
    for (int t = 0; t < TILES; t++) for (int b = 0; b < NB; b++) for (int r = 0; r < R; r++) {
        for (int h = 0; h < 2; h++) { float v = D[t][r][b / 8] * SC[t][r][2 * b + h]; memcpy(&T0[t][b][64 * h + 4 * r], &v, 4); }
        for (int s = 0; s < 8; s++) for (int k = 0; k < 4; k++) T0[t][b][128 + 64 * s + 4 * r + k] = Q[t][r][32 * b + 4 * s + k];
    }
}
static void pack2(void) {
    for (int t = 0; t < TILES; t++) for (int b = 0; b < NB; b++) for (int r = 0; r < R; r++) {
        memcpy(&T2[t][b][4 * r], &D[t][r][b / 8], 4);
        int16_t s2[2] = {SC[t][r][2 * b], SC[t][r][2 * b + 1]};
        memcpy(&T2[t][b][64 + 4 * r], s2, 4);
        for (int s = 0; s < 8; s++) for (int k = 0; k < 4; k++) T2[t][b][128 + 64 * s + 4 * r + k] = (uint8_t)(int8_t)(Q[t][r][32 * b + 4 * s + k] - 32);
    }
}
#define AI static inline __attribute__((always_inline))
AI void block0(const uint8_t *blk, const q8a *x, const int32_t *offs16, int64_t nb, int64_t b, float *acc, const int n) {
    const __m256i ones = _mm256_set1_epi16(1);
#pragma clang loop unroll(disable)
    for (int h = 0; h < 2; h++) {
        __m256i is[2][2];
        for (int c = 0; c < n; c++) is[c][0] = is[c][1] = _mm256_set1_epi32(offs16[c * 2 * nb + 2 * b + h]);
#pragma clang loop unroll(disable)
        for (int s = 4 * h; s < 4 * h + 4; s += 2) {
            __m256i w[2][2];
            for (int k = 0; k < 2; k++) for (int rh = 0; rh < 2; rh++) w[k][rh] = _mm256_loadu_si256((const __m256i *)(blk + 128 + 64 * (s + k) + 32 * rh));
            for (int c = 0; c < n; c++) {
                int32_t v0, v1; memcpy(&v0, x[c * nb + b].qs + 4 * s, 4); memcpy(&v1, x[c * nb + b].qs + 4 * s + 4, 4);
                __m256i x0 = _mm256_set1_epi32(v0), x1 = _mm256_set1_epi32(v1);
                for (int rh = 0; rh < 2; rh++) {
                    __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(w[0][rh], x0), _mm256_maddubs_epi16(w[1][rh], x1));
                    is[c][rh] = _mm256_add_epi32(is[c][rh], _mm256_madd_epi16(p, ones));
                }
            }
        }
        for (int rh = 0; rh < 2; rh++) {
            __m256 d = _mm256_loadu_ps((const float *)(blk + 64 * h + 32 * rh));
            for (int c = 0; c < n; c++) {
                float *sum = acc + 16 * c + 8 * rh;
                __m256 scale = _mm256_mul_ps(d, _mm256_set1_ps(x[c * nb + b].d));
                _mm256_storeu_ps(sum, _mm256_fmadd_ps(_mm256_cvtepi32_ps(is[c][rh]), scale, _mm256_loadu_ps(sum)));
            }
        }
    }
}
// Sign trick: w = q - 32 signed; |w| <= 32 so 4 steps (8 products) fit a 16-bit lane (8 x 32 x 127 = 32512).
AI void block2(const uint8_t *blk, const q8a *x, int64_t nb, int64_t b, float *acc, const int n) {
    __m256i is[4][2];
    for (int c = 0; c < n; c++) is[c][0] = is[c][1] = _mm256_setzero_si256();
    const __m256i sc = _mm256_loadu_si256((const __m256i *)(blk + 64)), sc1 = _mm256_loadu_si256((const __m256i *)(blk + 96));
    const __m256i lo = _mm256_setr_epi8(0,1,0,1,4,5,4,5,8,9,8,9,12,13,12,13,0,1,0,1,4,5,4,5,8,9,8,9,12,13,12,13);
    const __m256i hi = _mm256_setr_epi8(2,3,2,3,6,7,6,7,10,11,10,11,14,15,14,15,2,3,2,3,6,7,6,7,10,11,10,11,14,15,14,15);
#pragma clang loop unroll(disable)
    for (int h = 0; h < 2; h++) {
        __m256i p[4][2];
        for (int s = 4 * h; s < 4 * h + 4; s++) {
            __m256i w[2], a[2];
            for (int rh = 0; rh < 2; rh++) { w[rh] = _mm256_loadu_si256((const __m256i *)(blk + 128 + 64 * s + 32 * rh)); a[rh] = _mm256_sign_epi8(w[rh], w[rh]); }
            for (int c = 0; c < n; c++) {
                int32_t v; memcpy(&v, x[c * nb + b].qs + 4 * s, 4);
                __m256i xv = _mm256_set1_epi32(v);
                for (int rh = 0; rh < 2; rh++) {
                    __m256i q = _mm256_maddubs_epi16(a[rh], _mm256_sign_epi8(xv, w[rh]));
                    p[c][rh] = s == 4 * h ? q : _mm256_add_epi16(p[c][rh], q);
                }
            }
        }
        for (int rh = 0; rh < 2; rh++) {
            __m256i s16 = _mm256_shuffle_epi8(rh ? sc1 : sc, h ? hi : lo);
            for (int c = 0; c < n; c++) is[c][rh] = _mm256_add_epi32(is[c][rh], _mm256_madd_epi16(p[c][rh], s16));
        }
    }
    for (int rh = 0; rh < 2; rh++) {
        __m256 d = _mm256_loadu_ps((const float *)(blk + 32 * rh));
        for (int c = 0; c < n; c++) {
            float *sum = acc + 16 * c + 8 * rh;
            __m256 scale = _mm256_mul_ps(d, _mm256_set1_ps(x[c * nb + b].d));
            _mm256_storeu_ps(sum, _mm256_fmadd_ps(_mm256_cvtepi32_ps(is[c][rh]), scale, _mm256_loadu_ps(sum)));
        }
    }
}

// Biased activations (x + 128, unsigned) against signed values q - 32: two steps per 16-bit
// lane (4 x 255 x 32 = 32640), integer scales by vpmaddwd, the bias's share (128 x sc x the
// values' sums, weights only) taken out at the start.
static uint8_t T1[TILES][NB][BB + 64];
static void pack1(void) {
    for (int t = 0; t < TILES; t++) for (int b = 0; b < NB; b++) for (int r = 0; r < R; r++) {
        memcpy(&T1[t][b][4 * r], &D[t][r][b / 8], 4);
        int16_t s2[2] = {SC[t][r][2 * b], SC[t][r][2 * b + 1]};
        memcpy(&T1[t][b][64 + 4 * r], s2, 4);
        int32_t k = 0;
        for (int h = 0; h < 2; h++) { int32_t s = 0; for (int j = 0; j < 16; j++) s += Q[t][r][32 * b + 16 * h + j] - 32; k += 128 * SC[t][r][2 * b + h] * s; }
        k = -k; memcpy(&T1[t][b][BB + 4 * r], &k, 4);
        for (int s = 0; s < 8; s++) for (int kk = 0; kk < 4; kk++) T1[t][b][128 + 64 * s + 4 * r + kk] = (uint8_t)(int8_t)(Q[t][r][32 * b + 4 * s + kk] - 32);
    }
}
AI void block1(const uint8_t *blk, const q8a *x, int64_t nb, int64_t b, float *acc, const int n) {
    __m256i is[4][2];
    uint8_t xa[4][32];
    for (int c = 0; c < n; c++) {
        _mm256_storeu_si256((__m256i *)xa[c], _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)x[c * nb + b].qs), _mm256_set1_epi8((char)0x80)));
        for (int rh = 0; rh < 2; rh++) is[c][rh] = _mm256_loadu_si256((const __m256i *)(blk + BB + 32 * rh));
    }
    const __m256i lo = _mm256_setr_epi8(0,1,0,1,4,5,4,5,8,9,8,9,12,13,12,13,0,1,0,1,4,5,4,5,8,9,8,9,12,13,12,13);
    const __m256i hi = _mm256_setr_epi8(2,3,2,3,6,7,6,7,10,11,10,11,14,15,14,15,2,3,2,3,6,7,6,7,10,11,10,11,14,15,14,15);
#pragma clang loop unroll(disable)
    for (int s = 0; s < 8; s += 2) {
        __m256i w[2][2], s16[2];
        for (int k = 0; k < 2; k++) for (int rh = 0; rh < 2; rh++) w[k][rh] = _mm256_loadu_si256((const __m256i *)(blk + 128 + 64 * (s + k) + 32 * rh));
        for (int rh = 0; rh < 2; rh++) s16[rh] = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(blk + 64 + 32 * rh)), s < 4 ? lo : hi);
        for (int c = 0; c < n; c++) {
            int32_t v0, v1; memcpy(&v0, xa[c] + 4 * s, 4); memcpy(&v1, xa[c] + 4 * s + 4, 4);
            __m256i x0 = _mm256_set1_epi32(v0), x1 = _mm256_set1_epi32(v1);
            for (int rh = 0; rh < 2; rh++) {
                __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(x0, w[0][rh]), _mm256_maddubs_epi16(x1, w[1][rh]));
                is[c][rh] = _mm256_add_epi32(is[c][rh], _mm256_madd_epi16(p, s16[rh]));
            }
        }
    }
    for (int rh = 0; rh < 2; rh++) {
        __m256 d = _mm256_loadu_ps((const float *)(blk + 32 * rh));
        for (int c = 0; c < n; c++) {
            float *sum = acc + 16 * c + 8 * rh;
            __m256 scale = _mm256_mul_ps(d, _mm256_set1_ps(x[c * nb + b].d));
            _mm256_storeu_ps(sum, _mm256_fmadd_ps(_mm256_cvtepi32_ps(is[c][rh]), scale, _mm256_loadu_ps(sum)));
        }
    }
}
#define GEMM(name, call, G)                                                                  \
    __attribute__((noinline)) static void name(const uint8_t *tile, float *y, int64_t bb) {              \
        float acc[16 * R];                                                                   \
        memset(acc, 0, sizeof acc);                                                          \
        for (int64_t b = 0; b < NB; b++)                                                     \
            for (int c = 0; c < COUNT; c += G) call;                                         \
        memcpy(y, acc, sizeof acc);                                                          \
    }
GEMM(g0, block0(tile + b * bb, &X[c][0], &OFFS[c][0], NB, b, acc + 16 * c, 2), 2)
GEMM(g2, block2(tile + b * bb, &X[c][0], NB, b, acc + 16 * c, 2), 2)
GEMM(g1, block1(tile + b * bb, &X[c][0], NB, b, acc + 16 * c, 2), 2)
GEMM(g1x4, block1(tile + b * bb, &X[c][0], NB, b, acc + 16 * c, 4), 4)
GEMM(g2x4, block2(tile + b * bb, &X[c][0], NB, b, acc + 16 * c, 4), 4)
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(int argc, char **argv) {
    unsigned seed = argc > 1 ? (unsigned)atoi(argv[1]) : 1; rng ^= seed; printf("seed %u\n", seed);
    for (int t = 0; t < TILES; t++) for (int r = 0; r < R; r++) {
        for (int c = 0; c < COLS; c++) Q[t][r][c] = rnd() % 64;
        for (int c = 0; c < COLS / 16; c++) SC[t][r][c] = (int8_t)(rnd() % 256);
        for (int c = 0; c < COLS / 256; c++) D[t][r][c] = 1e-3f * (1 + rnd() % 100);
    }
    for (int c = 0; c < COUNT; c++) for (int b = 0; b < NB; b++) {
        X[c][b].d = 1e-2f * (1 + rnd() % 100);
        int s0 = 0, s1 = 0;
        for (int k = 0; k < 32; k++) { X[c][b].qs[k] = (int8_t)((int)(rnd() % 255) - 127); if (k < 16) s0 += X[c][b].qs[k]; else s1 += X[c][b].qs[k]; }
        OFFS[c][2 * b] = -32 * s0; OFFS[c][2 * b + 1] = -32 * s1;
    }
    pack0(); pack1(); pack2();
    static float y[5][TILES][16 * R];
    void (*fn[5])(const uint8_t *, float *, int64_t) = {g0, g1, g1x4, g2, g2x4};
    const char *names[5] = {"current", "bias x2", "bias x4", "sign x2", "sign x4"};
    const uint8_t *tiles[5] = {T0[0][0], T1[0][0], T1[0][0], T2[0][0], T2[0][0]};
    int64_t bbs[5] = {BB, BB + 64, BB + 64, BB, BB};
    for (int k = 0; k < 5; k++) for (int t = 0; t < TILES; t++) fn[k](tiles[k] + t * NB * bbs[k], y[k][t], bbs[k]);
    for (int k = 0; k < 5; k++) {
        double err = 0;
        for (int t = 0; t < TILES; t++) for (int c = 0; c < COUNT; c++) for (int r = 0; r < R; r++) {
            double e = 0;
            for (int b = 0; b < NB; b++) for (int h = 0; h < 2; h++) { long s = 0; for (int j = 0; j < 16; j++) s += (long)(Q[t][r][32*b+16*h+j] - 32) * X[c][b].qs[16*h+j]; e += (double)D[t][r][b/8] * SC[t][r][2*b+h] * X[c][b].d * s; }
            err = fmax(err, fabs(y[k][t][16*c+r] - e) / (fabs(e) + 1e-3));
        }
        printf("%s: max rel err vs f64 %.2e\n", names[k], err);
    }
    double ops = 2.0 * TILES * R * COUNT * COLS;
    for (int round = 0; round < 3; round++) {
        double best[5] = {1e9, 1e9, 1e9, 1e9, 1e9};
        for (int it = 0; it < 300; it++)
            for (int k = 0; k < 5; k++) { double t0 = now(); for (int t = 0; t < TILES; t++) fn[k](tiles[k] + t * NB * bbs[k], y[k][t], bbs[k]); best[k] = fmin(best[k], now() - t0); }
        printf("round %d:", round);
        for (int k = 0; k < 5; k++) printf("  %s %.1f us (%.0f GOP/s, %.3fx)", names[k], best[k] * 1e6, ops / best[k] * 1e-9, best[0] / best[k]);
        printf("\n");
    }
}
