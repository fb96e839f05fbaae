// The read rate attention-stream.c's memory case could reach with no arithmetic: one thread
// reads 512 heads' f16 keys and values (4096 rows of 128 bytes each, on 2 MiB-aligned
// MADV_HUGEPAGE memory, as there) with 64-byte loads, keys then values per head, and prints
// ns per 16-position tile (4 KiB) and GB/s, best of 5. Argument: the software prefetch
// distance in rows (0: none). `clang -O2 -march=native read-stream.c -o read-stream`.
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9;}
static void *huge(size_t n){ n=(n+(2<<20)-1)/(2<<20)*(2<<20); void*p=aligned_alloc(2<<20,n); madvise(p,n,MADV_HUGEPAGE); memset(p,1,n); return p;}
int main(int argc,char**argv){
  int n=4096, heads=512, pf=atoi(argv[1]); size_t row=128;
  uint8_t *kf=huge((size_t)heads*n*row), *vf=huge((size_t)heads*n*row);
  double best=1e9; __m512i acc=_mm512_setzero_si512();
  for(int rep=0;rep<5;rep++){ double t0=now();
    for(int h=0;h<heads;h++){ const uint8_t* bases[2]={kf+(size_t)h*n*row, vf+(size_t)h*n*row};
      for(int b=0;b<2;b++){ const uint8_t*x=bases[b];
        for(size_t i=0;i<(size_t)n*row;i+=64){ if(pf) _mm_prefetch((const char*)x+i+pf*row,_MM_HINT_T0); acc=_mm512_add_epi32(acc,_mm512_loadu_si512(x+i)); }}}
    double dt=(now()-t0)/heads/(n/16)*1e9; if(dt<best)best=dt; }
  printf("pf %d: read-only ns per tile %.1f GB/s %.1f (%d)\n",pf,best,4096/best,_mm512_reduce_add_epi32(acc)&1);
}
