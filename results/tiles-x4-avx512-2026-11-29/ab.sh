#!/bin/bash
# One sequence, before vs after (ABBA, fresh processes), avx512 set, two threads.
cd "$(dirname "$0")"; mkdir -p ab
for m in ${FILES:-l1b-Q8_0 l1b-Q5_0 gemma}; do
  f=${MODELS:?}/$m.gguf; [ $m = gemma ] && f=${GEMMA:?}
  QB_KERNELS=avx512 ./qb-after ab --baseline ./qb-before --candidate ./qb-after --model $f --tg 64 --threads 2 \
    --rounds ${ROUNDS:-10} --max-rounds ${ROUNDS:-10} --max-seconds 500 --out ab/$m.json --summary ab/$m.md 2>&1 | grep -E "^\| tg64 \| (t/s|CPU)"
done
