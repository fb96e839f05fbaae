#!/bin/sh
# old (first kernels) vs new (vector scales, AVX-512 kernel), tg128, both sets, two rounds
cd $OUT
for r in 1 2; do for set in avx512 avx2; do for f in Q3_K_M Q2_K; do for b in k23 k23v; do
  QB_KERNELS=$set $WORK/bin/qb-$b bench -m $MODELS/l1b-$f.gguf --tg 128 --repetitions 3 --threads 2 --out $OUT/$b-$set-$f-$r.json > $OUT/$b-$set-$f-$r.txt 2>&1
  echo "$r $set $f $b $(grep -o 'tg128 [0-9.]* \[[^]]*\]' $OUT/$b-$set-$f-$r.txt | head -1)"
done; done; done; done
