#!/bin/bash
# serve --bench-batch 1,2,4,8 on the 1B Q4_K_M, avx2 set, two threads: qb-unr (4c12f40's
# release build) and qb-kunr4 (with the Q4_K rows' loop unrolled too) taking turns, four rounds.
for round in 1 2 3 4; do
  for b in qb-unr qb-kunr4; do
    echo "### round $round $b $(date -u +%H:%M:%S)"
    QB_KERNELS=avx2 BIN/$b serve --model MODELS/l1b-Q4_K_M.gguf --threads 2 --bench-batch 1,2,4,8 2>&1 | tail -18
  done
done
