#!/bin/sh
# One binary against itself on the avx512 set: ON is a one-line wrapper,
#   QB_STREAM_PREFETCH=1 exec $NEW "$@"
# (the kernels' own prefetches, as before this change), the candidate NEW this CPU's default
# (AMD: the hardware prefetcher alone). MODELS holds l1b-Q8_0.gguf; GEMMA is
# gemma-3-270m-q4_k_m.gguf (its head is Q8_0 in four-row groups).
set -u
run() { name=$1; shift; echo "### [$(date -u +%H:%M:%S)] $name"; "$NEW" ab "$@" --out "$name.json" --summary "$name.md" > "$name.log" 2>&1; echo "rc=$?"; grep -E '^\| tg' "$name.md" | head -1; }
run Q8_0-1t-avx512 --baseline "$ON" --candidate "$NEW" --model "$MODELS/l1b-Q8_0.gguf" --threads 1 --pp 16 --tg 64 --repetitions 1 --rounds 8 --max-rounds 8 --max-seconds 900
run Q8_0-2t-avx512 --baseline "$ON" --candidate "$NEW" --model "$MODELS/l1b-Q8_0.gguf" --threads 2 --pp 16 --tg 64 --repetitions 1 --rounds 10 --max-rounds 10 --max-seconds 900
run gemma-2t-avx512 --baseline "$ON" --candidate "$NEW" --model "$GEMMA" --threads 2 --pp 16 --tg 128 --repetitions 3 --rounds 8 --max-rounds 8 --max-seconds 900
run gemma-1t-avx512 --baseline "$ON" --candidate "$NEW" --model "$GEMMA" --threads 1 --pp 16 --tg 128 --repetitions 3 --rounds 8 --max-rounds 8 --max-seconds 900
