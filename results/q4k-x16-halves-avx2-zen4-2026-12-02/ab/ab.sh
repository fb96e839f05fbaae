#!/bin/sh
# ab.sh NAME THREADS: fa79ef0's release binary ($BASE) against this tree's ($NEW), the avx2
# set, 1B Q4_K_M, pp16 and tg64, 24 rounds in ABBA order.
name=$1; t=$2
QB_KERNELS=avx2 $NEW ab --baseline $BASE --candidate $NEW --model $MODELS/l1b-Q4_K_M.gguf --threads $t --pp 16 --tg 64 \
    --repetitions 1 --rounds 24 --max-rounds 24 --max-seconds 1200 --out $name.json --summary $name.md
