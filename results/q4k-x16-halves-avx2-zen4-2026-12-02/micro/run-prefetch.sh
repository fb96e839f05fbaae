#!/bin/sh
# As run.sh, but with the after kernel's own prefetches switched by TPF (the before kernel's
# stay off, AMD's default): q4k.c with one line changed. Run from an empty directory.
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
tmp=$(mktemp -d)
git -C "$root" archive fa79ef0 Sources | tar -x -C "$tmp"
sed 's/qb_t256_set_stream_prefetch(0)/qb_t256_set_stream_prefetch(getenv("TPF") ? 1 : 0)/' \
    "$root/results/q6k-x16-avx2-zen4-2026-12-02/micro-q4k/q4k.c" > "$tmp/q4kpf.c"
for pair in "b256 $tmp" "t256 $root"; do
    set -- $pair
    printf '#define QB_ISA %s\n#include "qb_isa_unit.h"\n' "$1" > "$tmp/u_$1.c"
    clang -O3 -ffp-contract=on -march=x86-64-v3 -I"$2/Sources/CQBKernels/kernels" -I"$2/Sources/CQBKernels/include" \
        -c "$tmp/u_$1.c" -o "$tmp/u_$1.o"
done
clang -O2 -march=x86-64-v3 -I"$root/Sources/CQBKernels/include" "$tmp/q4kpf.c" "$tmp"/u_*.o -lpthread -lm -o q4kpf
rm -rf "$tmp"
for round in 1 2 3; do
    echo "TPF unset (after without prefetches):"; ./q4kpf 41
    echo "TPF=1 (after with prefetches):"; TPF=1 ./q4kpf 41
done
echo "in L2:"; ./q4kpf 61 hot; TPF=1 ./q4kpf 61 hot
