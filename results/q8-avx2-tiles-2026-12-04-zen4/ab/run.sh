#!/bin/sh
# ab of the avx2 set's 8-bit prefill with four tiles per activation block (candidate: release
# build of this change) against 55f7c3c's release build, both with QB_KERNELS=avx2 (wrappers
# in BIN). MODELS holds the 1B files.
set -u
B=${BIN:?}; M=${MODELS:?}
ab() { "$B/qb-avx2-x16b" ab --baseline "$B/qb-avx2-base" --candidate "$B/qb-avx2-x16b" "$@"; }
ab --model "$M/l1b-Q8_0.gguf" --pp 256 --tg 0 --threads 1 --rounds 12 --max-rounds 12 --max-seconds 900 --out Q8_0-pp256-1t.json --summary Q8_0-pp256-1t.md
ab --model "$M/l1b-Q8_0.gguf" --pp 512 --tg 0 --threads 2 --rounds 10 --max-rounds 10 --max-seconds 900 --out Q8_0-pp512.json --summary Q8_0-pp512.md
ab --model "$M/l1b-Q4_0.gguf" --pp 256 --tg 0 --threads 1 --rounds 8 --max-rounds 8 --max-seconds 900 --out Q4_0-pp256-1t.json --summary Q4_0-pp256-1t.md
