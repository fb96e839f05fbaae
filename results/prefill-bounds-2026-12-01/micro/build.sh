#!/bin/sh
# Builds products.c against the avx512 kernel unit of 1ad48df (./base) and of 1ad48df with
# triples.patch applied (./triples: 4 x 3 and 1 x 3 shapes for the formats with offsets),
# then runs both on each shape at tasks of 3, 4 and 6 tiles and compares their outputs byte
# for byte. Run from this folder inside the repository; writes to $OUT (/tmp).
set -eu
root=$(git rev-parse --show-toplevel)
here=$(pwd)
OUT=${OUT:-/tmp/prefill-bounds}
rm -rf "$OUT/base" "$OUT/triples"
for v in base triples; do
    mkdir -p "$OUT/$v"
    git -C "$root" archive 1ad48df Sources | tar -x -C "$OUT/$v"
    [ $v = triples ] && (cd "$OUT/$v" && patch -s -p1 < "$here/triples.patch")
    src="$OUT/$v/Sources/CQBKernels"
    inc="-I$src/kernels -I$src/include"
    printf '#define QB_ISA avx512\n#include "qb_isa_unit.h"\n' > "$OUT/unit.c"
    clang -O3 -ffp-contract=on -march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512 $inc -c "$OUT/unit.c" -o "$OUT/unit-$v.o"
    clang -O2 -DQB_ISA=avx512 $inc -c products.c -o "$OUT/products-$v.o"
    clang "$OUT/unit-$v.o" "$OUT/products-$v.o" -lm -o "$OUT/products-$v"
done
for round in 1 2; do
    for shape in "2048 512 12 1" "8192 512 12 1" "640 512 12 1"; do
        for task in 3 4 6; do
            for v in base triples; do printf '%-8s task %s ' $v $task; "$OUT/products-$v" $shape "$OUT/y-$v.bin" $task; done
            cmp -s "$OUT/y-base.bin" "$OUT/y-triples.bin" && echo "       outputs byte for byte the same" || echo "       OUTPUTS DIFFER"
        done
    done
done
