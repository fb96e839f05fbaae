// What holds the AVX2 16-bit step below two vpmaddwd a cycle on Zen 4: the broadcasts?
#include <immintrin.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static int16_t W[2][16*32] __attribute__((aligned(64)));
static int16_t X[8][64] __attribute__((aligned(64)));
int32_t sink[256];
#define ACC(n) __m256i acc[n][2]; for(int c=0;c<n;c++)for(int h=0;h<2;h++)acc[c][h]=_mm256_setzero_si256();
#define OUT(n) for(int c=0;c<n;c++)for(int h=0;h<2;h++)_mm256_storeu_si256((__m256i*)(sink+8*(2*c+h)),acc[c][h]);
// current step: vpbroadcastd per row and step
#define STEP_BODY(n, BCAST) \
  for(long r=0;r<reps;r++){ \
    _Pragma("clang loop unroll(disable)") \
    for(int s=0;s<16;s++){ __m256i w0=_mm256_load_si256((const __m256i*)(W[0]+32*s)), w1=_mm256_load_si256((const __m256i*)(W[0]+32*s+16)); \
      for(int c=0;c<n;c++){ __m256i x = BCAST; \
        acc[c][0]=_mm256_add_epi32(acc[c][0],_mm256_madd_epi16(w0,x)); acc[c][1]=_mm256_add_epi32(acc[c][1],_mm256_madd_epi16(w1,x)); } } \
    __asm__ volatile("" ::: "memory"); }
static inline __m256i bd(const int16_t *p){ int32_t v; memcpy(&v,p,4); return _mm256_set1_epi32(v); }
static inline __m256i bss(const int16_t *p){ __m256 x; __asm__("vbroadcastss %1, %0" : "=x"(x) : "m"(*(const float*)p)); return _mm256_castps_si256(x); }
__attribute__((noinline)) void A4(long reps){ ACC(4) STEP_BODY(4, bd(X[c]+2*s)) OUT(4) }
__attribute__((noinline)) void S4(long reps){ ACC(4) STEP_BODY(4, bss(X[c]+2*s)) OUT(4) }
__attribute__((noinline)) void A6(long reps){ ACC(6) STEP_BODY(6, bd(X[c]+2*s)) OUT(6) }
__attribute__((noinline)) void S6(long reps){ ACC(6) STEP_BODY(6, bss(X[c]+2*s)) OUT(6) }
// no broadcast at all: the rows' activations fixed in registers (same MACs, not the same math)
__attribute__((noinline)) void N4(long reps){ ACC(4) __m256i xr[4]; for(int c=0;c<4;c++) xr[c]=bd(X[c]); 
  for(long r=0;r<reps;r++){ for(int c=0;c<4;c++) __asm__ volatile("" : "+x"(xr[c]));
    _Pragma("clang loop unroll(disable)")
    for(int s=0;s<16;s++){ __m256i w0=_mm256_load_si256((const __m256i*)(W[0]+32*s)), w1=_mm256_load_si256((const __m256i*)(W[0]+32*s+16));
      for(int c=0;c<4;c++){ acc[c][0]=_mm256_add_epi32(acc[c][0],_mm256_madd_epi16(w0,xr[c])); acc[c][1]=_mm256_add_epi32(acc[c][1],_mm256_madd_epi16(w1,xr[c])); } }
    __asm__ volatile("" ::: "memory"); } OUT(4) }
typedef void (*fn)(long);
int main(){ for(int i=0;i<16*32;i++){W[0][i]=i%255;W[1][i]=i%97;} for(int c=0;c<8;c++)for(int i=0;i<64;i++)X[c][i]=i*c%127;
  long reps=4000000; const char *names[]={"A4 vpbroadcastd","S4 vbroadcastss","A6 vpbroadcastd","S6 vbroadcastss","N4 no broadcast"}; fn f[]={A4,S4,A6,S6,N4}; int rows[]={4,4,6,6,4};
  for(int k=0;k<3;k++) for(int i=0;i<5;i++){ double t=now(); f[i](reps); t=now()-t; double madd=reps*16.0*2*rows[i]; printf("%-18s %.3f ns/madd\n", names[i], t*1e9/madd); }
}
