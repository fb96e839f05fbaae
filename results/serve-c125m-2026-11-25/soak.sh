#!/bin/bash
# 10 minutes of bench --endpoint at concurrency 4 against quantbench serve (release,
# built-in tiny model, 4 slots, 2 threads); the server's VmRSS sampled every 10 s.
set -u
QB=${QB:-.build/release/quantbench}
OUT=${OUT:-soak-out}; mkdir -p $OUT
$QB serve --port 18303 --parallel 4 --threads 2 > $OUT/serve.log 2>&1 &
pid=$!
for i in $(seq 1 600); do curl -sf localhost:18303/health >/dev/null && break; sleep 0.2; done
( while kill -0 $pid 2>/dev/null; do
    echo "$(date +%s) $(awk '/VmRSS/{print $2}' /proc/$pid/status) $(curl -s localhost:18303/health)" >> $OUT/rss.log; sleep 10; done ) &
sampler=$!
$QB bench --endpoint http://127.0.0.1:18303 --concurrency 4 --duration ${DUR:-600} --max-tokens 64 --warmup 2 --no-db --out $OUT/soak.json > $OUT/bench.md 2> $OUT/bench.log
echo "bench exit $?" >> $OUT/bench.log
curl -s localhost:18303/health >> $OUT/bench.log; echo >> $OUT/bench.log
sleep 2; kill $sampler; kill $pid; wait $pid; echo "serve exit $?" >> $OUT/bench.log
