#!/bin/bash
# As run.sh, for the Q8_0 multi-row kernel: before (qb-d50) and after (qb-q8), the 1B Q8_0
# and Gemma 3 270M (its tied 262,144-row head is Q8_0, 178 of its 246 MB).
cd "$(dirname "$0")"
for r in 1 2; do
  for m in l1b-Q8_0.gguf gemma; do
    f=${MODELS:?}/$m; [ $m = gemma ] && f=${GEMMA:?}
    for b in d50 q8; do
      echo "== round $r $m qb-$b $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
      QB_KERNELS=avx2 ./qb-$b serve -m $f --threads ${T:-2} --bench-batch 1,4,8 2>&1 | grep -vi "^CPU\|warning"
    done
  done
done
