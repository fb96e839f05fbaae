#!/bin/bash
# Batched decode of Q4_K_M, the tree before (qb-mlxrows, e79ee5b) and after (qb-q6krows, 71e9f3f), alternating.
M=${MODELS:?set MODELS}/l1b-Q4_K_M.gguf
for r in 1 2 3; do
  for b in mlxrows q6krows; do
    echo "== round $r qb-$b $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
    ./qb-$b serve -m $M --threads ${T:-2} --bench-batch 1,2,4,8 2>&1
  done
done
