#!/bin/sh
# Alternates main's and the branch's binaries, round by round, at 1 and 2 threads.
cd "${RUNS:-.}"  # holds qb-main (ce3bbc5) and qb-k2 (6eb4866), release builds
for r in 1 2 3; do
  for t in 1 2; do
    for b in qb-main qb-k2; do
      echo "== round $r threads $t $b load $(cut -d' ' -f1-3 /proc/loadavg)"
      ./$b serve -m models/l1b-q4_0.gguf --threads $t --bench-batch 1,2,4,8 2>&1 | grep -E "^engine|^ +[1248] "
    done
  done
done
