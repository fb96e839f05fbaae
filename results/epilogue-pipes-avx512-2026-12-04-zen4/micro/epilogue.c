// What each f32/integer operation after a block's vpdpbusd steps costs the products, on the
// AVX-512 set's prefill shapes: `n` activation rows x 2 tiles, 64 blocks of 8 steps each
// (L1/L2-resident), the step loop as gemm_vnni's. Build: clang -O2 -mavx512f -mavx512bw
// -mavx512vl -mavx512vnni -mfma epilogue.c. Prints ns per vpdpbusd; kind 0 (no epilogue)
// is the products alone.
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
static int32_t OF[6][NB], SH[6][NB];
float sink[16 * 16];  // not static: the stores stay live
static const char *what[] = {
    "products alone (acc ^= sum, integer)",
    "cvt, mul (D x d), fma (gemm_vnni with offsets)",
    "vpslld (xmm count), cvt, fma; d per 8 blocks",
    "cvt, fma",
    "fma alone (sum taken as float bits)",
    "vpaddd alone",
    "cvt, vaddps",
    "vpslld (xmm count), vpaddd",
    "vpaddd on D's exponent, cvt, fma; d per 8 blocks",
    "vpsllvd, vpmulld, vpaddd (gemm_q8s_vnni's sub-block)",
    "vpmulld, vpaddd",
};
static inline __m512i b4(const int8_t *p) { int32_t v; memcpy(&v, p, 4); return _mm512_set1_epi32(v); }
static inline __attribute__((always_inline)) void K(const int kind, const int n) {
    __m512 acc[6][2], tt[6][2];
    __m512i si[6][2];
    for (int c = 0; c < n; c++)
        for (int j = 0; j < 2; j++) acc[c][j] = tt[c][j] = _mm512_setzero_ps(), si[c][j] = _mm512_setzero_si512();
#pragma clang loop unroll(disable)
    for (int b = 0; b < NB; b++) {
        const uint8_t *blk[2] = {T[0] + b * BB, T[1] + b * BB};
        __m512i is[6][2];
        for (int c = 0; c < n; c++) { __m512i st = _mm512_set1_epi32(OF[c][b]); for (int j = 0; j < 2; j++) is[c][j] = st; }
        for (int s = 0; s < 8; s++) {
            __m512i w[2];
            for (int j = 0; j < 2; j++) w[j] = _mm512_loadu_si512(blk[j] + 128 + 64 * s);
            for (int c = 0; c < n; c++) { __m512i xv = b4(X[c] + 32 * b + 4 * s); for (int j = 0; j < 2; j++) is[c][j] = _mm512_dpbusd_epi32(is[c][j], w[j], xv); }
        }
        for (int j = 0; j < 2; j++) {
            const __m512 d = _mm512_loadu_ps((const float *)blk[j]);
            for (int c = 0; c < n; c++) {
                const __m128i sh = _mm_cvtsi32_si128(SH[c][b]);
                const __m512 dsh = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(d), _mm512_set1_epi32(SH[c][b] << 23)));
                switch (kind) {
                case 0: si[c][j] = _mm512_xor_si512(si[c][j], is[c][j]); break;
                case 1: acc[c][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is[c][j]), _mm512_mul_ps(d, _mm512_set1_ps(XD[c][b])), acc[c][j]); break;
                case 2: tt[c][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sll_epi32(is[c][j], sh)), d, tt[c][j]); break;
                case 3: acc[c][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is[c][j]), d, acc[c][j]); break;
                case 4: acc[c][j] = _mm512_fmadd_ps(_mm512_castsi512_ps(is[c][j]), d, acc[c][j]); break;
                case 5: si[c][j] = _mm512_add_epi32(si[c][j], is[c][j]); break;
                case 6: acc[c][j] = _mm512_add_ps(_mm512_cvtepi32_ps(is[c][j]), acc[c][j]); break;
                case 7: si[c][j] = _mm512_add_epi32(si[c][j], _mm512_sll_epi32(is[c][j], sh)); break;
                case 8: tt[c][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is[c][j]), dsh, tt[c][j]); break;
                case 9: si[c][j] = _mm512_add_epi32(si[c][j], _mm512_mullo_epi32(_mm512_sllv_epi32(is[c][j], _mm512_set1_epi32(SH[c][b])), _mm512_castps_si512(d))); break;
                case 10: si[c][j] = _mm512_add_epi32(si[c][j], _mm512_mullo_epi32(is[c][j], _mm512_castps_si512(d))); break;
                }
            }
        }
        if ((kind == 2 || kind == 8) && (b & 7) == 7)
            for (int c = 0; c < n; c++)
                for (int j = 0; j < 2; j++) acc[c][j] = _mm512_fmadd_ps(tt[c][j], _mm512_set1_ps(XD[c][b]), acc[c][j]), tt[c][j] = _mm512_setzero_ps();
    }
    for (int c = 0; c < n; c++)
        for (int j = 0; j < 2; j++) _mm512_storeu_ps(sink + 16 * (2 * c + j), _mm512_add_ps(acc[c][j], _mm512_castsi512_ps(si[c][j])));
}
#define F(k, n) __attribute__((noinline)) static void K##k##_##n(long reps) { for (long r = 0; r < reps; r++) K(k, n); }
#define G(k) F(k, 6) F(k, 4)
G(0) G(1) G(2) G(3) G(4) G(5) G(6) G(7) G(8) G(9) G(10)
typedef void (*fn)(long);
static const fn f6[] = {K0_6, K1_6, K2_6, K3_6, K4_6, K5_6, K6_6, K7_6, K8_6, K9_6, K10_6};
static const fn f4[] = {K0_4, K1_4, K2_4, K3_4, K4_4, K5_4, K6_4, K7_4, K8_4, K9_4, K10_4};
int main(void) {
    for (int i = 0; i < NB * BB; i++) T[0][i] = (uint8_t)(i % 251), T[1][i] = (uint8_t)(i % 97);
    for (int c = 0; c < 6; c++) {
        for (int i = 0; i < NB * 32; i++) X[c][i] = (int8_t)(i * c % 127);
        for (int b = 0; b < NB; b++) XD[c][b] = 0.01f * (float)(b + 1), OF[c][b] = b * c, SH[c][b] = b & 3;
    }
    const long reps = 1000000;
    printf("kind | epilogue per row, tile and block | 6 x 2 ns/vpdpbusd | 4 x 2 ns/vpdpbusd\n");
    for (int k = 0; k < 11; k++) {
        double t6 = now(); f6[k](reps); t6 = now() - t6;
        double t4 = now(); f4[k](reps); t4 = now() - t4;
        printf("%4d | %-52s | %.3f | %.3f\n", k, what[k], t6 * 1e9 / (reps * (double)NB * 96), t4 * 1e9 / (reps * (double)NB * 64));
    }
    return 0;
}
