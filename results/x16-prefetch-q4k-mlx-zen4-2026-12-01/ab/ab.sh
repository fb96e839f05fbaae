#!/bin/sh
# One binary against itself: ON is a one-line wrapper,
#   QB_STREAM_PREFETCH=1 exec $NEW "$@"
# (the kernels' own prefetches, as before this change), the candidate NEW this CPU's default
# (AMD: the hardware prefetcher alone); ON_AVX2 and NEW_AVX2 the same under QB_KERNELS=avx2.
# MODELS holds l1b-Q4_K_M.gguf and the l1b-mlx-q4-g64 folder.
set -u
run() { name=$1; shift; echo "### [$(date -u +%H:%M:%S)] $name"; "$NEW" ab "$@" --out "$name.json" --summary "$name.md" > "$name.log" 2>&1; echo "rc=$?"; grep -E '^\| tg' "$name.md" | head -1; }
run Q4_K_M-1t-avx512 --baseline "$ON" --candidate "$NEW" --model "$MODELS/l1b-Q4_K_M.gguf" --threads 1 --pp 16 --tg 64 --repetitions 1 --rounds 8 --max-rounds 8 --max-seconds 900
run mlx-1t-avx512 --baseline "$ON" --candidate "$NEW" --model "$MODELS/l1b-mlx-q4-g64" --threads 1 --pp 16 --tg 64 --repetitions 1 --rounds 8 --max-rounds 8 --max-seconds 900
run Q4_K_M-1t-avx2 --baseline "$ON_AVX2" --candidate "$NEW_AVX2" --model "$MODELS/l1b-Q4_K_M.gguf" --threads 1 --pp 16 --tg 64 --repetitions 1 --rounds 8 --max-rounds 8 --max-seconds 900
run mlx-1t-avx2 --baseline "$ON_AVX2" --candidate "$NEW_AVX2" --model "$MODELS/l1b-mlx-q4-g64" --threads 1 --pp 16 --tg 64 --repetitions 1 --rounds 8 --max-rounds 8 --max-seconds 900
run Q4_K_M-2t-avx512 --baseline "$ON" --candidate "$NEW" --model "$MODELS/l1b-Q4_K_M.gguf" --threads 2 --pp 16 --tg 64 --repetitions 1 --rounds 8 --max-rounds 8 --max-seconds 900
run mlx-2t-avx512 --baseline "$ON" --candidate "$NEW" --model "$MODELS/l1b-mlx-q4-g64" --threads 2 --pp 16 --tg 64 --repetitions 1 --rounds 8 --max-rounds 8 --max-seconds 900
