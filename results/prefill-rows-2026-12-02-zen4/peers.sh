#!/bin/sh
# Prefill at the lengths of this folder against ik_llama.cpp (8337e4c, -rtr 1), the same files,
# each engine in turn per file and set, ROUNDS rounds, two threads.
#   QB: quantbench (b35ad98 or later); IK_BIN, IK_AVX2_BIN: ik's native and x86-64-v3 builds
#   MODELS, GEMMA as run.sh; OUT: output folder
set -u
ROUNDS=${ROUNDS:-2}
LENGTHS=2,4,8,16,32,127,128
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
    for set in avx512 avx2; do
        ik="$IK_BIN"; [ "$set" = avx2 ] && ik="$IK_AVX2_BIN"
        for m in Q4_0 Q4_K_M gemma; do
            f="$MODELS/l1b-$m.gguf"; [ "$m" = gemma ] && f="$GEMMA"
            "$ik/llama-bench" -m "$f" -p $LENGTHS -n 0 -r 3 -t 2 -rtr 1 -o md > "$OUT/ik-$set-$m-$r.md" 2> /dev/null
            QB_KERNELS=$set "$QB" bench -m "$f" --pp $LENGTHS --tg 1 --repetitions 3 --threads 2 \
                --out "$OUT/qb-$set-$m-$r.json" > /dev/null 2>&1
            echo "$(date -u +%H:%M:%S) $r $set $m done"
        done
    done
done
