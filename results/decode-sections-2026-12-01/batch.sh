#!/bin/sh
# Batched decode (matvecRows, which shares its units by the same cut): `serve --bench-batch`
# on the 1B Q4_0, each binary once per kernel set.
set -e
OUT=${OUT:-$PWD}
mkdir -p $OUT/batch
for set in avx512 avx2; do
    for b in qb-attsplit qb-sections; do
        bin=$BIN/$b; [ $set = avx2 ] && bin=$BIN/$b-avx2
        $bin serve --model $MODELS/l1b-Q4_0.gguf --threads 2 --bench-batch 1,2,4,8 > $OUT/batch/$b-$set.txt 2>&1
    done
done
