#!/bin/sh
# The 4-bit AVX2 tile path (rewritten as one kernel for every width) against main's, on Q4_0.
H=.
uptime > $H/ab-q4_0-1b-avx2.load
QB_KERNELS=avx2 $H/qb-h1 ab --baseline $H/qb-main-avx2.sh --candidate $H/qb-h1-avx2.sh --model models/l1b-q4_0.gguf \
  --pp 512 --tg 32 --rounds 6 --max-rounds 6 --repetitions 1 --max-seconds 540 --out $H/ab-q4_0-1b-avx2.json \
  --summary $H/ab-q4_0-1b-avx2.md > $H/ab-q4_0-1b-avx2.log 2>&1
uptime >> $H/ab-q4_0-1b-avx2.load
