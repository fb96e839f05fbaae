#!/bin/sh
# Builds ../bounds-2026-11-30/micro/att.c on the avx2 set against the kernels of 44cf980
# (parent) and of this tree (this), then runs the two alternately, five rounds, each the
# best of many passes (the minimum is what a host that swings by half still gives
# repeatably), and compares their outputs byte for byte. Run from this folder inside the
# repository; writes to $OUT (/tmp/attention-queries).
set -eu
root=$(git rev-parse --show-toplevel)
OUT=${OUT:-/tmp/attention-queries}
mkdir -p "$OUT/parent-src"
git -C "$root" archive 44cf980 Sources/CQBKernels | tar -x -C "$OUT/parent-src"
for v in parent this; do
    src=$([ $v = parent ] && echo "$OUT/parent-src/Sources/CQBKernels" || echo "$root/Sources/CQBKernels")
    inc="-I$src/kernels -I$src/include"
    printf '#define QB_ISA avx2\n#include "qb_isa_unit.h"\n' > "$OUT/unit.c"
    clang -O3 -ffp-contract=on -march=x86-64-v3 $inc -c "$OUT/unit.c" -o "$OUT/unit-$v.o"
    clang -O2 -march=x86-64-v3 -DQB_ISA=avx2 $inc -c ../bounds-2026-11-30/micro/att.c -o "$OUT/att-$v.o"
    clang "$OUT/unit-$v.o" "$OUT/att-$v.o" -lm -o "$OUT/att-$v"
done
grep -m1 'model name' /proc/cpuinfo
for round in 1 2 3 4 5; do
    # hd group span reps [group]: Llama 3.2 1B's heads (64, 4) over 256 and 1024 prompt
    # positions; Gemma 3's (256, 4); a group of 3 (128); decode at depths 1024 and 4096.
    for shape in "64 4 256 300" "64 4 1024 40" "256 4 512 40" "128 3 512 80" "64 4 1024 2000 group" "64 4 4096 500 group" \
        "256 4 1024 500 group"; do
        set -- $shape
        for v in parent this; do printf '%-6s ' $v; "$OUT/att-$v" $1 $2 $3 $4 "$OUT/y-$v.bin" ${5:-}; done
        cmp -s "$OUT/y-parent.bin" "$OUT/y-this.bin" && echo "       outputs byte for byte the same" || echo "       OUTPUTS DIFFER"
    done
done
