#!/bin/bash
# Batched decode on the avx2 set, the tree before (qb-d50, d5028f4) and after (qb-b2),
# alternating; whole steps and layer 0's gate+up (serve --bench-batch).
cd "$(dirname "$0")"
for r in 1 2; do
  for m in l1b-Q4_0.gguf l1b-Q4_K_M.gguf l1b-mlx-q4-g64 l1b-Q5_0.gguf gemma; do
    f=${MODELS:?}/$m; [ $m = gemma ] && f=${GEMMA:?}
    for b in d50 b2; do
      echo "== round $r $m qb-$b $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
      QB_KERNELS=avx2 ./qb-$b serve -m $f --threads ${T:-2} --bench-batch 1,4,8 2>&1 | grep -vi "^CPU\|warning"
    done
  done
done
