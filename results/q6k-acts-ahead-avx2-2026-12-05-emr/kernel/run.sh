#!/bin/bash
# The kernel alone, one thread: ../../limits-2026-12-05-emr/q6k-avx2/q6bench.c (the avx2 Q6_K
# prefill tiles, 4 tiles x 8192 columns against 16 activation rows, from L2) and q8bench.c here
# (the same for the avx2 Q8_0 tiles), each BASE against NEW in turn in one process, with the
# int8 peak probe of that process. Run from a scratch folder holding both harnesses, with
#   base/  git archive 99260f9 Sources/CQBKernels | tar -x -C base   (the parent)
#   new/   the same of this commit
# and each variant a copy of base/ or new/ with its diff applied (patch -p1 -d <copy>).
# build() is ../../limits-2026-12-05-emr/q6k-avx2/build.sh with the harness named.
set -e
F="-O3 -march=x86-64-v3 -ffp-contract=on"
build() {  # $1 harness, $2 NEW sources
    printf '#define QB_ISA base\n#include "qb_isa_unit.h"\n' > b.c
    printf '#define QB_ISA avx2\n#include "qb_isa_unit.h"\n' > n.c
    clang $F -Ibase/Sources/CQBKernels/kernels -Ibase/Sources/CQBKernels/include -c b.c -o b.o
    clang $F -I$2/Sources/CQBKernels/kernels -I$2/Sources/CQBKernels/include -c n.c -o n.o
    clang -O2 -march=x86-64-v3 -I$2/Sources/CQBKernels/include $1.c n.o b.o -o $1 -lm
}
run() {  # $1 harness, $2 NEW sources, $3 what
    echo "== $1, NEW: $3"; build $1 $2; ./$1 9; ./$1 9
}
run q6bench new "this commit"
run q6bench xor "the parent with tried-xor-in-register.diff"
run q6bench allrows "this commit with tried-all-rows-at-a-blocks-start.diff"
run q6bench noxa "the parent with ceiling-no-unsigned-copy.diff (wrong outputs)"
run q8bench new "this commit (Q8_0 unchanged)"
run q8bench q8ahead "the parent with tried-q8-widen-ahead.diff"
