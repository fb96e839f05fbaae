#!/bin/sh
# Q6_K rows (the 1B's output head, and its Q4_K_M file's Q6_K layers) without their own
# prefetches on AMD: BASE is this change as kept, Q6 the same with the Q6_K row kernels'
# prefetches also under the switch (a throwaway build); both at this CPU's default.
set -u
run() { name=$1; shift; echo "### [$(date -u +%H:%M:%S)] $name"; "$Q6" ab "$@" --out "$name.json" --summary "$name.md" > "$name.log" 2>&1; echo "rc=$?"; grep -E '^\| tg' "$name.md" | head -1; }
run Q4_0-1t-avx512 --baseline "$BASE" --candidate "$Q6" --model "$MODELS/l1b-Q4_0.gguf" --threads 1 --pp 16 --tg 64 --repetitions 1 --rounds 8 --max-rounds 8 --max-seconds 900
run Q4_K_M-1t-avx512 --baseline "$BASE" --candidate "$Q6" --model "$MODELS/l1b-Q4_K_M.gguf" --threads 1 --pp 16 --tg 64 --repetitions 1 --rounds 8 --max-rounds 8 --max-seconds 900
