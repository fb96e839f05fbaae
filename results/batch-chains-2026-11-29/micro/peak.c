// vpdpbusd throughput: alone, and in the shape of the tile kernel's per-row work (a chain of
// eight, then convert, multiply, fma), with one or two chains per row.
#include <immintrin.h>
#include <stdio.h>
#include <stdint.h>
#include <time.h>
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9;}
int32_t mem[64] __attribute__((aligned(64)));
__attribute__((noinline)) __m512i regonly(long n, __m512i a, __m512i b) {
  __m512i c[12]; for (int i=0;i<12;i++) c[i]=_mm512_set1_epi32(i);
  for (long k=0;k<n;k++) { for (int i=0;i<12;i++) c[i]=_mm512_dpbusd_epi32(c[i],a,b); __asm__ volatile("" : "+v"(a)); }
  __m512i s=c[0]; for(int i=1;i<12;i++) s=_mm512_add_epi32(s,c[i]); return s;
}
__attribute__((noinline)) __m512i membc(long n, __m512i a, const int32_t *p) {
  __m512i c[12]; for (int i=0;i<12;i++) c[i]=_mm512_set1_epi32(i);
  for (long k=0;k<n;k++) { for (int i=0;i<12;i++) c[i]=_mm512_dpbusd_epi32(c[i],a,_mm512_set1_epi32(p[i])); __asm__ volatile("" : "+r"(p)); }
  __m512i s=c[0]; for(int i=1;i<12;i++) s=_mm512_add_epi32(s,c[i]); return s;
}
// 8 dpbusd + mul + cvt + fma per "row"
__attribute__((noinline)) __m512 mix(long n, __m512i a, const int32_t *p, __m512 d) {
  __m512 acc[4]; for (int i=0;i<4;i++) acc[i]=_mm512_setzero_ps();
  for (long k=0;k<n;k++) { for (int r=0;r<4;r++) { __m512i q=_mm512_set1_epi32(p[16+r]);
     for (int j=0;j<8;j++) q=_mm512_dpbusd_epi32(q,a,_mm512_set1_epi32(p[j]));
     acc[r]=_mm512_fmadd_ps(_mm512_cvtepi32_ps(q), _mm512_mul_ps(d,_mm512_set1_ps(((float*)p)[r+8])), acc[r]); }
     __asm__ volatile("" : "+r"(p)); }
  return _mm512_add_ps(_mm512_add_ps(acc[0],acc[1]),_mm512_add_ps(acc[2],acc[3]));
}

__attribute__((noinline)) __m512 mix2(long n, __m512i a, const int32_t *p, __m512 d) {
  __m512 acc[4]; for (int i=0;i<4;i++) acc[i]=_mm512_setzero_ps();
  for (long k=0;k<n;k++) { for (int r=0;r<4;r++) { __m512i q=_mm512_set1_epi32(p[16+r]), s=_mm512_setzero_si512();
     for (int j=0;j<8;j+=2) { q=_mm512_dpbusd_epi32(q,a,_mm512_set1_epi32(p[j])); s=_mm512_dpbusd_epi32(s,a,_mm512_set1_epi32(p[j+1])); }
     q=_mm512_add_epi32(q,s);
     acc[r]=_mm512_fmadd_ps(_mm512_cvtepi32_ps(q), _mm512_mul_ps(d,_mm512_set1_ps(((float*)p)[r+8])), acc[r]); }
     __asm__ volatile("" : "+r"(p)); }
  return _mm512_add_ps(_mm512_add_ps(acc[0],acc[1]),_mm512_add_ps(acc[2],acc[3]));
}
__attribute__((noinline)) __m512 mix8(long n, __m512i a, const int32_t *p, __m512 d) {
  __m512 acc[8]; for (int i=0;i<8;i++) acc[i]=_mm512_setzero_ps();
  for (long k=0;k<n;k++) { for (int r=0;r<8;r++) { __m512i q=_mm512_set1_epi32(p[16+r]);
     for (int j=0;j<8;j++) q=_mm512_dpbusd_epi32(q,a,_mm512_set1_epi32(p[j]));
     acc[r]=_mm512_fmadd_ps(_mm512_cvtepi32_ps(q), _mm512_mul_ps(d,_mm512_set1_ps(((float*)p)[r+8])), acc[r]); }
     __asm__ volatile("" : "+r"(p)); }
  __m512 s=acc[0]; for(int i=1;i<8;i++) s=_mm512_add_ps(s,acc[i]); return s;
}
__attribute__((noinline)) __m512 mix8b(long n, __m512i a, const int32_t *p, __m512 d) {
  __m512 acc[8]; for (int i=0;i<8;i++) acc[i]=_mm512_setzero_ps();
  for (long k=0;k<n;k++) { for (int r=0;r<8;r++) { __m512i q=_mm512_set1_epi32(p[16+r]), s=_mm512_setzero_si512();
     for (int j=0;j<8;j+=2) { q=_mm512_dpbusd_epi32(q,a,_mm512_set1_epi32(p[j])); s=_mm512_dpbusd_epi32(s,a,_mm512_set1_epi32(p[j+1])); }
     q=_mm512_add_epi32(q,s);
     acc[r]=_mm512_fmadd_ps(_mm512_cvtepi32_ps(q), _mm512_mul_ps(d,_mm512_set1_ps(((float*)p)[r+8])), acc[r]); }
     __asm__ volatile("" : "+r"(p)); }
  __m512 s=acc[0]; for(int i=1;i<8;i++) s=_mm512_add_ps(s,acc[i]); return s;
}
int main(){ long n=20000000; __m512i a=_mm512_set1_epi8(1); volatile int sink;
 for(int rep=0;rep<3;rep++){
 double t=now(); __m512i r=regonly(n/4,a,a); double g1=12.0*(n/4)/(now()-t)/1e9; sink=_mm512_reduce_add_epi32(r);
 t=now(); r=membc(n/4,a,mem); double g2=12.0*(n/4)/(now()-t)/1e9; sink=_mm512_reduce_add_epi32(r);
 t=now(); __m512 f=mix(n/8,a,mem,_mm512_set1_ps(1)); double g3=32.0*(n/8)/(now()-t)/1e9; sink=(int)_mm512_reduce_add_ps(f);
 t=now(); f=mix2(n/8,a,mem,_mm512_set1_ps(1)); double g4=32.0*(n/8)/(now()-t)/1e9; sink=(int)_mm512_reduce_add_ps(f);
 t=now(); f=mix8(n/16,a,mem,_mm512_set1_ps(1)); double g5=64.0*(n/16)/(now()-t)/1e9; sink=(int)_mm512_reduce_add_ps(f);
 t=now(); f=mix8b(n/16,a,mem,_mm512_set1_ps(1)); double g6=64.0*(n/16)/(now()-t)/1e9; sink=(int)_mm512_reduce_add_ps(f);
 printf("vpdpbusd G/s: 4 rows as two 4-long chains + add, mul, cvt, fma %.2f; 8 rows of 8-long chains %.2f; 8 rows as two 4-long chains %.2f\n", g4,g5,g6);
 printf("vpdpbusd G/s: independent, register operands %.2f; memory broadcast operand %.2f; 4 rows of 8-long chains + mul, cvt, fma %.2f\n", g1, g2, g3);}
}
