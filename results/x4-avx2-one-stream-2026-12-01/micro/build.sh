#!/bin/sh
# Builds ./x4 (in the current directory) from two trees' kernel sources: the AVX2 unit of BASE
# (a commit, default 5d60bf7: one activation row against two four-row groups at a time)
# and of ROOT's working tree (default the repository this folder is in: a group at a time),
# and ROOT's AVX-512 unit, each compiled as the package compiles it.
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=${ROOT:-$here/../../..}
base=${BASE:-5d60bf7}
tmp=$(mktemp -d)
mkdir -p "$tmp/base"
git -C "$root" archive "$base" Sources/CQBKernels | tar -x -C "$tmp/base"
unit() {  # prefix, tree, flags
    printf '#define QB_ISA %s\n#include "qb_isa_unit.h"\n' "$1" > "$tmp/u_$1.c"
    clang -O3 -ffp-contract=on $3 -I"$2/Sources/CQBKernels/kernels" -I"$2/Sources/CQBKernels/include" -c "$tmp/u_$1.c" -o "$tmp/u_$1.o"
}
unit two2 "$tmp/base" "-march=x86-64-v3"
unit one2 "$root" "-march=x86-64-v3"
unit t512 "$root" "-march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512"
clang -O2 -march=x86-64-v3 -I"$root/Sources/CQBKernels/include" "$here/x4.c" "$tmp"/u_*.o -lpthread -lm -o x4
rm -rf "$tmp"
