// Prefill attention alone: N positions causally, `group` query heads per KV head, f16 cache;
// qb_attention_group per position against qb_attention_rows in chunks of P; thread CPU
// time, best of 5; and whether the outputs are bitwise equal. Link it with one kernel set
// compiled on its own, e.g. for avx2 (from the repository's root):
//   printf '#define QB_ISA avx2\n#include "qb_isa_unit.h"\n' > set.c
//   clang -O3 -ffp-contract=on -march=x86-64-v3 -ISources/CQBKernels/kernels -ISources/CQBKernels/include -c set.c
//   clang -O2 -DQB_ISA=avx2 -ISources/CQBKernels/kernels -ISources/CQBKernels/include -c attention-rows-bench.c
//   clang set.o attention-rows-bench.o -lm -o bench && ./bench 256 4 512 8   # head size, group, N, P
// (avx512: -march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512 and -DQB_ISA=avx512.)
#include "qb_isa_names.h"
#include "qb_kernel_list.h"
#include "qb_formats.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void){struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t); return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){
  int hd=atoi(argv[1]), group=atoi(argv[2]), N=atoi(argv[3]), P=atoi(argv[4]);
  uint16_t *k=malloc(N*hd*2),*v=malloc(N*hd*2); float *q=malloc(N*group*hd*4),*out=malloc(N*group*hd*4),*out2=malloc(N*group*hd*4),*scores=malloc((size_t)P*group*(N+P)*4);
  srand(1); for(int i=0;i<N*hd;i++){float a=(rand()/(float)RAND_MAX-0.5f); _Float16 h=a; memcpy(k+i,&h,2); h=a*0.5f; memcpy(v+i,&h,2);}
  for(int i=0;i<N*group*hd;i++) q[i]=rand()/(float)RAND_MAX-0.5f;
  double b1=1e9,b2=1e9;
  for(int rep=0;rep<5;rep++){ double t0=now();
   for(int t=0;t<N;t++) qb_attention_group(QB_F16,q+t*group*hd,k,v,0,t+1,hd,group,0.06f,scores,out+t*group*hd);
   double dt=now()-t0; if(dt<b1)b1=dt;
   t0=now();
   for(int t=0;t<N;t+=P) qb_attention_rows(QB_F16,q+t*group*hd,group*hd,(N-t<P?N-t:P),k,v,t+1,0,hd,group,0.06f,scores,out2+t*group*hd,group*hd);
   dt=now()-t0; if(dt<b2)b2=dt;}
  double macs=2.0*group*hd*(double)N*(N+1)/2;
  printf("hd %d group %d N %d P %d: per-position %.2f ms (%.1f GF/s), rows %.2f ms (%.1f GF/s) %.2fx, identical %d\n",hd,group,N,P,b1*1e3,2*macs/b1/1e9,b2*1e3,2*macs/b2/1e9,b1/b2, memcmp(out,out2,(size_t)N*group*hd*4)==0);
}
