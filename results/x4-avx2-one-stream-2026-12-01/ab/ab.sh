#!/bin/sh
# The engine, paired (ab, ABBA, one process per side per round), avx2 set, all three built
# here with the same toolchain; each *_AVX2 is a one-line wrapper: QB_KERNELS=avx2 exec $BIN "$@"
#   BASE_AVX2  5d60bf7: one activation row against two four-row groups at a time
#   Q8_AVX2    the Q8_0 kernel a group at a time (q8_0x4), the nibble types as in 5d60bf7
#   NEW_AVX2   the nibble types a group at a time too (nibbles_x4); NEW its binary
# MODELS holds l1b-Q8_0.gguf and l1b-Q5_0.gguf; GEMMA is gemma-3-270m-q4_k_m.gguf (its head
# is Q8_0, 81 of its matrices Q5_0).
set -u
run() { name=$1; shift; echo "### [$(date -u +%H:%M:%S)] $name"; "$NEW" ab "$@" --out "$name.json" --summary "$name.md" > "$name.log" 2>&1; echo "rc=$?"; grep -E '^\| tg' "$name.md" | head -1; }
run Q8_0-2t-avx2 --baseline "$BASE_AVX2" --candidate "$Q8_AVX2" --model "$MODELS/l1b-Q8_0.gguf" --threads 2 --pp 16 --tg 64 --repetitions 1 --rounds 12 --max-rounds 12 --max-seconds 900
run Q8_0-1t-avx2 --baseline "$BASE_AVX2" --candidate "$Q8_AVX2" --model "$MODELS/l1b-Q8_0.gguf" --threads 1 --pp 16 --tg 64 --repetitions 1 --rounds 8 --max-rounds 8 --max-seconds 900
run gemma-2t-avx2 --baseline "$BASE_AVX2" --candidate "$Q8_AVX2" --model "$GEMMA" --threads 2 --pp 16 --tg 128 --repetitions 3 --rounds 8 --max-rounds 8 --max-seconds 900
run gemma-1t-avx2 --baseline "$BASE_AVX2" --candidate "$Q8_AVX2" --model "$GEMMA" --threads 1 --pp 16 --tg 128 --repetitions 3 --rounds 8 --max-rounds 8 --max-seconds 900
run Q5_0-2t-avx2 --baseline "$Q8_AVX2" --candidate "$NEW_AVX2" --model "$MODELS/l1b-Q5_0.gguf" --threads 2 --pp 16 --tg 64 --repetitions 1 --rounds 10 --max-rounds 10 --max-seconds 900
run Q5_0-1t-avx2 --baseline "$Q8_AVX2" --candidate "$NEW_AVX2" --model "$MODELS/l1b-Q5_0.gguf" --threads 1 --pp 16 --tg 64 --repetitions 1 --rounds 8 --max-rounds 8 --max-seconds 900
run gemma-nib-2t-avx2 --baseline "$Q8_AVX2" --candidate "$NEW_AVX2" --model "$GEMMA" --threads 2 --pp 16 --tg 128 --repetitions 3 --rounds 8 --max-rounds 8 --max-seconds 900
run gemma-nib-1t-avx2 --baseline "$Q8_AVX2" --candidate "$NEW_AVX2" --model "$GEMMA" --threads 1 --pp 16 --tg 128 --repetitions 3 --rounds 8 --max-rounds 8 --max-seconds 900
