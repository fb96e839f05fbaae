#!/bin/bash
# Batched decode on the avx2 set, the tree before (qb-d50, the release build of 21f9b69,
# decode kernels d5028f4's) and after (qb-$AFTER: b2 = f7fb5f6, q8 = 08f6520), alternating;
# whole steps and layer 0's gate+up (serve --bench-batch).
#   MODELS=… GEMMA=… ./run.sh > run.txt
#   AFTER=q8 FILES="l1b-Q8_0.gguf gemma" MODELS=… GEMMA=… ./run.sh > run-q8.txt
cd "$(dirname "$0")"
AFTER=${AFTER:-b2}
FILES=${FILES:-"l1b-Q4_0.gguf l1b-Q4_K_M.gguf l1b-mlx-q4-g64 l1b-Q5_0.gguf gemma"}
for r in 1 2; do
  for m in $FILES; do
    f=${MODELS:?}/$m; [ $m = gemma ] && f=${GEMMA:?}
    for b in d50 $AFTER; do
      echo "== round $r $m qb-$b $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
      QB_KERNELS=avx2 ./qb-$b serve -m $f --threads ${T:-2} --bench-batch 1,4,8 2>&1 | grep -vi "^CPU\|warning"
    done
  done
done
