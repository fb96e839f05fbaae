// Throughput of vpmaddubsw, vpaddw and vpmaddwd on ymm registers: twelve independent chains
// each, the best of five runs of 200 M operations. "half-half" (six chains of each) is bound by
// vpmaddubsw's latency, not a throughput figure.
// Build: clang -O2 -march=x86-64-v3 throughput.c -o throughput
#include <immintrin.h>
#include <stdio.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
#define N 200000000L
int main(void){
  __m256i a[12]; for(int i=0;i<12;i++) a[i]=_mm256_set1_epi8(i+1);
  __m256i b=_mm256_set1_epi8(3);
  double best[4]={1e9,1e9,1e9,1e9};
  for(int rep=0;rep<5;rep++){
  double t0=now();
  for(long i=0;i<N/12;i++){ for(int k=0;k<12;k++){ a[k]=_mm256_maddubs_epi16(a[k],b); } __asm__ volatile("" : "+x"(a[0]),"+x"(a[1]),"+x"(a[2]),"+x"(a[3]),"+x"(a[4]),"+x"(a[5]),"+x"(a[6]),"+x"(a[7]),"+x"(a[8]),"+x"(a[9]),"+x"(a[10]),"+x"(a[11])); }
  double t1=now();
  for(long i=0;i<N/12;i++){ for(int k=0;k<12;k++){ a[k]=_mm256_add_epi16(a[k],b); } __asm__ volatile("" : "+x"(a[0]),"+x"(a[1]),"+x"(a[2]),"+x"(a[3]),"+x"(a[4]),"+x"(a[5]),"+x"(a[6]),"+x"(a[7]),"+x"(a[8]),"+x"(a[9]),"+x"(a[10]),"+x"(a[11])); }
  double t2=now();
  for(long i=0;i<N/12;i++){ for(int k=0;k<12;k++){ a[k]=_mm256_madd_epi16(a[k],b); } __asm__ volatile("" : "+x"(a[0]),"+x"(a[1]),"+x"(a[2]),"+x"(a[3]),"+x"(a[4]),"+x"(a[5]),"+x"(a[6]),"+x"(a[7]),"+x"(a[8]),"+x"(a[9]),"+x"(a[10]),"+x"(a[11])); }
  double t3=now();
  for(long i=0;i<N/12;i++){ for(int k=0;k<6;k++){ a[k]=_mm256_maddubs_epi16(a[k],b); a[k+6]=_mm256_add_epi16(a[k+4],b);} __asm__ volatile("" : "+x"(a[0]),"+x"(a[1]),"+x"(a[2]),"+x"(a[3]),"+x"(a[4]),"+x"(a[5]),"+x"(a[6]),"+x"(a[7]),"+x"(a[8]),"+x"(a[9]),"+x"(a[10]),"+x"(a[11])); }
  double t4=now();
  double d[4]={t1-t0,t2-t1,t3-t2,t4-t3}; for(int k=0;k<4;k++) if(d[k]<best[k]) best[k]=d[k];
  }
  printf("ns per op: maddubs %.3f  paddw %.3f  pmaddwd %.3f  half-half %.3f\n", best[0]/N*1e9, best[1]/N*1e9, best[2]/N*1e9, best[3]/N*1e9);
  int s=0; for(int i=0;i<12;i++) s+=_mm256_extract_epi16(a[i],0); return s==12345;
}
