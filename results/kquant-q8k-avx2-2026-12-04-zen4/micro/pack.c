// Times the avx2 set's Q4_K packer from the 16-row decode layout (random bytes, scales
// f16 0x2000), per super-block tile. Build as gemm.c.
#include "qb_kernels_avx2.c"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(){
  const int64_t cols=2048, nsb=cols/256, rows=16;
  uint8_t *w=aligned_alloc(64,rows*nsb*2304); for(int64_t i=0;i<rows*nsb*2304;i++) w[i]=rand();
  for(int64_t i=0;i<nsb;i++){ uint16_t *h=(uint16_t*)(w+i*2304); for(int r=0;r<32;r++) h[r]=0x2000; }
  uint8_t *tile=aligned_alloc(64,nsb*QB_TILE4K_BYTES);
  double best=1e9; int reps=2000;
  for(int r=0;r<10;r++){ double t0=now(); for(int k=0;k<reps;k++){ qb_avx2_pack_tile_ggml(QB_Q4_K,16,w,0,cols,tile); __asm__ volatile(""::"r"(tile):"memory"); } double t=now()-t0; if(t<best)best=t; }
  printf("pack x16: %.1f ns per super-block tile\n", best/reps/nsb*1e9);
  // kernel time per super-block tile for 4 act rows measured: ~116 ns
}
