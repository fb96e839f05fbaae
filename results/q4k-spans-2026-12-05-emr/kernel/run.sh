#!/bin/bash
# The avx512 Q4_K prefill tiles alone, one thread (q4p512.c): BASE the parent's kernels
# (base/: git archive 9a247df Sources/CQBKernels | tar -x -C base), NEW this commit's (new/),
# each process timing both in turn against its own int8 peak probe; 2048 and 8192 columns
# (tiles from L2), and 512 (all of it in L1). Run from a scratch folder holding q4p512.c.
set -e
F="-O3 -march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512 -ffp-contract=on"
printf '#define QB_ISA avx512b\n#include "qb_isa_unit.h"\n' > b5.c
printf '#define QB_ISA avx512\n#include "qb_isa_unit.h"\n' > n5.c
clang $F -Ibase/Sources/CQBKernels/kernels -Ibase/Sources/CQBKernels/include -c b5.c -o b5.o
clang $F -Inew/Sources/CQBKernels/kernels -Inew/Sources/CQBKernels/include -c n5.c -o n5.o
for c in 2048 8192 512; do
    clang -O2 -march=x86-64-v4 -DNCOLS=$c -Inew/Sources/CQBKernels/include q4p512.c n5.o b5.o -o q4p512 -lm
    echo "== $c columns"; ./q4p512 15; ./q4p512 15
done
