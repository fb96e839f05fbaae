#!/bin/sh
# pairs.c against the avx512 unit of 1ad48df (./base: one sixteen-row group at a time) and
# of this tree (./this: two to four rows on pairs of groups), alternately, two rounds, on
# the 1B's gate shape (8192 x 2048) from memory. Run from this folder; writes to $OUT (/tmp).
set -eu
root=$(git rev-parse --show-toplevel)
OUT=${OUT:-/tmp/batch-pairs}
rm -rf "$OUT/src"; mkdir -p "$OUT/src"
git -C "$root" archive 1ad48df Sources/CQBKernels | tar -x -C "$OUT/src"
for v in base this; do
    src=$([ $v = base ] && echo "$OUT/src/Sources/CQBKernels" || echo "$root/Sources/CQBKernels")
    inc="-I$src/kernels -I$src/include"
    printf '#define QB_ISA avx512\n#include "qb_isa_unit.h"\n' > "$OUT/unit.c"
    clang -O3 -ffp-contract=on -march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512 $inc -c "$OUT/unit.c" -o "$OUT/unit-$v.o"
    clang -O2 -DQB_ISA=avx512 $inc -c pairs.c -o "$OUT/pairs-$v.o"
    clang "$OUT/unit-$v.o" "$OUT/pairs-$v.o" -lm -o "$OUT/pairs-$v"
done
for round in 1 2; do for v in base this; do echo "$v"; "$OUT/pairs-$v" 8192 2048 1; done; done
