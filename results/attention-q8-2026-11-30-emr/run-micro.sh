#!/bin/sh
# The kernels alone, before (a2c8f1f) and after, alternating, each shape ROUNDS times; each
# pair's outputs compared byte for byte. Built by build.sh into $OUT.
set -eu
OUT=${OUT:-/tmp/att8}
for round in $(seq 1 "${ROUNDS:-5}"); do
  for set in avx2 avx512; do
    for shape in "64 4 4096 1 200" "64 4 4096 128 5" "256 4 4096 1 40" "128 8 1024 1 400"; do
      for side in base new; do
        printf '%s %s round %s: ' "$side" "$set" "$round"
        "$OUT/att8-$side-$set" $shape "$OUT/out-$side.bin"
      done
      cmp "$OUT/out-base.bin" "$OUT/out-new.bin" || { echo "outputs differ: $set $shape"; exit 1; }
    done
  done
done
