#!/bin/sh
# Builds k4.c against the repository's avx2 kernels into $OUT (default /tmp/q8k) and runs it
# three rounds over K = 512, 1024, 2048, 4096 (128 activation rows, 16 tiles of 16 rows, the
# best of 400 alternated passes each). Run from this folder inside the repository.
set -eu
root=$(git rev-parse --show-toplevel)
OUT=${OUT:-/tmp/q8k}
mkdir -p "$OUT"
src="$root/Sources/CQBKernels"
inc="-I$src/kernels -I$src/include"
printf '#define QB_ISA avx2\n#include "qb_isa_unit.h"\n' > "$OUT/unit-avx2.c"
clang -O3 -ffp-contract=on -march=x86-64-v3 $inc -c "$OUT/unit-avx2.c" -o "$OUT/unit-avx2.o"
clang -O2 -march=x86-64-v3 -DQB_ISA=avx2 $inc -c k4.c -o "$OUT/k4.o"
clang "$OUT/unit-avx2.o" "$OUT/k4.o" -lm -o "$OUT/k4"
for round in 1 2 3; do
    for K in 512 1024 2048 4096; do
        echo "round $round"
        "$OUT/k4" "$K" 128 16 400
    done
done
