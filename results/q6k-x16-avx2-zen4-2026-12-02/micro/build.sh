#!/bin/sh
# Builds ./q6k (in the current directory) from ROOT's kernel sources (default the repository
# this folder is in): its AVX-512 and AVX2 units, each compiled as the package compiles it.
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=${ROOT:-$here/../../..}
tmp=$(mktemp -d)
unit() {  # prefix, flags
    printf '#define QB_ISA %s\n#include "qb_isa_unit.h"\n' "$1" > "$tmp/u_$1.c"
    clang -O3 -ffp-contract=on $2 -I"$root/Sources/CQBKernels/kernels" -I"$root/Sources/CQBKernels/include" -c "$tmp/u_$1.c" -o "$tmp/u_$1.o"
}
unit t512 "-march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512"
unit t256 "-march=x86-64-v3"
clang -O2 -march=x86-64-v3 -I"$root/Sources/CQBKernels/include" "$here/q6k.c" "$tmp"/u_*.o -lpthread -lm -o q6k
rm -rf "$tmp"
