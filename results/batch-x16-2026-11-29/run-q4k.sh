#!/bin/bash
# Batched decode of Q4_K_M, two builds alternating: PAIR="before after" names ./qb-<name>
# binaries; the Q4_K groups' run is PAIR="split q4krows" (16bbb36, f87d4b3), the Q6_K rows'
# PAIR="mlxrows q6krows" (e79ee5b, 71e9f3f).
M=${MODELS:?set MODELS}/l1b-Q4_K_M.gguf
for r in 1 2 3; do
  for b in ${PAIR:-split q4krows}; do
    echo "== round $r qb-$b $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
    ./qb-$b serve -m $M --threads ${T:-2} --bench-batch 1,2,4,8 2>&1
  done
done
