#include <immintrin.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static int8_t W[8*64] __attribute__((aligned(64)));
static int8_t X[4][32] __attribute__((aligned(64)));
static int32_t sink[64];
__attribute__((noinline)) void C(long reps){
  const __m256i ones=_mm256_set1_epi16(1);
  __m256i acc[4][2]; for(int c=0;c<4;c++)for(int h=0;h<2;h++)acc[c][h]=_mm256_setzero_si256();
  for(long r=0;r<reps;r++){
#pragma clang loop unroll(disable)
    for(int s=0;s<8;s++){ __m256i w[2],aw[2]; for(int h=0;h<2;h++){w[h]=_mm256_load_si256((const __m256i*)(W+64*s+32*h)); aw[h]=_mm256_sign_epi8(w[h],w[h]);}
      for(int c=0;c<4;c++){ int32_t v; memcpy(&v,X[c]+4*s,4); __m256i x=_mm256_set1_epi32(v);
        for(int h=0;h<2;h++) acc[c][h]=_mm256_add_epi32(acc[c][h],_mm256_madd_epi16(ones,_mm256_maddubs_epi16(aw[h],_mm256_sign_epi8(x,w[h])))); } }
    __asm__ volatile("" ::: "memory");
  }
  for(int c=0;c<4;c++)for(int h=0;h<2;h++)_mm256_storeu_si256((__m256i*)(sink+8*(2*c+h)),acc[c][h]);
}
int main(){ for(int i=0;i<8*64;i++){W[i]=i%255-127;} for(int c=0;c<4;c++)for(int i=0;i<32;i++)X[c][i]=i*c%127;
  long reps=20000000; double t;
  for(int k=0;k<2;k++){
  t=now(); C(reps); t=now()-t; printf("C: %.2f cycles/128 MAC, %.2f mul-ops/cycle\n", t*3.6e9/(reps*16.0), reps*8*16.0/(t*3.6e9)); }
}
