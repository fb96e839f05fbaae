// One-row decode from memory: the 1B's 112 layer shapes as Q4_0 in sixteen-row groups
// (qb_matvec_q4_0_x16, one activation row, 547 MB), on the avx2 set with the stream's
// prefetches off (the engine's setting on AMD) and with each block's lines hinted into L2
// 12, 24 or 48 KiB ahead, the avx512 set off, and the engine's read probe over the same bytes.
// The variants take turns, the order rotated every pass. GB/s median [min, max], and each
// variant's ratio to the avx2 "off" of the same pass, median [quartiles]. Built from units of
// one tree with ../tried/q4_0-far-l2-harness.diff applied, each under its own prefix:
//   A=-march=x86-64-v3; P="-march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512"
//   unit() { printf '#define QB_ISA %s\n#include "qb_isa_unit.h"\n' $1 > u_$1.c
//            clang -O3 -ffp-contract=on $2 -ITREE/Sources/CQBKernels/kernels -ITREE/Sources/CQBKernels/include -c u_$1.c -o u_$1.o; }
//   unit t256 "$A"; unit f256 "$A -DQ40FAR=12288"; unit g256 "$A -DQ40FAR=24576"; unit h256 "$A -DQ40FAR=49152"; unit t512 "$P"
//   clang -O2 -march=x86-64-v3 -ITREE/Sources/CQBKernels/include q4_0-stream.c u_*.o -lpthread -lm -o q4_0-stream
//   ./q4_0-stream PASSES THREADS
#include <immintrin.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "qb_activation.h"
#include "qb_formats.h"
typedef void (*kfn)(const void *, const qb_q8a *const *, const int32_t *const *, float *const *, int64_t, int64_t, int64_t, int64_t);
#define SET(p) void qb_##p##_matvec_q4_0_x16(const void *, const qb_q8a *const *, const int32_t *const *, float *const *, int64_t, int64_t, int64_t, int64_t); \
  int32_t qb_##p##_set_stream_prefetch(int32_t); uint64_t qb_##p##_read_bandwidth_kernel(const void *, int64_t);
SET(t256) SET(f256) SET(g256) SET(h256) SET(t512)
#define U(p, nm) {#p " " nm, qb_##p##_matvec_q4_0_x16, qb_##p##_set_stream_prefetch}
static const struct { const char *name; kfn f; int32_t (*pf)(int32_t); } U[] = {
  U(t256, "off"), U(f256, "L2 12K"), U(g256, "L2 24K"), U(h256, "L2 48K"), U(t512, "off"), {"probe", 0, 0}};
enum { NU = sizeof U / sizeof U[0], NM = 112, GB = 288 };
static uint8_t *w[NM]; static int64_t R[NM], C[NM]; static qb_q8a *xq; static int32_t *offs; static float *y;
static int threads = 1; static _Atomic int arrived, generation, stop, cur; static _Thread_local uint64_t sink;
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void barrier(void){ if(threads==1)return; int g=atomic_load(&generation);
  if(atomic_fetch_add(&arrived,1)==threads-1){atomic_store(&arrived,0);atomic_fetch_add(&generation,1);} else while(atomic_load(&generation)==g)_mm_pause(); }
static void share(int u, const uint8_t *m, int64_t r, int64_t c, int t){
  const int64_t gb = c / 32 * GB, groups = r / 16, a = t * groups / threads, b = (t + 1) * groups / threads;
  if (!U[u].f) { sink ^= qb_t256_read_bandwidth_kernel(m + a * gb, (b - a) * gb / 256 * 256); return; }
  const qb_q8a *xs[1] = {xq}; const int32_t *os[1] = {offs}; float *ys[1] = {y};
  U[u].f(m, xs, os, ys, 1, a, b, c);
}
static void work(int u, int t){ for (int i = 0; i < NM; i++) { share(u, w[i], R[i], C[i], t); barrier(); } }
static void *worker(void *v){(void)v; for(;;){barrier(); if(atomic_load(&stop))return 0; work(atomic_load(&cur),1);} }
static uint32_t seed = 1;
static uint8_t *matrix(int64_t n){ int64_t hn=(n+(2<<20)-1)/(2<<20)*(2<<20); uint8_t*p=aligned_alloc(2<<20,hn); madvise(p,hn,MADV_HUGEPAGE);
  for(int64_t k=0;k<n;k++)p[k]=(uint8_t)((seed=seed*1664525u+1013904223u)>>24);
  for(int64_t u=0;u<n/GB;u++)for(int h=0;h<16;h++)memcpy(p+u*GB+2*h,&(uint16_t){0x2E66},2); return p; }
static int cmp(const void*a,const void*b){double x=*(const double*)a,z=*(const double*)b;return (x>z)-(x<z);}
int main(int argc,char**argv){
  int passes=argc>1?atoi(argv[1]):9; threads=argc>2?atoi(argv[2]):1;
  if(passes<1||passes>1000||threads<1||threads>2)return 2;
  static const int64_t layer[7][2]={{2048,2048},{512,2048},{512,2048},{2048,2048},{8192,2048},{8192,2048},{2048,8192}};
  int64_t lb=0; for(int i=0;i<NM;i++){R[i]=layer[i%7][0];C[i]=layer[i%7][1];int64_t n=R[i]/16*(C[i]/32)*GB; w[i]=matrix(n); lb+=n;}
  xq=aligned_alloc(64,256*sizeof(qb_q8a)); offs=calloc(256,4); y=aligned_alloc(64,8192*4);
  for(int b=0;b<256;b++){xq[b].d=0.01f;xq[b].s=0;for(int k=0;k<32;k++)xq[b].qs[k]=(int8_t)(k-16);offs[b]=-8*((int)b%7);}
  for(int u=0;u<NU;u++)if(U[u].pf)U[u].pf(0);
  pthread_t th; if(threads==2)pthread_create(&th,0,worker,0);
  double*g=calloc(NU*passes,8);
  for(int p=-1;p<passes;p++)for(int j=0;j<NU;j++){int u=(j+(p<0?0:p))%NU; atomic_store(&cur,u);
    double t0=now(); barrier(); work(u,0); double t=now()-t0; if(p>=0)g[u*passes+p]=lb/t/1e9;}
  if(threads==2){atomic_store(&stop,1);barrier();pthread_join(th,0);}
  printf("%d thread(s), from memory: Q4_0 layers %.0f MB, %d passes. GB/s median [min,max]; ratio to avx2 off, same pass, median [quartiles]\n",threads,lb/1e6,passes);
  double*rr=calloc(passes,8);
  for(int u=0;u<NU;u++){for(int p=0;p<passes;p++)rr[p]=g[u*passes+p]/g[p]; qsort(rr,passes,8,cmp); double*s=g+u*passes; double m[1000]; memcpy(m,s,passes*8); qsort(m,passes,8,cmp);
    printf("  %-12s %6.2f [%6.2f, %6.2f]  ratio %.3f [%.3f, %.3f]\n",U[u].name,m[passes/2],m[0],m[passes-1],rr[passes/2],rr[passes/4],rr[3*passes/4]);}
  return (int)(sink&0);
}
