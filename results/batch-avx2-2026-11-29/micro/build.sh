#!/bin/bash
# ./build.sh avx2|avx512, with NEW (the tree after) and VAR (before) naming Sources/CQBKernels
# directories: both trees' kernels compiled with Package.swift's flags for the set, each
# under its own prefix, and linked into mt, mk and mx (or the programs PROGS names, their
# sources in the current folder: micro.h is found beside this script).
set -e
case "$1" in avx512) F="-O3 -ffp-contract=on -march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512";; avx2) F="-O3 -ffp-contract=on -march=x86-64-v3";; esac
printf '#define QB_ISA tnew\n#include "qb_isa_unit.h"\n' > unew.c
printf '#define QB_ISA tvar\n#include "qb_isa_unit.h"\n' > uvar.c
clang $F -I"$NEW/include" -I"$NEW/kernels" -c unew.c -o unew-$1.o &
clang $F -I"$VAR/include" -I"$VAR/kernels" -c uvar.c -o uvar-$1.o
wait
for p in ${PROGS:-mt mk mx}; do clang -O2 -I"$(dirname "$0")" -I"$NEW/include" -I"$NEW/kernels" $p.c unew-$1.o uvar-$1.o -o $p-$1 -lm; done
