#!/bin/sh
# Builds ./q4k from two trees: BEFORE's AVX2 unit (prefix b256) and AFTER's (t256).
set -e
: "${BEFORE:?} ${AFTER:?}"
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
unit() {  # prefix, root
    printf '#define QB_ISA %s\n#include "qb_isa_unit.h"\n' "$1" > "$tmp/u_$1.c"
    clang -O3 -ffp-contract=on -march=x86-64-v3 -I"$2/Sources/CQBKernels/kernels" -I"$2/Sources/CQBKernels/include" -c "$tmp/u_$1.c" -o "$tmp/u_$1.o"
}
unit t256 "$AFTER"
unit b256 "$BEFORE"
clang -O2 -march=x86-64-v3 -I"$AFTER/Sources/CQBKernels/include" "$here/q4k.c" "$tmp"/u_*.o -lpthread -lm -o q4k
rm -rf "$tmp"
