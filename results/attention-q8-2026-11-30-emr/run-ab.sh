#!/bin/sh
# In-engine: `quantbench ab`, a2c8f1f (before) against this change (after), decode of 64
# tokens after a prefilled context of 4096 on a q8_0 cache, two threads, 8 ABBA rounds.
# BIN holds qb-a2c8f1f and qb-q8v2, and qb-*-avx2, one-line wrappers running them under
# QB_KERNELS=avx2. GEMMA: Gemma 3 270M Q4_K_M; MODELS/l1b-Q4_0.gguf: the 1B Llama.
set -eu
ab() {  # ab NAME MODEL SUFFIX
    "$BIN/qb-q8v2" ab --baseline "$BIN/qb-a2c8f1f$3" --candidate "$BIN/qb-q8v2$3" --model "$2" --threads 2 --tg 64 \
        --depth 4096 --kv-type q8_0 --rounds 8 --max-rounds 8 --max-seconds 1800 --out "$1.json" --summary "$1.md"
}
ab gemma-q8_0-d4096-tg64-avx512 "${GEMMA:?}" ""
ab gemma-q8_0-d4096-tg64-avx2 "$GEMMA" -avx2
ab l1b-q4_0-q8_0-d4096-tg64-avx2 "${MODELS:?}/l1b-Q4_0.gguf" -avx2
ab l1b-q4_0-q8_0-d4096-tg64-avx512 "$MODELS/l1b-Q4_0.gguf" ""
