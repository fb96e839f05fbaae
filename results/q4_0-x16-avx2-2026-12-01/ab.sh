#!/bin/sh
# The engine, 1B Llama Q4_0 (make-model llama-3.2-1b --seed 1, quantized by llama.cpp's
# llama-quantize), two threads, alternating ABBA rounds. $BIN/qb-x16final: the release build
# of c4a9b54's engine (7740b2b changed the README only); $BIN/qb-avx2x16: 7eee74e. The -avx2
# wrappers run `QB_KERNELS=avx2 exec <binary> "$@"`. `ab` writes its history database in the
# working folder: run from a scratch folder.
set -e
OUT=${OUT:-$PWD}
$BIN/qb-avx2x16 ab --baseline $BIN/qb-x16final-avx2 --candidate $BIN/qb-avx2x16-avx2 --model $MODELS/l1b-Q4_0.gguf --threads 2 \
    --tg 128 --rounds 8 --max-rounds 8 --max-seconds 1200 --out $OUT/tg128-avx2.json --summary $OUT/tg128-avx2.md
$BIN/qb-avx2x16 ab --baseline $BIN/qb-x16final-avx2 --candidate $BIN/qb-avx2x16-avx2 --model $MODELS/l1b-Q4_0.gguf --threads 2 \
    --pp 128,512 --rounds 8 --max-rounds 8 --max-seconds 1200 --out $OUT/pp-avx2.json --summary $OUT/pp-avx2.md
# The avx512 set runs the kernel it ran before (the dispatch loop is now shared with AVX2).
$BIN/qb-avx2x16 ab --baseline $BIN/qb-x16final --candidate $BIN/qb-avx2x16 --model $MODELS/l1b-Q4_0.gguf --threads 2 \
    --tg 128 --rounds 4 --max-rounds 4 --max-seconds 1200 --out $OUT/tg128-avx512.json --summary $OUT/tg128-avx512.md
