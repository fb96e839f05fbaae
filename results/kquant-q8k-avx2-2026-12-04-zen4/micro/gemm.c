// Times the avx2 set's old 4-bit tile kernel (qb_gemm_tiles, bits 4, no offsets: Q4_K's
// arithmetic before the change) against the super-block Q4_K kernel (qb_gemm_tiles_q8k),
// 4 tiles x 2048 columns x 16 activation rows, seeded (srand(1)), best of 15 passes each,
// alternating. Build from Sources/CQBKernelsAVX2:
//   clang -O3 -ffp-contract=on -march=x86-64-v3 -I ../CQBKernels/include -I include -I . \
//     -o gemm .../micro/gemm.c -lm
#include "qb_kernels_avx2.c"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){
  const int64_t cols=2048, tiles=4, count=16, nb=cols/32, nsb=cols/256;
  uint8_t *t4=aligned_alloc(64,tiles*nb*QB_TILE_BLOCK_BYTES), *tk=aligned_alloc(64,tiles*nsb*QB_TILE4K_BYTES);
  srand(1);
  for(int64_t i=0;i<tiles*nb*QB_TILE_BLOCK_BYTES;i++) t4[i]=rand()&15;
  for(int64_t i=0;i<tiles*nsb*QB_TILE4K_BYTES;i++) tk[i]=rand()&15;
  for(int64_t b=0;b<tiles*nb;b++){float*f=(float*)(t4+b*QB_TILE_BLOCK_BYTES);for(int r=0;r<32;r++)f[r]=0.01f;}
  for(int64_t b=0;b<tiles*nsb;b++){float*f=(float*)(tk+b*QB_TILE4K_BYTES);for(int r=0;r<32;r++)f[r]=0.01f;}
  qb_q8a *xa=aligned_alloc(64,sizeof(qb_q8a)*count*nb); qb_q8k *xk=aligned_alloc(64,sizeof(qb_q8k)*count*nsb);
  float *xf=malloc(4*count*cols); for(int64_t i=0;i<count*cols;i++) xf[i]=(rand()%2001-1000)/1000.0f;
  for(int c=0;c<count;c++){qb_avx2_quantize_q8a(xf+c*cols,xa+c*nb,cols);qb_avx2_quantize_q8k(xf+c*cols,xk+c*nsb,cols);}
  float *y=malloc(4*count*tiles*16);
  int reps=2000; double best4=1e9,bestk=1e9;
  for(int round=0;round<15;round++){
    double t0=now(); for(int r=0;r<reps/10;r++) qb_avx2_gemm_tiles(t4,tiles,4,xa,NULL,count,cols,y,tiles*16); double t1=now();
    for(int r=0;r<reps/10;r++) qb_avx2_gemm_tiles_q8k(QB_Q4_K,tk,tiles,xk,count,cols,y,tiles*16); double t2=now();
    if(t1-t0<best4)best4=t1-t0; if(t2-t1<bestk)bestk=t2-t1;
  }
  double macs=(double)cols*tiles*16*count*(reps/10);
  printf("old 4-bit: %.1f GMAC/s  q4k super: %.1f GMAC/s  ratio %.3f\n", macs/best4/1e9, macs/bestk/1e9, best4/bestk);
}
