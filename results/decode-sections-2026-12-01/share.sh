#!/bin/sh
# The share of the paired bandwidth probe Gemma 3 270M's decode reads (`bench --roofline`:
# each repetition against a probe run just before it), the two binaries taking turns,
# three runs each per kernel set.
set -e
OUT=${OUT:-$PWD}
mkdir -p $OUT/share
for run in 1 2 3; do
    for set in avx512 avx2; do
        for b in qb-attsplit qb-sections; do
            bin=$BIN/$b; [ $set = avx2 ] && bin=$BIN/$b-avx2
            $bin bench --model $GEMMA --tg 128 --repetitions 5 --roofline --threads 2 \
                --out $OUT/share/$b-$set-$run.json > /dev/null 2>&1
        done
    done
done
