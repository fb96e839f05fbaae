#!/bin/bash
# The decode attention pass of ../attention-f16-2026-11-28/attention-stream.c, three runs:
# BASE the kernels of fff6218 (the parent), NEW this commit's, both on the avx512 set. WORK
# a scratch folder holding attention-stream.c and base/ (`git archive fff6218
# Sources/CQBKernels | tar -x -C base`); REPO the tree of this commit.
set -e
cd WORK
NEWSRC=${NEWSRC:-REPO}
F="-O3 -march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512 -ffp-contract=on"
printf '#define QB_ISA avx2\n#include "qb_isa_unit.h"\n' > b.c
printf '#define QB_ISA avx512\n#include "qb_isa_unit.h"\n' > n.c
clang $F -Ibase/Sources/CQBKernels/kernels -Ibase/Sources/CQBKernels/include -c b.c -o b.o
clang $F -I$NEWSRC/Sources/CQBKernels/kernels -I$NEWSRC/Sources/CQBKernels/include -c n.c -o n.o
clang -O2 -march=x86-64-v3 -I$NEWSRC/Sources/CQBKernels/include attention-stream.c n.o b.o -o attention-stream -lm
for i in 1 2 3; do ./attention-stream 4096 512 8; done
