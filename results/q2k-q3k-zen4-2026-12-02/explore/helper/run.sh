#!/bin/sh
# a46eeef (measured against ik) vs 9db392e (the decode kernels' fields through one helper), tg128, both sets, two rounds
cd "$OUT"
for r in 1 2; do for set in avx512 avx2; do for f in Q3_K_M Q2_K; do for b in q2t final71; do
  QB_KERNELS=$set $WORK/bin/qb-$b bench -m $MODELS/l1b-$f.gguf --tg 128 --repetitions 3 --threads 2 --out "$OUT/$b-$set-$f-$r.json" > "$OUT/$b-$set-$f-$r.txt" 2>&1
  echo "$r $set $f $b $(grep 'tg128 |' "$OUT/$b-$set-$f-$r.txt" | tail -1 | awk -F'|' '{print $8}')"
done; done; done; done
