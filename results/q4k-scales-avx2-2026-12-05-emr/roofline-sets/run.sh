#!/bin/sh
# This change's binary, 1B Q4_K_M tg128 against the paired probe, the avx2 and avx512 sets taking turns.
for r in 1 2 3 4; do
  for s in avx2 avx512; do
    echo "== round $r $s"
    QB_KERNELS=$s BIN/qb-q4ks bench -m MODELS/l1b-Q4_K_M.gguf --tg 128 --pp 0 --threads 2 --repetitions 3 --roofline --no-db 2>&1 | grep -E "^\[1/1\] tg128:"
  done
done
