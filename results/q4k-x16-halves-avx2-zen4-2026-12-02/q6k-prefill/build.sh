#!/bin/sh
# Builds ./products6 (in the current directory): the AVX2 kernel unit of fa79ef0 as prefix
# b256 and of fa79ef0 with four-rows.patch (Q6_K prefill tiles against four activation rows
# at a time instead of two) as t256, each compiled as the package compiles it.
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
tmp=$(mktemp -d)
for v in before after; do
    mkdir -p "$tmp/$v"
    git -C "$root" archive fa79ef0 Sources | tar -x -C "$tmp/$v"
done
(cd "$tmp/after" && patch -s -p1 < "$here/four-rows.patch")
unit() {  # prefix, tree
    printf '#define QB_ISA %s\n#include "qb_isa_unit.h"\n' "$1" > "$tmp/u_$1.c"
    clang -O3 -ffp-contract=on -march=x86-64-v3 -I"$2/Sources/CQBKernels/kernels" -I"$2/Sources/CQBKernels/include" \
        -c "$tmp/u_$1.c" -o "$tmp/u_$1.o"
}
unit b256 "$tmp/before"
unit t256 "$tmp/after"
clang -O2 -march=x86-64-v3 -I"$tmp/after/Sources/CQBKernels/include" "$here/products6.c" "$tmp"/u_*.o -lpthread -lm -o products6
rm -rf "$tmp"
