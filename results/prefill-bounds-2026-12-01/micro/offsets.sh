#!/bin/sh
# offsets.c against the avx512 unit of 1ad48df (./base: the scalar loop) and of this tree
# (./this: vpsadbw), alternately, three rounds. Run from this folder; writes to $OUT (/tmp).
set -eu
root=$(git rev-parse --show-toplevel)
OUT=${OUT:-/tmp/prefill-bounds}
rm -rf "$OUT/offsets-src"; mkdir -p "$OUT/offsets-src"
git -C "$root" archive 1ad48df Sources/CQBKernels | tar -x -C "$OUT/offsets-src"
for v in base this; do
    src=$([ $v = base ] && echo "$OUT/offsets-src/Sources/CQBKernels" || echo "$root/Sources/CQBKernels")
    inc="-I$src/kernels -I$src/include"
    printf '#define QB_ISA avx512\n#include "qb_isa_unit.h"\n' > "$OUT/unit.c"
    clang -O3 -ffp-contract=on -march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512 $inc -c "$OUT/unit.c" -o "$OUT/ounit-$v.o"
    clang -O2 -DQB_ISA=avx512 $inc -c offsets.c -o "$OUT/offsets-$v.o"
    clang "$OUT/ounit-$v.o" "$OUT/offsets-$v.o" -lm -o "$OUT/offsets-$v"
done
for round in 1 2 3; do for v in base this; do printf '%-5s ' $v; "$OUT/offsets-$v" | tail -1; done; done
