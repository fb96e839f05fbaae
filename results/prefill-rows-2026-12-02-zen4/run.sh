#!/bin/sh
# Prefill speed by prompt length, three builds side by side, round by round, both kernel sets.
#   QB_69:    quantbench at 0b3535d (a column block's last 1-3 rows on the scalar definition)
#   QB_47:    quantbench at 47b3591 (those rows on the AVX2 tile kernels)
#   QB_SHORT: quantbench at b35ad98 (chunks up to shortChunkRows on the batched decode kernels)
#   MODELS:   folder of l1b-{Q4_0,Q4_K_M,Q8_0}.gguf; GEMMA: Gemma 3 270M Q4_K_M; OUT: output folder
# Part "tails": pp125-pp128 and pp512 (past the short chunks), QB_69 against QB_SHORT.
# Part "short": pp2-pp32 and pp33, QB_47 against QB_SHORT.
set -u
ROUNDS=${ROUNDS:-2}
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
    for set in avx2 avx512; do
        for m in Q4_0 Q4_K_M Q8_0 gemma; do
            f="$MODELS/l1b-$m.gguf"; [ "$m" = gemma ] && f="$GEMMA"
            for b in 69 short; do
                eval bin=\$QB_$(echo $b | tr a-z A-Z)
                QB_KERNELS=$set "$bin" bench -m "$f" --pp 128,127,126,125,512 --tg 1 --repetitions 5 --threads 2 \
                    --out "$OUT/tails-$set-$m-$b-$r.json" > /dev/null 2>&1
                echo "$(date -u +%H:%M:%S) tails $r $set $m $b: $(grep '^Median' "$OUT/tails-$set-$m-$b-$r.md")"
            done
            for b in 47 short; do
                eval bin=\$QB_$(echo $b | tr a-z A-Z)
                QB_KERNELS=$set "$bin" bench -m "$f" --pp 2,4,8,12,16,24,32,33 --tg 1 --repetitions 5 --threads 2 \
                    --out "$OUT/short-$set-$m-$b-$r.json" > /dev/null 2>&1
                echo "$(date -u +%H:%M:%S) short $r $set $m $b: $(grep '^Median' "$OUT/short-$set-$m-$b-$r.md")"
            done
        done
    done
done
