#!/bin/sh
# Builds this folder's programs against the repository's kernels into $OUT (default
# /tmp/bounds): products2 and att on the avx2 set (x86-64-v3), mv and mv2 on the set named
# by $ISA (avx512, the default, or avx2), mv2 with the engine's pool (qb_pool.c). Run from
# this folder inside the repository. The commands that made output.txt and attention.txt:
#   $OUT/products2 K M T BITS OFF /tmp/y.bin     (REPS=100; BITS 6: Q6_K tiles)
#   $OUT/mv TYPE ROWS COLS COPIES REPS            (GGML type numbers: 6 Q5_0, 8 Q8_0, 12 Q4_K, 14 Q6_K)
#   $OUT/mv2 TYPE ROWS COLS COPIES REPS THREADS [MATRICES]   (GRAIN, MINU: other chunks)
#   $OUT/att 64 4 1024 10 /tmp/y.bin
set -eu
root=$(git rev-parse --show-toplevel)
OUT=${OUT:-/tmp/bounds}
ISA=${ISA:-avx512}
mkdir -p "$OUT"
src="$root/Sources/CQBKernels"
inc="-I$src/kernels -I$src/include"
unit() {  # unit ISA FLAGS
    printf '#define QB_ISA %s\n#include "qb_isa_unit.h"\n' "$1" > "$OUT/unit-$1.c"
    clang -O3 -ffp-contract=on $2 $inc -c "$OUT/unit-$1.c" -o "$OUT/unit-$1.o"
}
unit avx2 "-march=x86-64-v3"
[ "$ISA" = avx512 ] && unit avx512 "-march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512"
clang -O2 $inc -c "$src/qb_pool.c" -o "$OUT/pool.o"
for p in products2 att; do
    clang -O2 -march=x86-64-v3 -DQB_ISA=avx2 $inc -c $p.c -o "$OUT/$p.o"
    clang "$OUT/unit-avx2.o" "$OUT/$p.o" -lm -o "$OUT/$p"
done
for p in mv mv2; do
    clang -O2 -DQB_ISA=$ISA $inc -c $p.c -o "$OUT/$p.o"
    clang "$OUT/unit-$ISA.o" "$OUT/$p.o" "$OUT/pool.o" -lm -lpthread -o "$OUT/$p"
done
