#!/bin/bash
# The avx512 Q4_K prefill tiles alone, one thread (q4p512.c), three processes per column count,
# each timing BASE (base/: a tree's Sources/CQBKernels, `git archive C Sources/CQBKernels | tar -x
# -C base`) and NEW (new/) in turn.
#   runc.sh BASE-SETTING NEW-SETTING COLUMNS...   the qb_set_q4k_dpwssd setting of each side
# Run from a scratch folder holding base/, new/ and ../../q4k-spans-2026-12-05-emr/kernel/q4p512.c.
set -e
F="-O3 -march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512 -ffp-contract=on"
printf '#define QB_ISA avx512b\n#include "qb_isa_unit.h"\n' > b5.c
printf '#define QB_ISA avx512\n#include "qb_isa_unit.h"\n' > n5.c
clang $F -Ibase/Sources/CQBKernels/kernels -Ibase/Sources/CQBKernels/include -c b5.c -o b5.o
clang $F -Inew/Sources/CQBKernels/kernels -Inew/Sources/CQBKernels/include -c n5.c -o n5.o
b=$1; n=$2; shift 2
for c in "$@"; do
    clang -O2 -march=x86-64-v4 -DNCOLS=$c -Inew/Sources/CQBKernels/include q4p512.c n5.o b5.o -o q4p512 -lm
    echo "== $c columns (base dp $b, new dp $n)"; ./q4p512 15 $b $n; ./q4p512 15 $b $n; ./q4p512 15 $b $n
done
