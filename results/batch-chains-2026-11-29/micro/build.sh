#!/bin/bash
# The Q4_0 tile kernel of two checkouts in one program (bench.c), each compiled as the avx512
# set is (Package.swift's flags) under its own prefix: OLD (tcur) and NEW (tnew) are the
# checkouts' Sources/CQBKernels folders. Then: ./bench ROWS COLS R REPS (alternating calls,
# medians, and a bitwise check of the two outputs); ./peak; ./clk.
set -e
: "${OLD:?set OLD to a checkout's Sources/CQBKernels}" "${NEW:?set NEW to a checkout's Sources/CQBKernels}"
F="-O3 -ffp-contract=on -march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512"
printf '#define QB_ISA tcur\n#include "qb_isa_unit.h"\n' > ucur.c
printf '#define QB_ISA tnew\n#include "qb_isa_unit.h"\n' > unew.c
clang $F -I"$OLD/include" -I"$OLD/kernels" -c ucur.c -o ucur.o
clang $F -I"$NEW/include" -I"$NEW/kernels" -c unew.c -o unew.o
clang -O2 -I"$NEW/include" -I"$NEW/kernels" bench.c ucur.o unew.o -o bench -lm
clang -O2 -march=x86-64-v4 -mavx512vnni peak.c -o peak
clang -O2 clk.c -o clk
