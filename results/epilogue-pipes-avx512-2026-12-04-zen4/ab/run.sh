#!/bin/sh
# Side by side, interleaved (quantbench ab), avx512 set on AMD EPYC Zen 4: 6aa7867 (baseline)
# against the candidate (Q6_K's two halves through one u per block). BIN and MODELS as in
# the README.
set -e
BIN/quantbench-q6e ab --baseline BIN/quantbench-6aa7867 --candidate BIN/quantbench-q6e \
  --model MODELS/l1b-Q6_K-pure.gguf --pp 512 --tg 0 --threads 2 --rounds 8 --max-rounds 8 --max-seconds 900 \
  --out q6k-pp512.json --summary q6k-pp512.md
BIN/quantbench-q6e ab --baseline BIN/quantbench-6aa7867 --candidate BIN/quantbench-q6e \
  --model MODELS/l1b-Q4_K_M.gguf --pp 512 --tg 0 --threads 2 --rounds 8 --max-rounds 8 --max-seconds 900 \
  --out q4km-pp512.json --summary q4km-pp512.md
