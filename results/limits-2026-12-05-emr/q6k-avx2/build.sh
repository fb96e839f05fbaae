#!/bin/bash
# Builds q6bench: BASE the kernels of `base/` (git archive HEAD Sources/CQBKernels | tar -x -C
# base), NEW those of the tree at $NEWSRC with a tried diff applied, both the avx2 set's flags
# (Package.swift). Run from a scratch folder holding q6bench.c; then ./q6bench 15.
set -e
F="-O3 -march=x86-64-v3 -ffp-contract=on"
printf '#define QB_ISA base\n#include "qb_isa_unit.h"\n' > b.c
printf '#define QB_ISA avx2\n#include "qb_isa_unit.h"\n' > n.c
clang $F -Ibase/Sources/CQBKernels/kernels -Ibase/Sources/CQBKernels/include -c b.c -o b.o
clang $F -I$NEWSRC/Sources/CQBKernels/kernels -I$NEWSRC/Sources/CQBKernels/include -c n.c -o n.o
clang -O2 -march=x86-64-v3 -I$NEWSRC/Sources/CQBKernels/include q6bench.c n.o b.o -o q6bench -lm
