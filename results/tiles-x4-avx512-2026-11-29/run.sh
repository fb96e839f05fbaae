#!/bin/bash
# Batched decode on the avx512 set: the release builds of the tree before (qb-before) and
# after (qb-after), alternating per file; whole steps and layer 0's gate+up
# (serve --bench-batch).
#   MODELS=… GEMMA=… ./run.sh > run.txt
cd "$(dirname "$0")"
FILES=${FILES:-"l1b-Q8_0.gguf l1b-Q5_0.gguf gemma"}
for r in $(seq 1 ${ROUNDS:-2}); do
  for m in $FILES; do
    f=${MODELS:?}/$m; [ $m = gemma ] && f=${GEMMA:?}
    for b in before after; do
      echo "== round $r $m qb-$b $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
      QB_KERNELS=avx512 ./qb-$b serve -m $f --threads ${T:-2} --bench-batch 1,2,4,8 2>&1 | grep -vi "^CPU\|warning"
    done
  done
done
