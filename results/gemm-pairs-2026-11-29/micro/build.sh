#!/bin/sh
# Builds products.c against the avx512 kernel unit of the parent tree (673bd56, ./parent)
# and of this tree (./this), then runs both alternately on each shape and compares their
# outputs byte for byte. Run from this folder inside the repository; writes to $OUT (/tmp).
set -eu
root=$(git rev-parse --show-toplevel)
OUT=${OUT:-/tmp/gemm-pairs}
mkdir -p "$OUT/parent-src"
git -C "$root" archive 673bd56 Sources/CQBKernels | tar -x -C "$OUT/parent-src"
flags="-O3 -ffp-contract=on -march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512"
for v in parent this; do
    src=$([ $v = parent ] && echo "$OUT/parent-src/Sources/CQBKernels" || echo "$root/Sources/CQBKernels")
    inc="-I$src/kernels -I$src/include"
    printf '#define QB_ISA avx512\n#include "qb_isa_unit.h"\n' > "$OUT/unit.c"
    clang $flags $inc -c "$OUT/unit.c" -o "$OUT/unit-$v.o"
    clang -O2 -DQB_ISA=avx512 $([ $v = parent ] && echo -DPARENT) $inc -c products.c -o "$OUT/products-$v.o"
    clang "$OUT/unit-$v.o" "$OUT/products-$v.o" -lm -o "$OUT/products-$v"
done
for round in 1 2 3; do
    for shape in "2048 512 4 1" "2048 512 4 0" "8192 512 4 1" "640 512 4 1" "2048 29 3 1" "2048 37 5 0" "2080 7 1 1" "96 19 3 0"; do
        for v in parent this; do printf '%-6s ' $v; "$OUT/products-$v" $shape "$OUT/y-$v.bin"; done
        cmp -s "$OUT/y-parent.bin" "$OUT/y-this.bin" && echo "       outputs byte for byte the same" || echo "       OUTPUTS DIFFER"
    done
done
