#!/bin/sh
# The ab runs of this folder, avx2 set, 1B Q4_K_M, 24 rounds each: $BASE is quantbench built
# from 79e6695 (main before this change); $Q6KX16 from the tree with the Q6_K change alone
# (ab-Q4_K_M-*), $NEW with both (ab-both-*). Their stamps also name 79e6695: the build stamp
# is stale on incremental builds (SwiftPM #5476).
for spec in "1 16 64" "2 16 64" "2 128 16"; do
    set -- $spec
    name=ab-Q4_K_M-$1t; [ "$2" = 128 ] && name=$name-pp128
    QB_KERNELS=avx2 $Q6KX16 ab --baseline $BASE --candidate $Q6KX16 --model $MODELS/l1b-Q4_K_M.gguf --threads $1 --pp $2 --tg $3 \
        --repetitions 1 --rounds 24 --max-rounds 24 --max-seconds 1200 --out $name.json --summary $name.md
done
for t in 1 2; do
    QB_KERNELS=avx2 $NEW ab --baseline $BASE --candidate $NEW --model $MODELS/l1b-Q4_K_M.gguf --threads $t --pp 16 --tg 64 \
        --repetitions 1 --rounds 24 --max-rounds 24 --max-seconds 1200 --out ab-both-Q4_K_M-${t}t.json --summary ab-both-Q4_K_M-${t}t.md
done
