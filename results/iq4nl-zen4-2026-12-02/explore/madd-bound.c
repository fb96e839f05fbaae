// The AVX2 8-bit prefill step alone (results/iq4nl-zen4-2026-12-02/README.md): per step two
// weight loads and, for four activation rows, a broadcast each and two vpmaddwd + vpaddd
// (eight of each), as gemm_avx2's 16-bit tiles take them; the same with the activations held
// in registers; and vpmaddubsw + vpaddw in the 4-bit tiles' pattern. Thread CPU time per step.
// Build: clang -O2 -march=x86-64-v3 madd-bound.c -o madd-bound
#include <immintrin.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t);return t.tv_sec+t.tv_nsec*1e-9;}
__attribute__((noinline)) void k_bcast(const int16_t *w, const int16_t *x, int steps, __m256i *out){
  __m256i lo[4][2]={0};
  for(int s=0;s<steps;s++){
    __m256i w0=_mm256_loadu_si256((const __m256i*)(w+32*(s&15))), w1=_mm256_loadu_si256((const __m256i*)(w+32*(s&15)+16));
    for(int c=0;c<4;c++){ int32_t v; memcpy(&v, x+64*c+2*(s&15), 4); __m256i xv=_mm256_set1_epi32(v);
      lo[c][0]=_mm256_add_epi32(lo[c][0],_mm256_madd_epi16(w0,xv)); lo[c][1]=_mm256_add_epi32(lo[c][1],_mm256_madd_epi16(w1,xv)); }
  }
  for(int c=0;c<4;c++){out[2*c]=lo[c][0];out[2*c+1]=lo[c][1];}
}
__attribute__((noinline)) void k_reg(const int16_t *w, const int16_t *x, int steps, __m256i *out){
  __m256i lo[4][2]={0}; __m256i xv[4]; for(int c=0;c<4;c++){int32_t v; memcpy(&v,x+64*c,4); xv[c]=_mm256_set1_epi32(v);} 
  for(int s=0;s<steps;s++){
    __m256i w0=_mm256_loadu_si256((const __m256i*)(w+32*(s&15))), w1=_mm256_loadu_si256((const __m256i*)(w+32*(s&15)+16));
    for(int c=0;c<4;c++){ 
      lo[c][0]=_mm256_add_epi32(lo[c][0],_mm256_madd_epi16(w0,xv[c])); lo[c][1]=_mm256_add_epi32(lo[c][1],_mm256_madd_epi16(w1,xv[c])); }
  }
  for(int c=0;c<4;c++){out[2*c]=lo[c][0];out[2*c+1]=lo[c][1];}
}
__attribute__((noinline)) void k_mubs(const int8_t *w, const int8_t *x, int steps, __m256i *out){
  __m256i lo[4][2]={0};
  for(int s=0;s<steps;s++){
    __m256i w0=_mm256_loadu_si256((const __m256i*)(w+64*(s&7))), w1=_mm256_loadu_si256((const __m256i*)(w+64*(s&7)+32));
    for(int c=0;c<4;c++){ int32_t v; memcpy(&v, x+32*c+4*(s&7), 4); __m256i xv=_mm256_set1_epi32(v);
      lo[c][0]=_mm256_add_epi16(lo[c][0],_mm256_maddubs_epi16(w0,xv)); lo[c][1]=_mm256_add_epi16(lo[c][1],_mm256_maddubs_epi16(w1,xv)); }
  }
  for(int c=0;c<4;c++){out[2*c]=lo[c][0];out[2*c+1]=lo[c][1];}
}
int main(){
  static int16_t w[1024]; static int16_t x[512]; for(int i=0;i<1024;i++)w[i]=i%7; for(int i=0;i<512;i++)x[i]=i%5;
  __m256i out[8]; int steps=1<<27;
  for(int r=0;r<3;r++){
  double t0=now(); k_bcast(w,x,steps,out); double t1=now(); printf("madd bcast: %.3f ns/step (8 madd)\n",(t1-t0)/steps*1e9);
  t0=now(); k_reg(w,x,steps,out); t1=now(); printf("madd reg:   %.3f ns/step\n",(t1-t0)/steps*1e9);
  t0=now(); k_mubs((int8_t*)w,(int8_t*)x,steps,out); t1=now(); printf("maddubs bcast: %.3f ns/step\n",(t1-t0)/steps*1e9);
  }
  volatile int sink=_mm256_extract_epi32(out[3],1); (void)sink; return 0;}
