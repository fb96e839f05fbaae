#!/bin/bash
# One thread, 128 head passes of 4096 positions from memory (head size 64, 4 heads):
# each pass with the attention prefetch on (PF=1) and off (PF=0), adjacent, order alternating.
B=${B:-./bin}
for r in $(seq 1 ${ROUNDS:-8}); do
  for s in avx512 avx2; do for t in q8 f16; do
    arg=""; [ $t = f16 ] && arg=f16
    if [ $((r % 2)) = 1 ]; then order="1 0"; else order="0 1"; fi
    for pf in $order; do
      us=$(PF=$pf $B/att8-new-$s 64 4 4096 128 10 /dev/null $arg | sed 's/.*: \([0-9.]*\) us.*/\1/')
      echo "$r $s $t $pf $us"
    done
  done; done
done
