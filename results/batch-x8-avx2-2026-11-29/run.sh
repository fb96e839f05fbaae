#!/bin/bash
# Batched decode on the avx2 set: the release builds of the tree before (qb-before) and after
# (qb-after), alternating per file; whole steps and layer 0's gate+up (serve --bench-batch).
#   MODELS=… GEMMA=… ./run.sh > run.txt
#   FILES=l1b-Q8_0.gguf MODELS=… ./run.sh > run-q8.txt   (qb-after: the Q8_0 commit's build)
cd "$(dirname "$0")"
FILES=${FILES:-"l1b-Q4_0.gguf gemma"}
for r in $(seq 1 ${ROUNDS:-2}); do
  for m in $FILES; do
    f=${MODELS:?}/$m; [ $m = gemma ] && f=${GEMMA:?}
    for b in before after; do
      echo "== round $r $m qb-$b $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
      QB_KERNELS=avx2 ./qb-$b serve -m $f --threads ${T:-2} --bench-batch 1,2,4,8 2>&1 | grep -vi "^CPU\|warning"
    done
  done
done
