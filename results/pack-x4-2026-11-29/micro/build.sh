#!/bin/bash
# ./build.sh avx512|avx2: the kernels of two checkouts (OLD, NEW: their Sources/CQBKernels) compiled
# as that set is (Package.swift's flags), each under its own prefix, and linked into bench.c;
# then ./bench-SET TYPE ROWS COLS N COPIES REPS (TYPE 2 Q4_0, 3 Q4_1, 6 Q5_0, 7 Q5_1, 8 Q8_0, 12 Q4_K).
set -e
case "$1" in avx512) F="-O3 -ffp-contract=on -march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512";; avx2) F="-O3 -ffp-contract=on -march=x86-64-v3";; esac
printf '#define QB_ISA tcur\n#include "qb_isa_unit.h"\n' > ucur.c
printf '#define QB_ISA tnew\n#include "qb_isa_unit.h"\n' > unew.c
clang $F -I"$OLD/include" -I"$OLD/kernels" -c ucur.c -o ucur-$1.o
clang $F -I"$NEW/include" -I"$NEW/kernels" -c unew.c -o unew-$1.o
clang -O2 -I"$NEW/include" -I"$NEW/kernels" bench.c ucur-$1.o unew-$1.o -o bench-$1 -lm
