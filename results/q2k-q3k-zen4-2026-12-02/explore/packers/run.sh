#!/bin/sh
# a46eeef (measured against ik) vs the final packers (pack_k23), pp512 and pp128, both sets, two rounds
cd "$OUT"
for r in 1 2; do for set in avx512 avx2; do for f in Q3_K_M Q2_K; do for b in q2t final71; do
  QB_KERNELS=$set $WORK/bin/qb-$b bench -m $MODELS/l1b-$f.gguf --pp 512,128 --repetitions 3 --threads 2 --out "$OUT/$b-$set-$f-$r.json" > "$OUT/$b-$set-$f-$r.txt" 2>&1
  echo "$r $set $f $b $(grep -E 'pp(512|128) \|' "$OUT/$b-$set-$f-$r.txt" | tail -2 | awk -F'|' '{printf "%s %s; ", $7, $8}')"
done; done; done; done
