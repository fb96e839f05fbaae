// Throughput of AVX2 instruction pairs on this core: 6 independent chains of each kind (12 ymm).
#include <immintrin.h>
#include <stdio.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
#define N 6
#define LOOP(name, A, F) \
  static double name(long iters) { __m256i a[N]; __m256 f[N]; for (int i = 0; i < N; i++) { a[i] = _mm256_set1_epi16(i + 1); f[i] = _mm256_set1_ps(i); } \
    __m256i b = _mm256_set1_epi8(3); __m256 g = _mm256_set1_ps(1.0001f), h = _mm256_set1_ps(0.5f); \
    double t0 = now(); for (long k = 0; k < iters; k++) { _Pragma("clang loop unroll(full)") for (int i = 0; i < N; i++) { A; F; } } double t = now() - t0; \
    int s = 0; for (int i = 0; i < N; i++) s += _mm256_extract_epi32(a[i], 0) + (int)_mm256_cvtss_f32(f[i]); if (s == 12345) printf("!"); \
    return t / (iters * (double)N) * 1e9; }
LOOP(mb, a[i] = _mm256_maddubs_epi16(a[i], b), (void)0)
LOOP(fm, (void)0, f[i] = _mm256_fmadd_ps(f[i], g, h))
LOOP(mb_fm, a[i] = _mm256_maddubs_epi16(a[i], b), f[i] = _mm256_fmadd_ps(f[i], g, h))
LOOP(mb_mul, a[i] = _mm256_maddubs_epi16(a[i], b), f[i] = _mm256_mul_ps(f[i], g))
LOOP(mb_cvt, a[i] = _mm256_maddubs_epi16(a[i], b), f[i] = _mm256_cvtepi32_ps(_mm256_castps_si256(f[i])))
LOOP(mb_md, a[i] = _mm256_maddubs_epi16(a[i], b), f[i] = _mm256_castsi256_ps(_mm256_madd_epi16(_mm256_castps_si256(f[i]), b)))
LOOP(mb_sg, a[i] = _mm256_maddubs_epi16(a[i], b), f[i] = _mm256_castsi256_ps(_mm256_sign_epi8(_mm256_castps_si256(f[i]), b)))
LOOP(mb_ad, a[i] = _mm256_maddubs_epi16(a[i], b), f[i] = _mm256_castsi256_ps(_mm256_add_epi16(_mm256_castps_si256(f[i]), b)))
LOOP(mb_sh, a[i] = _mm256_maddubs_epi16(a[i], b), f[i] = _mm256_castsi256_ps(_mm256_shuffle_epi8(_mm256_castps_si256(f[i]), b)))
LOOP(mb_sr, a[i] = _mm256_maddubs_epi16(a[i], b), f[i] = _mm256_castsi256_ps(_mm256_srai_epi32(_mm256_castps_si256(f[i]), 3)))
int main(void) {
  long it = 30000000;
  for (int r = 0; r < 2; r++)
    printf("ns per iteration step (one of each): maddubs %.4f fma %.4f | maddubs+ fma %.4f mul %.4f cvt %.4f madd %.4f sign %.4f add %.4f shuf %.4f srai %.4f\n",
      mb(it), fm(it), mb_fm(it), mb_mul(it), mb_cvt(it), mb_md(it), mb_sg(it), mb_ad(it), mb_sh(it), mb_sr(it));
}
