#!/bin/sh
# Builds ./q4k in the current directory from two trees: BEFORE's AVX2 unit (prefix b256) and
# AVX-512 unit (p512), and AFTER's AVX2 unit (t256). Default BEFORE: 4de2ba7; AFTER: this
# repository's working tree.
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
before=$(mktemp -d)
git -C "$root" archive "${BEFORE:-4de2ba7}" Sources/CQBKernels | tar -x -C "$before"
after=${AFTER:-$root}
unit() {  # prefix, root, flags
    printf '#define QB_ISA %s\n#include "qb_isa_unit.h"\n' "$1" > "$before/u_$1.c"
    clang -O3 -ffp-contract=on $3 -I"$2/Sources/CQBKernels/kernels" -I"$2/Sources/CQBKernels/include" -c "$before/u_$1.c" -o "$before/u_$1.o"
}
unit b256 "$before" "-march=x86-64-v3"
unit t256 "$after" "-march=x86-64-v3"
unit p512 "$before" "-march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512"
clang -O2 -march=x86-64-v3 -I"$before/Sources/CQBKernels/include" "$here/q4k.c" "$before"/u_*.o -lpthread -lm -o q4k
rm -rf "$before"
