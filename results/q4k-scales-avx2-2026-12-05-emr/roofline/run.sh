#!/bin/sh
# Interleaved: e3ca2b4 and the Q4_K scales change, avx2 kernels, 1B Q4_K_M, tg128 against the paired probe.
for r in 1 2 3; do
  for b in e3ca2b4 q4ks; do
    echo "== round $r $b"
    QB_KERNELS=avx2 BIN/qb-$b bench -m MODELS/l1b-Q4_K_M.gguf --tg 128 --pp 0 --threads 2 --repetitions 3 --roofline --no-db 2>&1 | grep -E "^\[1/1\] tg128:|probe just before"
  done
done
