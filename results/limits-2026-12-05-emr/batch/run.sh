#!/bin/bash
# serve --bench-batch 1,8 on three files, two release builds taking turns (avx512 set, two
# threads): qb-tip, 8dbaa85's, and qb-ch2, the same with tried-two-chains-at-eight-rows.diff.
G=GEMMA_DIR/gemma-3-270m-q4_k_m.gguf
for round in 1 2 3; do
  for m in MODELS/l1b-Q4_0.gguf MODELS/l1b-Q8_0.gguf $G; do
    for b in qb-tip qb-ch2; do
      echo "### round $round $b $(basename $m) $(date -u +%H:%M:%S)"
      QB_KERNELS=avx512 BIN/$b serve --model $m --threads 2 --bench-batch 1,8 2>&1 | tail -13
    done
  done
done
