#!/bin/bash
# Batched decode of Q4_K_M, the tree before (qb-split, 16bbb36) and after (qb-q4krows, f87d4b3), alternating.
M=${MODELS:?set MODELS}/l1b-Q4_K_M.gguf
for r in 1 2 3; do
  for b in split q4krows; do
    echo "== round $r qb-$b $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
    ./qb-$b serve -m $M --threads ${T:-2} --bench-batch 1,2,4,8 2>&1
  done
done
