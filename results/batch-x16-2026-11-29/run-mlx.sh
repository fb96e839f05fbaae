#!/bin/bash
# Batched decode of the MLX conversions, the tree before (qb-q4krows, f87d4b3) and after (qb-mlxrows, e79ee5b), alternating.
for m in ${MLX:-l1b-mlx-q4-g64 l1b-mlx-q8-g64}; do
for r in 1 2 3; do
  for b in q4krows mlxrows; do
    echo "== round $r qb-$b $m $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
    ./qb-$b serve -m ${MODELS:?set MODELS}/$m --threads ${T:-2} --bench-batch 1,2,4,8 2>&1
  done
done
done
