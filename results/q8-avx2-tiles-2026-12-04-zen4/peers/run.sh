#!/bin/sh
# Three rounds, each: ik_llama.cpp (x86-64-v3 build, IK_BIN), then 55f7c3c and this change
# (QB_KERNELS=avx2 wrappers in BIN), 2 threads, on the 1B Q8_0 in MODELS.
set -u
for r in 1 2 3; do
  "${IK_BIN:?}/llama-bench" -m "${MODELS:?}/l1b-Q8_0.gguf" -p 512,128 -n 0 -r 2 -t 2 -rtr 1 | grep -E "pp(512|128)" | sed "s/^/r$r ik /"
  for who in base x16b; do
    "${BIN:?}/qb-avx2-$who" bench -m "$MODELS/l1b-Q8_0.gguf" --pp 512,128 --tg 0 --repetitions 2 --threads 2 --no-db --out "sbs-$who-$r.json" | grep passed | sed "s/^/r$r $who /"
  done
done
