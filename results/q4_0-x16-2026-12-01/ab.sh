#!/bin/sh
# The engine, 1B Llama Q4_0 (make-model llama-3.2-1b --seed 1, quantized by llama.cpp's
# llama-quantize), two threads, alternating ABBA rounds. $BIN/qb-f32rows: the release build
# of 6f3be03's engine (0b0b4e3 and 149086e changed comments, names and one f16 row tail: no
# Q4_0 code); $BIN/qb-x16: this change. The -avx2 wrappers run `QB_KERNELS=avx2 exec <binary> "$@"`.
# `ab` writes its history database in the working folder: run from a scratch folder.
set -e
OUT=${OUT:-$PWD}
$BIN/qb-x16 ab --baseline $BIN/qb-f32rows --candidate $BIN/qb-x16 --model $MODELS/l1b-Q4_0.gguf --threads 2 \
    --tg 128 --rounds 8 --max-rounds 8 --max-seconds 1200 --out $OUT/tg128-avx512.json --summary $OUT/tg128-avx512.md
$BIN/qb-x16 ab --baseline $BIN/qb-f32rows --candidate $BIN/qb-x16 --model $MODELS/l1b-Q4_0.gguf --threads 2 \
    --pp 128,512 --rounds 8 --max-rounds 8 --max-seconds 1200 --out $OUT/pp-avx512.json --summary $OUT/pp-avx512.md
# The avx2 set repacks Q4_0 in four-row groups as before: its decode should not move.
$BIN/qb-x16 ab --baseline $BIN/qb-f32rows-avx2 --candidate $BIN/qb-x16-avx2 --model $MODELS/l1b-Q4_0.gguf --threads 2 \
    --tg 128 --rounds 4 --max-rounds 4 --max-seconds 1200 --out $OUT/tg128-avx2.json --summary $OUT/tg128-avx2.md
