#!/bin/sh
# The ab runs of this folder: $BASE is quantbench built from 967c399's sources (main's before
# this change, e6dfcdc's too; its stamp names faec16f-dirty, the tree it was first built in:
# SwiftPM #5476), $NEW from this change; 1B Q4_K_M (and Q4_0 in 8-rounds/), avx512 set.
# 8-rounds/ first; the 24-round runs after, the same otherwise.
for spec in "Q4_K_M 1" "Q4_K_M 2" "Q4_0 1"; do
    set -- $spec
    $NEW ab --baseline $BASE --candidate $NEW --model $MODELS/l1b-$1.gguf --threads $2 --pp 16 --tg 64 \
        --repetitions 1 --rounds ${ROUNDS:-8} --max-rounds ${ROUNDS:-8} --max-seconds 900 --out ab-$1-$2t.json --summary ab-$1-$2t.md
done
