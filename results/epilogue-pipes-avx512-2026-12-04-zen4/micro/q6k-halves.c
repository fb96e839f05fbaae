// Build: clang -O2 -mavx512f -mavx512bw -mavx512vl -mavx512vnni -mfma q6k-halves.c; ns per vpdpbusd.
// Q6_K's AVX-512 block epilogue: per 32 values two 16-value halves (4 steps each), each
// with its own D. Kind 0: per half cvt, mul (D_h x d), fma (gemm6_vnni before 2026-12-04). Kind 1: u = cvt(is0) x D0,
// u = fma(cvt(is1), D1, u), acc = fma(u, d, acc) (after). Kind 2: kind 1 with acc in memory.
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
#define NB 64
#define BB 640
static uint8_t T[2][NB * BB] __attribute__((aligned(64)));
static int8_t X[6][NB * 32] __attribute__((aligned(64)));
static float XD[6][NB];
static int32_t OF[6][2 * NB];
float sink[16 * 16];
float Y[6][2][16];
static inline __m512i b4(const int8_t *p) { int32_t v; memcpy(&v, p, 4); return _mm512_set1_epi32(v); }
static inline __attribute__((always_inline)) void K(const int kind, const int n) {
    __m512 acc[6][2];
    for (int c = 0; c < n; c++) for (int j = 0; j < 2; j++) acc[c][j] = _mm512_setzero_ps();
    if (kind == 2) for (int c = 0; c < n; c++) for (int j = 0; j < 2; j++) _mm512_storeu_ps(Y[c][j], acc[c][j]);
#pragma clang loop unroll(disable)
    for (int b = 0; b < NB; b++) {
        const uint8_t *blk[2] = {T[0] + b * BB, T[1] + b * BB};
        __m512 u[6][2];
        for (int h = 0; h < 2; h++) {
            __m512i is[6][2];
            for (int c = 0; c < n; c++) { __m512i st = _mm512_set1_epi32(OF[c][2 * b + h]); for (int j = 0; j < 2; j++) is[c][j] = st; }
            for (int s = 4 * h; s < 4 * h + 4; s++) {
                __m512i w[2];
                for (int j = 0; j < 2; j++) w[j] = _mm512_loadu_si512(blk[j] + 128 + 64 * s);
                for (int c = 0; c < n; c++) { __m512i xv = b4(X[c] + 32 * b + 4 * s); for (int j = 0; j < 2; j++) is[c][j] = _mm512_dpbusd_epi32(is[c][j], w[j], xv); }
            }
            for (int j = 0; j < 2; j++) {
                const __m512 d = _mm512_loadu_ps((const float *)(blk[j] + 64 * h));
                for (int c = 0; c < n; c++) {
                    if (kind == 0) acc[c][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is[c][j]), _mm512_mul_ps(d, _mm512_set1_ps(XD[c][b])), acc[c][j]);
                    else if (h == 0) u[c][j] = _mm512_mul_ps(_mm512_cvtepi32_ps(is[c][j]), d);
                    else {
                        const __m512 v = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is[c][j]), d, u[c][j]);
                        if (kind == 1) acc[c][j] = _mm512_fmadd_ps(v, _mm512_set1_ps(XD[c][b]), acc[c][j]);
                        else _mm512_storeu_ps(Y[c][j], _mm512_fmadd_ps(v, _mm512_set1_ps(XD[c][b]), _mm512_loadu_ps(Y[c][j])));
                    }
                }
            }
        }
    }
    for (int c = 0; c < n; c++) for (int j = 0; j < 2; j++) _mm512_storeu_ps(sink + 16 * (2 * c + j), kind == 2 ? _mm512_loadu_ps(Y[c][j]) : acc[c][j]);
}
#define F(k, n) __attribute__((noinline)) static void K##k##_##n(long reps) { for (long r = 0; r < reps; r++) K(k, n); }
F(0, 6) F(1, 6) F(2, 6) F(0, 4) F(1, 4) F(2, 4)
int main(void) {
    for (int i = 0; i < NB * BB; i++) T[0][i] = (uint8_t)(i % 251), T[1][i] = (uint8_t)(i % 97);
    for (int c = 0; c < 6; c++) {
        for (int i = 0; i < NB * 32; i++) X[c][i] = (int8_t)(i * c % 127);
        for (int b = 0; b < NB; b++) XD[c][b] = 0.01f * (float)(b + 1), OF[c][2 * b] = b * c, OF[c][2 * b + 1] = -b;
    }
    const long reps = 1000000;
    for (int r = 0; r < 2; r++) {
        double t;
#define RUN(k, n) t = now(); K##k##_##n(reps); t = now() - t; printf("kind %d %dx2: %.3f ns per vpdpbusd\n", k, n, t * 1e9 / (reps * (double)NB * 16 * n));
        RUN(0, 6) RUN(1, 6) RUN(2, 6) RUN(0, 4) RUN(1, 4) RUN(2, 4)
    }
}
