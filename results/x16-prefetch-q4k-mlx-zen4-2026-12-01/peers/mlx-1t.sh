#!/bin/sh
# One-thread decode of our MLX q4-g64 conversion against ik_llama.cpp's Q4_K_M, both sets,
# two rounds, the engines swapping places each round (the side-by-side's mlx part at one thread).
set -u
lib=$SBS_DIR/side-by-side-lib.sh
for r in 1 2; do
    for set in avx512 avx2; do
        mkdir -p "$set"; cd "$set"
        if [ $set = avx2 ]; then IK=$IK_AVX2_BIN Q=$QB_AVX2; else IK=$IK_BIN Q=$QB; fi
        ( IK_BIN=$IK QB=$Q; . "$lib"
          if [ $((r % 2)) = 1 ]; then
              ik "ik-mlx-vs-Q4_K_M-1t-$r" "$MODELS/l1b-Q4_K_M.gguf" 1 0
              qb "qb-mlx-vs-Q4_K_M-1t-$r" "$MODELS/l1b-mlx-q4-g64" 1 0 --tokenizer "$MODELS/l1b-f16.gguf"
          else
              qb "qb-mlx-vs-Q4_K_M-1t-$r" "$MODELS/l1b-mlx-q4-g64" 1 0 --tokenizer "$MODELS/l1b-f16.gguf"
              ik "ik-mlx-vs-Q4_K_M-1t-$r" "$MODELS/l1b-Q4_K_M.gguf" 1 0
          fi )
        cd ..
    done
done
