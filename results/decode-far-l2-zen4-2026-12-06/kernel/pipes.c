// Which AVX-512 operations share issue slots with vpdpbusd on this core: 8 independent vpdpbusd
// chains a step, alone and with 3 (or 6) other operations beside them, each in its own chains.
// Prints ns per step; with 8 vpdpbusd a step taking 8 cycles, an operation that adds a cycle
// each competes for vpdpbusd's pipes, one that adds nothing issues elsewhere.
//   clang -O2 -march=znver4 pipes.c -o pipes && ./pipes
#include <immintrin.h>
#include <stdio.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
enum { STEPS = 25000000 };
int main(void) {
    static const char *name[] = {"8 vpdpbusd alone", "+3 vfmadd", "+3 vcvtdq2ps + vaddps", "+3 vcvtdq2ps, vmulps, vfmadd",
                                 "+6 vfmadd", "+3 vmulps", "+3 vpslld (count in xmm)", "+3 vpsllvd", "+3 vpaddd"};
    __m512i a[8], sh[3], w = _mm512_set1_epi8(3), x = _mm512_set1_epi8(2), ii = _mm512_set1_epi32(5);
    __m512 f[6], d = _mm512_set1_ps(1.0001f), e = _mm512_set1_ps(0.9999f);
    __m128i cnt = _mm_cvtsi32_si128(2);
    for (int i = 0; i < 8; i++) a[i] = _mm512_set1_epi32(i);
    for (int i = 0; i < 6; i++) f[i] = _mm512_set1_ps((float)i);
    for (int i = 0; i < 3; i++) sh[i] = _mm512_set1_epi32(i + 1);
    for (int mode = 0; mode < 9; mode++) {
        const double t0 = now();
        for (long k = 0; k < STEPS; k++) {
            // Opaque to the compiler, so nothing is hoisted out of the loop.
            __asm__ volatile("" : "+v"(w), "+v"(x), "+v"(d), "+v"(ii), "+x"(cnt));
            for (int i = 0; i < 8; i++) a[i] = _mm512_dpbusd_epi32(a[i], w, x);
            switch (mode) {
            case 1: for (int i = 0; i < 3; i++) f[i] = _mm512_fmadd_ps(d, e, f[i]); break;
            case 2: for (int i = 0; i < 3; i++) f[i] = _mm512_add_ps(f[i], _mm512_cvtepi32_ps(ii)); break;
            case 3: for (int i = 0; i < 3; i++) f[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(ii), _mm512_mul_ps(d, e), f[i]); break;
            case 4: for (int i = 0; i < 6; i++) f[i] = _mm512_fmadd_ps(d, e, f[i]); break;
            case 5: for (int i = 0; i < 3; i++) f[i] = _mm512_mul_ps(f[i], d); break;
            case 6: for (int i = 0; i < 3; i++) sh[i] = _mm512_sll_epi32(sh[i], cnt); break;
            case 7: for (int i = 0; i < 3; i++) sh[i] = _mm512_sllv_epi32(sh[i], ii); break;
            case 8: for (int i = 0; i < 3; i++) sh[i] = _mm512_add_epi32(sh[i], ii); break;
            }
        }
        printf("%-30s %.3f ns a step\n", name[mode], (now() - t0) / STEPS * 1e9);
    }
    __m512i s = _mm512_add_epi32(sh[0], _mm512_add_epi32(sh[1], sh[2]));
    for (int i = 0; i < 8; i++) s = _mm512_add_epi32(s, a[i]);
    __m512 g = f[0];
    for (int i = 1; i < 6; i++) g = _mm512_add_ps(g, f[i]);
    return _mm512_reduce_add_epi32(s) + (int)_mm512_reduce_add_ps(g) == 12345;
}
