// One-thread decode attention of one KV head's group (head size 64, four query heads: Llama
// 3.2 1B's shape) at depth N on the avx512 set, two builds of the kernels in one process and
// on the same buffers, taken in turn: BASE (the parent's sources, compiled with avx512 flags
// under the avx2 set's names) and NEW (this commit's). ns per 16-position tile (its keys and
// values), best of REPS, from cache (one head's cache reused: 1 MB at 4096 positions, in L2)
// and from memory (HEADS heads' caches in turn, more than the 260 MiB L3). Buffers on 2
// MiB-aligned MADV_HUGEPAGE memory as the engine's. From the repository's root:
//   git archive PARENT Sources/CQBKernels | tar -x -C base
//   printf '#define QB_ISA avx2\n#include "qb_isa_unit.h"\n' > b.c     # names only
//   printf '#define QB_ISA avx512\n#include "qb_isa_unit.h"\n' > n.c
//   F="-O3 -march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512 -ffp-contract=on"
//   clang $F -Ibase/Sources/CQBKernels/kernels -Ibase/Sources/CQBKernels/include -c b.c
//   clang $F -ISources/CQBKernels/kernels -ISources/CQBKernels/include -c n.c
//   clang -O2 -march=x86-64-v3 -ISources/CQBKernels/include attention-stream.c n.o b.o -o attention-stream -lm
//   ./attention-stream 4096 512 8
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include "qb_formats.h"
void qb_avx2_attention_group(int32_t, const float *, const void *, const void *, int64_t, int64_t, int64_t, int64_t, float, float *, float *);
void qb_avx512_attention_group(int32_t, const float *, const void *, const void *, int64_t, int64_t, int64_t, int64_t, float, float *, float *);
void qb_avx512_store_kv_f16(const float *, uint16_t *, int64_t);
void qb_avx512_store_kv_q8_0(const float *, void *, int64_t);
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9;}
static void *huge(size_t n){ n=(n+(2<<20)-1)/(2<<20)*(2<<20); void*p=aligned_alloc(2<<20,n); madvise(p,n,MADV_HUGEPAGE); memset(p,1,n); return p;}
int main(int argc, char **argv) {
  int n = atoi(argv[1]), heads = atoi(argv[2]), reps = atoi(argv[3]), hd = 64, group = 4;
  size_t rowf = hd * 2, rowq = hd / 32 * 34;
  uint8_t *kf = huge(heads * n * rowf), *vf = huge(heads * n * rowf), *kq = huge(heads * n * rowq), *vq = huge(heads * n * rowq);
  float r[64]; srand(5);
  for (size_t i = 0; i < (size_t)heads * n; i++) {
    for (int c = 0; c < hd; c++) r[c] = rand() / (float)RAND_MAX - 0.5f;
    qb_avx512_store_kv_f16(r, (uint16_t *)(kf + i * rowf), hd); qb_avx512_store_kv_q8_0(r, kq + i * rowq, hd);
    for (int c = 0; c < hd; c++) r[c] = rand() / (float)RAND_MAX - 0.5f;
    qb_avx512_store_kv_f16(r, (uint16_t *)(vf + i * rowf), hd); qb_avx512_store_kv_q8_0(r, vq + i * rowq, hd);
  }
  float q[256], out[256], *scores = malloc(group * n * 4);
  for (int i = 0; i < 256; i++) q[i] = rand() / (float)RAND_MAX - 0.5f;
  double best[8]; for (int i = 0; i < 8; i++) best[i] = 1e9;
  for (int rep = 0; rep < reps; rep++) for (int s8 = 0; s8 < 8; s8++) {
    int s = (s8 + rep) % 8, nw = s / 4, f16 = s % 2 == 0, mem = s % 4 >= 2; int cnt = mem ? heads : 16;
    double t0 = now();
    for (int h = 0; h < cnt; h++) {
      size_t o = mem ? (size_t)h * n : 0;
      if (f16) (nw ? qb_avx512_attention_group : qb_avx2_attention_group)(QB_F16, q, kf + o * rowf, vf + o * rowf, 0, n, hd, group, 0.125f, scores, out);
      else (nw ? qb_avx512_attention_group : qb_avx2_attention_group)(QB_Q8_0, q, kq + o * rowq, vq + o * rowq, 0, n, hd, group, 0.125f, scores, out);
    }
    double dt = (now() - t0) / cnt / (n / 16) * 1e9; if (dt < best[s]) best[s] = dt;
  }
  for (int b = 0; b < 2; b++)
    printf("n %d %s: ns per 16-position tile (K and V): cache f16 %.1f q8_0 %.1f | memory f16 %.1f q8_0 %.1f; memory GB/s f16 %.1f q8_0 %.1f\n", n, b ? "NEW" : "BASE",
           best[4 * b], best[4 * b + 1], best[4 * b + 2], best[4 * b + 3], 16 * rowf * 2 / best[4 * b + 2], 16 * rowq * 2 / best[4 * b + 3]);
}
