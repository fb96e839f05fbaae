#!/bin/sh
# Batched decode steps of the 1B Q4_K_M on the avx2 set, BASE (79e6695) and NEW (this change)
# taking turns, ROUNDS rounds each: `serve --bench-batch 1,8 --threads 2`.
: "${BASE:?} ${NEW:?} ${MODELS:?}"
date -u
for i in $(seq 1 "${ROUNDS:-3}"); do
    for b in BASE NEW; do
        eval bin=\$$b
        echo "== round $i: $b"
        QB_KERNELS=avx2 "$bin" serve --model "$MODELS/l1b-Q4_K_M.gguf" --bench-batch 1,8 --threads 2
    done
done
date -u
