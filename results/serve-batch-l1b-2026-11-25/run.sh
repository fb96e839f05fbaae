#!/bin/bash
# Batched decode on the Llama-3.2-1B shape at Q4_0 (issues 16 and 19).
# 1. serve --bench-batch at 1 and 2 threads: in one process, the layer-0 gate+up product and
#    whole forwardBatch steps at B = 1, 2, 4, 8, the engine's kernel (16-row tiles) and the
#    earlier four-row kernel alternating round by round; medians of wall and thread CPU time.
# 2. The server (8 slots, 2 threads) under bench --endpoint at concurrency 1 and 8, twice;
#    then once more with QB_BEFORE, a build from before the tiles (four-row kernel), if given.
# The model: quantbench make-model --preset llama-3.2-1b --seed 1 --format gguf --dtype q4_0 --out l1b-q4_0.gguf
# Run from a release build (swift build -c release).
set -u
QB=${QB:-.build/release/quantbench}
M=${M:-l1b-q4_0.gguf}
OUT=${OUT:-batch-out}
mkdir -p $OUT
for t in 1 2; do
  $QB serve -m $M --threads $t --bench-batch 1,2,4,8 > $OUT/bench-batch-threads$t.txt 2> $OUT/bench-batch-threads$t.log
  echo "bench-batch threads $t exit $?"
done
LOAD="--concurrency 1,8 --num-requests 16 --max-tokens 64 --warmup 2 --no-db"
wait_port() { for i in $(seq 1 900); do curl -sf localhost:$1/v1/models >/dev/null && return 0; sleep 0.2; done; return 1; }
serve_round() {  # binary, name
  $1 serve -m $M --port 18311 --parallel 8 --ctx 512 --threads 2 > $OUT/serve-$2.log 2>&1 &
  pid=$!; wait_port 18311
  $QB bench --endpoint http://127.0.0.1:18311 $LOAD --out $OUT/endpoint-$2.json > $OUT/endpoint-$2.md 2> $OUT/endpoint-$2.log
  echo "$2 exit $?"; kill $pid; wait $pid 2>/dev/null
}
serve_round $QB tiles-1
serve_round $QB tiles-2
if [ -n "${QB_BEFORE:-}" ]; then serve_round $QB_BEFORE before; fi
