#!/bin/bash
# serve --bench-batch 1,2,4,8 on the 1B Q4_0, avx2 set, two threads: qb-tip (8dbaa85's release
# build) and qb-unr (5f5374d with this change) taking turns, four rounds.
for round in 1 2 3 4; do
  for b in qb-tip qb-unr; do
    echo "### round $round $b $(date -u +%H:%M:%S)"
    QB_KERNELS=avx2 BIN/$b serve --model MODELS/l1b-Q4_0.gguf --threads 2 --bench-batch 1,2,4,8 2>&1 | tail -18
  done
done
