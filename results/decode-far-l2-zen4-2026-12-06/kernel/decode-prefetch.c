// One-row decode from memory on one thread (or two): the 1B's 112 layer shapes as Q4_K in
// sixteen-row groups (547 MB) and its head as Q6_K in sixteen-row groups (215 MB), on each
// set with the streams' prefetches off (AMD's default), their own (into L1 two group-blocks
// ahead and into L2 12 KiB ahead), and into L2 only, 12, 24 or 48 KiB ahead; beside the
// read probe over the same bytes. GB/s median [min, max] over the passes, and the median
// [quartiles] of each variant's ratio to its set's "off" in the same pass. Built from units of
// one tree with ../tried/decode-prefetch-variants.diff applied, each under its own prefix:
//   A=-march=x86-64-v3; P="-march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512"
//   unit() { printf '#define QB_ISA %s\n#include "qb_isa_unit.h"\n' $1 > u_$1.c
//            clang -O3 -ffp-contract=on $2 -ITREE/Sources/CQBKernels/kernels -ITREE/Sources/CQBKernels/include -c u_$1.c -o u_$1.o; }
//   unit t256 "$A"; unit f256 "$A -DPFV=2 -DPFD=12288"; unit g256 "$A -DPFV=2 -DPFD=24576"; unit h256 "$A -DPFV=2 -DPFD=49152"
//   unit t512 "$P"; unit f512 "$P -DPFV=2 -DPFD=12288"; unit g512 "$P -DPFV=2 -DPFD=24576"; unit h512 "$P -DPFV=2 -DPFD=49152"
//   clang -O2 -march=x86-64-v3 -ITREE/Sources/CQBKernels/include decode-prefetch.c u_*.o -lpthread -lm -o decode-prefetch
//   ./decode-prefetch 21 1
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
typedef void (*kfn)(const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t);
#define SET(p) void qb_##p##_matvec_q4_k_x16(const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t); \
  void qb_##p##_matvec_q6_k_x16(const void *, const qb_q8k *, float *, int64_t, int64_t, int64_t); \
  int32_t qb_##p##_set_stream_prefetch(int32_t); void qb_##p##_quantize_q8k(const float *, qb_q8k *, int64_t); \
  uint64_t qb_##p##_read_bandwidth_kernel(const void *, int64_t);
SET(t256) SET(f256) SET(g256) SET(h256) SET(t512) SET(f512) SET(g512) SET(h512)
#define U(p, nm, on) {#p " " nm, qb_##p##_matvec_q4_k_x16, qb_##p##_matvec_q6_k_x16, qb_##p##_set_stream_prefetch, on}
static const struct { const char *name; kfn q4, q6; int32_t (*pf)(int32_t); int on; } U[] = {
  U(t256, "off", 0), U(t256, "own", 1), U(f256, "L2 12K", 1), U(g256, "L2 24K", 1), U(h256, "L2 48K", 1),
  U(t512, "off", 0), U(t512, "own", 1), U(f512, "L2 12K", 1), U(g512, "L2 24K", 1), U(h512, "L2 48K", 1),
  {"probe", 0, 0, 0, -1}};
enum { NU = sizeof U / sizeof U[0], NV = 2 * NU, NM = 112, HEAD = 128256 };
static uint8_t *w[NM], *head; static int64_t R[NM], C[NM]; static qb_q8k *xk; static float *y;
static int threads = 1; static _Atomic int arrived, generation, stop, cur; static _Thread_local uint64_t sink;
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void barrier(void){ if(threads==1)return; int g=atomic_load(&generation);
  if(atomic_fetch_add(&arrived,1)==threads-1){atomic_store(&arrived,0);atomic_fetch_add(&generation,1);} else while(atomic_load(&generation)==g)_mm_pause(); }
