#!/bin/bash
# ./build.sh avx512|avx2 : NEW and VAR are Sources/CQBKernels dirs
set -e
case "$1" in avx512) F="-O3 -ffp-contract=on -march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512";; avx2) F="-O3 -ffp-contract=on -march=x86-64-v3";; esac
printf '#define QB_ISA tnew\n#include "qb_isa_unit.h"\n' > unew.c
printf '#define QB_ISA tvar\n#include "qb_isa_unit.h"\n' > uvar.c
clang $F -I"$NEW/include" -I"$NEW/kernels" -c unew.c -o unew-$1.o &
clang $F -I"$VAR/include" -I"$VAR/kernels" -c uvar.c -o uvar-$1.o
wait
clang -O2 -I"$NEW/include" -I"$NEW/kernels" mt.c unew-$1.o uvar-$1.o -o mt-$1 -lm
clang -O2 -I"$NEW/include" -I"$NEW/kernels" mk.c unew-$1.o uvar-$1.o -o mk-$1 -lm
clang -O2 -I"$NEW/include" -I"$NEW/kernels" mx.c unew-$1.o uvar-$1.o -o mx-$1 -lm
