#!/bin/bash
# Side-by-side: quantbench serve vs llama-server, same GGUF, 2 threads, 8 slots each,
# bench --endpoint at concurrency 1,2,4,8; two rounds, servers alternating (ABAB).
set -u
# The model: quantbench make-model --preset ci-125m --seed 1 --format gguf --dtype q4_0 --out ci125m-q4_0.gguf
# Run from a release build (swift build -c release); llama.cpp's bin folder beside the project.
# llama-server runs with OMP_WAIT_POLICY=PASSIVE: with OpenMP's default active waiting, on this
# shared 2-core machine (load average 8-15 from other jobs) it decoded at 1-12 t/s.
# EXTRA=--unique-prompts OUT=... for the unique-prompt runs.
QB=${QB:-.build/release/quantbench}
B=${QB_LLAMA_CPP_BIN:?set QB_LLAMA_CPP_BIN to the bin folder of a llama.cpp build}
M=${M:-ci125m-q4_0.gguf}
OUT=${OUT:-cmp-out}
mkdir -p $OUT
LOAD="--concurrency 1,2,4,8 --num-requests 32 --max-tokens 64 --warmup 2 --no-db ${EXTRA:-}"
wait_port() { for i in $(seq 1 600); do curl -sf localhost:$1/v1/models >/dev/null && return 0; sleep 0.2; done; return 1; }
for round in 1 2; do
  $QB serve -m $M --port 18301 --parallel 8 --ctx 512 --threads 2 > $OUT/qb-serve-$round.log 2>&1 &
  pid=$!; wait_port 18301
  $QB bench --endpoint http://127.0.0.1:18301 $LOAD --out $OUT/qb-$round.json > /dev/null 2> $OUT/qb-bench-$round.log
  echo "qb round $round exit $?"; kill $pid; wait $pid 2>/dev/null
  OMP_WAIT_POLICY=PASSIVE $B/llama-server -m $M --host 127.0.0.1 --port 18302 -np 8 -c 4096 -t 2 > $OUT/llama-serve-$round.log 2>&1 &
  pid=$!; wait_port 18302
  $QB bench --endpoint http://127.0.0.1:18302 $LOAD --out $OUT/llama-$round.json > /dev/null 2> $OUT/llama-bench-$round.log
  echo "llama round $round exit $?"; kill $pid; wait $pid 2>/dev/null
done
