#!/bin/bash
# ../attention-q8-scales-2026-12-05-emr/run.sh's pass on the avx2 set (base/ from fff6218,
# NEWSRC this tree): both trees compiled for x86-64-v3, BASE under the avx2 set's names and
# NEW under the portable set's (names only: the AVX2 paths are chosen by the compiler's
# flags), so attention-stream.c's calls are renamed to match.
set -e
cd WORK
NEWSRC=${NEWSRC:-REPO}
F="-O3 -march=x86-64-v3 -ffp-contract=on"
sed 's/qb_avx512_/qb_portable_/g' attention-stream.c > attention-stream-avx2.c
printf '#define QB_ISA avx2\n#include "qb_isa_unit.h"\n' > b2.c
printf '#define QB_ISA portable\n#include "qb_isa_unit.h"\n' > n2.c
clang $F -Ibase/Sources/CQBKernels/kernels -Ibase/Sources/CQBKernels/include -c b2.c -o b2.o
clang $F -I$NEWSRC/Sources/CQBKernels/kernels -I$NEWSRC/Sources/CQBKernels/include -c n2.c -o n2.o
clang -O2 -march=x86-64-v3 -I$NEWSRC/Sources/CQBKernels/include attention-stream-avx2.c n2.o b2.o -o attention-stream-avx2 -lm
for i in 1 2 3; do ./attention-stream-avx2 4096 512 8; done
