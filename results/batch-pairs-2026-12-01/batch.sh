#!/bin/sh
# Batched decode, `serve --bench-batch 1,2,4,8` on the 1B Q4_0: the baseline (qb-sections,
# a5a6b3a's engine, the same decode code as 1ad48df) and the candidate (qb-pairs) taking
# turns, three rounds on the avx512 set, one on avx2 (whose code did not change).
set -e
OUT=${OUT:-$PWD}
mkdir -p $OUT/batch
for round in 1 2 3; do
    for b in qb-sections qb-pairs; do
        $BIN/$b serve --model $MODELS/l1b-Q4_0.gguf --threads 2 --bench-batch 1,2,4,8 > $OUT/batch/$b-avx512-$round.txt 2>&1
    done
done
for b in qb-sections qb-pairs; do
    QB_KERNELS=avx2 $BIN/$b serve --model $MODELS/l1b-Q4_0.gguf --threads 2 --bench-batch 1,2,4,8 > $OUT/batch/$b-avx2-1.txt 2>&1
done
