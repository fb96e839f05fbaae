#!/bin/bash
# Batched decode of files whose matrices are super-block rows (Q5_K_M: Q5_K and Q6_K;
# IQ4_XS), the tree before (qb-before, the release build of 3cedf5d) and after (qb-after,
# ada9874), alternating, on both kernel sets; whole steps and layer 0's gate+up
# (serve --bench-batch).
#   BIN=<folder of qb-before, qb-after> MODELS=<folder of the GGUF files> ./run.sh > run.txt
for r in 1 2; do
  for set in ${SETS:-avx2 avx512}; do
    for m in ${FILES:-l1b-Q5_K_M.gguf l1b-IQ4_XS.gguf}; do
      for b in before after; do
        echo "== round $r $set $m qb-$b $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
        QB_KERNELS=$set ${BIN:?}/qb-$b serve -m ${MODELS:?}/$m --threads ${T:-2} --bench-batch 1,4,8 2>&1 | grep -vi "^CPU\|warning"
      done
    done
  done
done
