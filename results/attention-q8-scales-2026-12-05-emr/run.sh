#!/bin/bash
set -e
cd WORK
NEWSRC=${NEWSRC:-REPO}
F="-O3 -march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512 -ffp-contract=on"
printf '#define QB_ISA avx2\n#include "qb_isa_unit.h"\n' > b.c
printf '#define QB_ISA avx512\n#include "qb_isa_unit.h"\n' > n.c
clang $F -Ibase/Sources/CQBKernels/kernels -Ibase/Sources/CQBKernels/include -c b.c -o b.o
clang $F $1 -I$NEWSRC/Sources/CQBKernels/kernels -I$NEWSRC/Sources/CQBKernels/include -c n.c -o n.o
clang -O2 -march=x86-64-v3 -I$NEWSRC/Sources/CQBKernels/include attention-stream.c n.o b.o -o attention-stream -lm
for i in 1 2 3; do ./attention-stream 4096 512 8; done
