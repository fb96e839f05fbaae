#!/bin/sh
# Decode's reads against the paired bandwidth probes (`bench --roofline`) on the avx2 set, the
# two builds taking turns, three runs each; the .md lines quoted in the README come from these.
set -e
OUT=${OUT:-$PWD}
for r in 1 2 3; do
    for b in qb-x16final-avx2 qb-avx2x16-avx2; do
        $BIN/$b bench --model $MODELS/l1b-Q4_0.gguf --threads 2 --tg 128 --repetitions 3 --warmup 1 --roofline \
            --no-db --out $OUT/$b-$r.json > /dev/null 2>&1
    done
done
