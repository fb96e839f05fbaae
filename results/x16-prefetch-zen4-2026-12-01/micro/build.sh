#!/bin/sh
# Builds ./stream from the repository's kernel sources (ROOT, default the repository this
# folder is in): the AVX-512 and AVX2 units as the package compiles them, and an AVX-512 copy
# whose sixteen-row Q4_0 kernel keeps its near L1 prefetches but not the far L2 ones.
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=${ROOT:-$here/../../..}
tmp=$(mktemp -d)
cp -r "$root/Sources/CQBKernels/kernels" "$root/Sources/CQBKernels/include" "$tmp/"
mkdir -p "$tmp/l1" && cp -r "$tmp/kernels" "$tmp/include" "$tmp/l1/"
sed -i 's/_mm_prefetch(next + l, _MM_HINT_T1);/(void)next;/' "$tmp/l1/kernels/qb_matvec_tiles.c"
grep -q '(void)next;' "$tmp/l1/kernels/qb_matvec_tiles.c"
avx512="-march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512"
unit() {  # prefix, source folder, flags
    printf '#define QB_ISA %s\n#include "qb_isa_unit.h"\n' "$1" > "$tmp/u_$1.c"
    clang -O3 -ffp-contract=on $3 -I"$2/kernels" -I"$2/include" -c "$tmp/u_$1.c" -o "$tmp/u_$1.o"
}
unit t512 "$tmp" "$avx512"
unit l1512 "$tmp/l1" "$avx512"
unit t2 "$tmp" "-march=x86-64-v3"
clang -O2 -march=x86-64-v3 -I"$tmp/include" "$here/stream.c" "$tmp"/u_*.o -lpthread -lm -o "$here/stream"
rm -rf "$tmp"
