#!/bin/bash
# The f16/q8_0 decode attention pass (../../attention-f16-2026-11-28/attention-stream.c: one
# thread, head size 64, four query heads, 4096 positions, best of 8) with the tree's kernels
# as BASE and tried.diff's kernels, compiled with each variant's -D flags, as NEW. From the
# repository's root, with tried.diff applied to a copy of the sources in $NEWSRC:
#   git archive HEAD Sources/CQBKernels | tar -x -C base
set -e
F="-O3 -march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512 -ffp-contract=on"
printf '#define QB_ISA avx2\n#include "qb_isa_unit.h"\n' > b.c
printf '#define QB_ISA avx512\n#include "qb_isa_unit.h"\n' > n.c
clang $F -Ibase/Sources/CQBKernels/kernels -Ibase/Sources/CQBKernels/include -c b.c -o b.o
run() {
  clang $F $1 -I$NEWSRC/Sources/CQBKernels/kernels -I$NEWSRC/Sources/CQBKernels/include -c n.c -o n.o
  clang -O2 -march=x86-64-v3 -I$NEWSRC/Sources/CQBKernels/include attention-stream.c n.o b.o -o attention-stream -lm
  echo "== NEW: ${1:-no flags: the tree as it is}"; ./attention-stream 4096 512 8
}
run ""
run "-DATT_L2_ROWS=256"
run "-DATT_L2_ROWS=512"
run "-DATT_L2_ROWS=1024"
run "-DATT_PREFETCH_ROWS=64"
run "-DATT_PREFETCH_ROWS=256"
run "-DATT_HINT=_MM_HINT_T1"
run "-DATT_HINT=_MM_HINT_T1 -DATT_PREFETCH_ROWS=512"
run "-DATT_HINT=_MM_HINT_NTA"
run "-DATT_PREFETCH_ROWS=100000"
