#!/bin/sh
# The engine runs of this folder: $BIN/qb-pairs is a release build of bd688d6 (the engine
# of 66bfecd), $BIN/qb-attpair one of this change; both on the avx512 set. Run in an empty
# folder (ab writes results/ there).
set -x
ab() { "$BIN/qb-attpair" ab --baseline "$BIN/qb-pairs" --candidate "$BIN/qb-attpair" "$@"; }
ab --model "$MODELS/l1b-Q4_0.gguf" --pp 512 --tg 16 --repetitions 1 --rounds 10 --max-rounds 10 --max-seconds 1200 --out ab-l1b-q4_0-10rounds.json
ab --model "$GEMMA" --pp 512 --tg 16 --repetitions 2 --rounds 10 --max-rounds 10 --max-seconds 1200 --out ab-gemma.json
ab --model "$MODELS/l1b-Q4_0.gguf" --pp 512 --tg 16 --repetitions 1 --rounds 16 --max-rounds 16 --max-seconds 1500 --out ab-l1b-q4_0-16rounds.json
ab --model "$GEMMA" --pp 512 --tg 16 --depth 2048 --repetitions 2 --rounds 8 --max-rounds 8 --max-seconds 1200 --out ab-gemma-d2048.json
