#include <immintrin.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
// tile: 16 steps x 64 bytes (two tiles for B: 2 x 1024)
static int16_t W[2][16*32] __attribute__((aligned(64)));
static int16_t X[4][64] __attribute__((aligned(64)));
static int32_t sink[64];
__attribute__((noinline)) void A(long reps){
  __m256i acc[4][2]; for(int c=0;c<4;c++)for(int h=0;h<2;h++)acc[c][h]=_mm256_setzero_si256();
  for(long r=0;r<reps;r++){
#pragma clang loop unroll(disable)
    for(int s=0;s<16;s++){ __m256i w0=_mm256_load_si256((const __m256i*)(W[0]+32*s)), w1=_mm256_load_si256((const __m256i*)(W[0]+32*s+16));
      for(int c=0;c<4;c++){ int32_t v; memcpy(&v,X[c]+2*s,4); __m256i x=_mm256_set1_epi32(v);
        acc[c][0]=_mm256_add_epi32(acc[c][0],_mm256_madd_epi16(w0,x)); acc[c][1]=_mm256_add_epi32(acc[c][1],_mm256_madd_epi16(w1,x)); } }
    __asm__ volatile("" ::: "memory");
  }
  for(int c=0;c<4;c++)for(int h=0;h<2;h++)_mm256_storeu_si256((__m256i*)(sink+8*(2*c+h)),acc[c][h]);
}
__attribute__((noinline)) void B(long reps){ // 2 tiles x 2 rows, twice (same MACs as A)
  __m256i acc[2][4]; for(int c=0;c<2;c++)for(int h=0;h<4;h++)acc[c][h]=_mm256_setzero_si256();
  for(long r=0;r<reps;r++){
   for(int half=0; half<2; half++)
#pragma clang loop unroll(disable)
    for(int s=0;s<16;s+=2){ __m256i w[4]; for(int h=0;h<4;h++) w[h]=_mm256_load_si256((const __m256i*)(W[h>>1]+32*s+16*(h&1)));
      for(int c=0;c<2;c++){ int32_t v; memcpy(&v,X[2*half+c]+2*s,4); __m256i x=_mm256_set1_epi32(v);
        for(int h=0;h<4;h++) acc[c][h]=_mm256_add_epi32(acc[c][h],_mm256_madd_epi16(w[h],x)); } }
    __asm__ volatile("" ::: "memory");
  }
  for(int c=0;c<2;c++)for(int h=0;h<4;h++)_mm256_storeu_si256((__m256i*)(sink+8*(4*c+h)),acc[c][h]);
}
int main(){ for(int i=0;i<16*32;i++){W[0][i]=i%255;W[1][i]=i%97;} for(int c=0;c<4;c++)for(int i=0;i<64;i++)X[c][i]=i*c%127;
  long reps=20000000; double t;
  for(int k=0;k<2;k++){
  t=now(); A(reps); t=now()-t; printf("A: %.2f cycles/step (128 MAC) @3.6GHz, %.2f madd/cycle\n", t*3.6e9/(reps*16.0), reps*16*8/(t*3.6e9));
  t=now(); B(reps); t=now()-t; printf("B: %.2f cycles/128 MAC, %.2f madd/cycle\n", t*3.6e9/(reps*16.0), reps*16*8/(t*3.6e9)); }
}
