#!/bin/sh
# build.sh ROOT NAME: att8.c against the kernels of the checkout at ROOT, for the avx2 set
# (x86-64-v3) and the avx512 set (the flags of Package.swift), into $OUT/att8-NAME-avx2 and
# $OUT/att8-NAME-avx512 (default OUT /tmp/att8).
set -eu
ROOT=$1 NAME=$2 OUT=${OUT:-/tmp/att8}
here=$(cd "$(dirname "$0")" && pwd)
src="$ROOT/Sources/CQBKernels"
inc="-I$src/kernels -I$src/include"
mkdir -p "$OUT"
build() {  # build ISA FLAGS
    printf '#define QB_ISA %s\n#include "qb_isa_unit.h"\n' "$1" > "$OUT/unit-$1.c"
    clang -O3 -ffp-contract=on $2 $inc -c "$OUT/unit-$1.c" -o "$OUT/unit-$NAME-$1.o"
    clang -O2 $2 -DQB_ISA=$1 $inc -c "$here/att8.c" -o "$OUT/att8-$1.o"
    clang "$OUT/unit-$NAME-$1.o" "$OUT/att8-$1.o" -lm -o "$OUT/att8-$NAME-$1"
}
build avx2 "-march=x86-64-v3"
build avx512 "-march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512"
