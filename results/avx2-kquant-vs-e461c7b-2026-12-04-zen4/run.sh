#!/bin/sh
# avx2 set (QB_KERNELS=avx2, the x86-64-v3 code) on AMD EPYC Zen 4: e461c7b (before the
# per-256 K-quant trials) against 332f5ba, two threads, 8 rounds. BIN/qb-avx2-<x> runs
# BIN/quantbench-<x> with QB_KERNELS=avx2.
set -e
for f in Q6_K-pure Q3_K_M; do
  BIN/qb-avx2-q6e ab --baseline BIN/qb-avx2-e461c7b --candidate BIN/qb-avx2-q6e \
    --model MODELS/l1b-$f.gguf --pp 512 --tg 0 --threads 2 --rounds 8 --max-rounds 8 --max-seconds 900 \
    --out $f-pp512.json --summary $f-pp512.md
done
