#!/bin/sh
# The engine, paired (ab, ABBA, one process per side per round), avx2 set: one-row Q8_0 decode
# two groups at a time (BASE, 5d60bf7) against a group at a time (NEW, this change), both
# built with the same toolchain. BASE_AVX2 and NEW_AVX2 are one-line wrappers:
#   QB_KERNELS=avx2 exec $BASE "$@"
# MODELS holds l1b-Q8_0.gguf; GEMMA is gemma-3-270m-q4_k_m.gguf (its head is Q8_0).
set -u
run() { name=$1; shift; echo "### [$(date -u +%H:%M:%S)] $name"; "$NEW" ab "$@" --out "$name.json" --summary "$name.md" > "$name.log" 2>&1; echo "rc=$?"; grep -E '^\| tg' "$name.md" | head -1; }
run Q8_0-2t-avx2 --baseline "$BASE_AVX2" --candidate "$NEW_AVX2" --model "$MODELS/l1b-Q8_0.gguf" --threads 2 --pp 16 --tg 64 --repetitions 1 --rounds 12 --max-rounds 12 --max-seconds 900
run Q8_0-1t-avx2 --baseline "$BASE_AVX2" --candidate "$NEW_AVX2" --model "$MODELS/l1b-Q8_0.gguf" --threads 1 --pp 16 --tg 64 --repetitions 1 --rounds 8 --max-rounds 8 --max-seconds 900
run gemma-2t-avx2 --baseline "$BASE_AVX2" --candidate "$NEW_AVX2" --model "$GEMMA" --threads 2 --pp 16 --tg 128 --repetitions 3 --rounds 8 --max-rounds 8 --max-seconds 900
run gemma-1t-avx2 --baseline "$BASE_AVX2" --candidate "$NEW_AVX2" --model "$GEMMA" --threads 1 --pp 16 --tg 128 --repetitions 3 --rounds 8 --max-rounds 8 --max-seconds 900
