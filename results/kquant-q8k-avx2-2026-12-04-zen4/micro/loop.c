// A pure loop of 8 vpmaddubsw + 8 vpaddw per iteration with four activation broadcasts
// (variants: registers only, broadcast loads, plus weight loads, pre-broadcast loads, in-lane
// shuffles of one 16-byte load); ns per iteration. clang -O3 -march=x86-64-v3 loop.c
#include <immintrin.h>
#include <stdio.h>
#include <time.h>
#include <string.h>
#include <stdint.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(){
  __m256i w0=_mm256_set1_epi8(3), w1=_mm256_set1_epi8(5);
  int32_t xs[64]; for(int i=0;i<64;i++) xs[i]=i*0x01010101;
  uint8_t wbuf[4096]; memset(wbuf,3,sizeof wbuf);
  const long N=20000000;
  for(int variant=1;variant<5;variant++){
  double best=1e9;
  for(int r=0;r<5;r++){
    __m256i a[8]; for(int k=0;k<8;k++) a[k]=_mm256_setzero_si256();
    double t0=now();
    for(long i=0;i<N;i++){
      __m256i x0,x1,x2,x3,wa=w0,wb=w1;
      if(variant>=1){ x0=_mm256_set1_epi32(xs[i&15]); x1=_mm256_set1_epi32(xs[(i&15)+16]); x2=_mm256_set1_epi32(xs[(i&15)+32]); x3=_mm256_set1_epi32(xs[(i&15)+48]); }
      else { x0=w0; x1=w1; x2=w0; x3=w1; __asm__("" : "+x"(x0),"+x"(x1),"+x"(x2),"+x"(x3)); }
      if(variant==3){ x0=_mm256_loadu_si256((const __m256i*)(wbuf+128*(i&15))); x1=_mm256_loadu_si256((const __m256i*)(wbuf+128*(i&15)+32)); x2=_mm256_loadu_si256((const __m256i*)(wbuf+128*(i&15)+64)); x3=_mm256_loadu_si256((const __m256i*)(wbuf+128*(i&15)+96)); }
      if(variant==4){ __m128i q=_mm_loadu_si128((const __m128i*)(xs+(i&15))); __m256i b=_mm256_broadcastsi128_si256(q); x0=_mm256_shuffle_epi32(b,0); x1=_mm256_shuffle_epi32(b,0x55); x2=_mm256_shuffle_epi32(b,0xAA); x3=_mm256_shuffle_epi32(b,0xFF);}
      if(variant>=2){ wa=_mm256_loadu_si256((const __m256i*)(wbuf+64*(i&63))); wb=_mm256_loadu_si256((const __m256i*)(wbuf+64*(i&63)+32)); }
      a[0]=_mm256_add_epi16(a[0],_mm256_maddubs_epi16(wa,x0)); a[1]=_mm256_add_epi16(a[1],_mm256_maddubs_epi16(wb,x0));
      a[2]=_mm256_add_epi16(a[2],_mm256_maddubs_epi16(wa,x1)); a[3]=_mm256_add_epi16(a[3],_mm256_maddubs_epi16(wb,x1));
      a[4]=_mm256_add_epi16(a[4],_mm256_maddubs_epi16(wa,x2)); a[5]=_mm256_add_epi16(a[5],_mm256_maddubs_epi16(wb,x2));
      a[6]=_mm256_add_epi16(a[6],_mm256_maddubs_epi16(wa,x3)); a[7]=_mm256_add_epi16(a[7],_mm256_maddubs_epi16(wb,x3));
    }
    double t=now()-t0; if(t<best)best=t;
    __m256i s=a[0]; for(int k=1;k<8;k++) s=_mm256_add_epi16(s,a[k]); volatile int sink=_mm256_extract_epi32(s,0); (void)sink;
  }
  printf("variant %d: %.3f ns per iteration (8 maddubs), %.3f ns per maddubs\n",variant,best/N*1e9,best/N/8*1e9);
  }
}