static void share(int v, const uint8_t *m, int64_t r, int64_t c, int t){
  const int u = v % NU, q6 = v >= NU; const int64_t gb = c / 256 * (q6 ? 3360 : 2304), groups = r / 16;
  const int64_t a = t * groups / threads, b = (t + 1) * groups / threads;
  if (U[u].on < 0) sink ^= qb_t256_read_bandwidth_kernel(m + a * gb, (b - a) * gb / 256 * 256);
  else (q6 ? U[u].q6 : U[u].q4)(m, xk, y, a, b, c);
}
static void work(int v, int t){ if (v >= NU) { share(v, head, HEAD, 2048, t); barrier(); return; }
  for (int i = 0; i < NM; i++) { share(v, w[i], R[i], C[i], t); barrier(); } }
static void *worker(void *u){(void)u; for(;;){barrier(); if(atomic_load(&stop))return 0; work(atomic_load(&cur),1);} }
static uint32_t seed = 1;
static uint8_t *matrix(int64_t n, int gb, int halves){ int64_t hn=(n+(2<<20)-1)/(2<<20)*(2<<20); uint8_t*p=aligned_alloc(2<<20,hn); madvise(p,hn,MADV_HUGEPAGE);
  for(int64_t k=0;k<n;k++)p[k]=(uint8_t)((seed=seed*1664525u+1013904223u)>>24);
  for(int64_t u=0;u<n/gb;u++)for(int h=0;h<halves;h++)memcpy(p+u*gb+2*h,&(uint16_t){0x2E66},2); return p; }
static int cmp(const void*a,const void*b){double x=*(const double*)a,z=*(const double*)b;return (x>z)-(x<z);}
int main(int argc,char**argv){
  int passes=argc>1?atoi(argv[1]):9; threads=argc>2?atoi(argv[2]):1;
  static const int64_t layer[7][2]={{2048,2048},{512,2048},{512,2048},{2048,2048},{8192,2048},{8192,2048},{2048,8192}};
  int64_t lb=0; for(int i=0;i<NM;i++){R[i]=layer[i%7][0];C[i]=layer[i%7][1];int64_t n=R[i]/16*(C[i]/256)*2304; w[i]=matrix(n,2304,32); lb+=n;}
  const int64_t hb=(int64_t)HEAD/16*8*3360; head=matrix(hb,3360,16);
  float*x=malloc(8192*4);for(int i=0;i<8192;i++)x[i]=(float)((seed=seed*1664525u+1013904223u)>>8)/16777216.0f-0.5f;
  xk=aligned_alloc(64,32*sizeof(qb_q8k)); qb_t256_quantize_q8k(x,xk,8192); y=aligned_alloc(64,HEAD*4);
  pthread_t th; if(threads==2)pthread_create(&th,0,worker,0);
  double*g=calloc(NV*passes,8);
  for(int p=-1;p<passes;p++)for(int j=0;j<NV;j++){int v=(j+(p<0?0:p))%NV, u=v%NU;
    if(U[u].on>=0)U[u].pf(U[u].on); atomic_store(&cur,v);
    double t0=now(); barrier(); work(v,0); double t=now()-t0; if(p>=0)g[v*passes+p]=(v>=NU?hb:lb)/t/1e9;}
  if(threads==2){atomic_store(&stop,1);barrier();pthread_join(th,0);}
  printf("%d thread(s), from memory: Q4_K layers %.0f MB, Q6_K head %.0f MB, %d passes. GB/s median [min,max]; ratio to the set's off, same pass, median [quartiles]\n",threads,lb/1e6,hb/1e6,passes);
  double*rr=calloc(passes,8);
  for(int v=0;v<NV;v++){int u=v%NU, base=(v/NU)*NU+(u>=5&&u<10?5:0); for(int p=0;p<passes;p++)rr[p]=g[v*passes+p]/g[base*passes+p]; qsort(rr,passes,8,cmp);
    qsort(g+v*passes,passes,8,cmp); printf("  %s %-12s %6.2f [%6.2f, %6.2f]  ratio %.3f [%.3f, %.3f]\n",v>=NU?"Q6_K":"Q4_K",U[u].name,g[v*passes+passes/2],g[v*passes],g[v*passes+passes-1],rr[passes/2],rr[passes/4],rr[3*passes/4]);}
  return (int)(sink&0);
}
