#!/bin/bash
# Batched decode side by side: the tree before (qb-f5b, 671f865) and after (qb-split), alternating.
M=${MODELS:?set MODELS}/l1b-Q4_0.gguf
for r in 1 2 3; do
  for b in f5b split; do
    echo "== round $r qb-$b $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
    ./qb-$b serve -m $M --threads ${T:-2} --bench-batch 1,3,4,6,7,8 2>&1
  done
done
