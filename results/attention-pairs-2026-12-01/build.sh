#!/bin/sh
# Builds ../bounds-2026-11-30/micro/att.c (attention alone: a prefill's qb_attention_rows in
# chunks of 8, or with `group` one decode position's qb_attention_group) against the kernels
# of the tree at $ROOT (default: this repository) on the avx512 set, into $OUT/att.
#   ROOT=/tmp/before OUT=/tmp/att-before sh build.sh   # a parent, from `git worktree add /tmp/before 66bfecd`
#                                                      # (micro/attention.txt; 6aff99b for micro/decode.txt)
#   sh build.sh                                        # this tree, into /tmp/att-after
# compare.sh alternates the two.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
ROOT=${ROOT:-$(git -C "$here" rev-parse --show-toplevel)}
OUT=${OUT:-/tmp/att-after}
mkdir -p "$OUT"
src="$ROOT/Sources/CQBKernels"
inc="-I$src/kernels -I$src/include"
printf '#define QB_ISA avx512\n#include "qb_isa_unit.h"\n' > "$OUT/unit.c"
clang -O3 -ffp-contract=on -march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512 $inc -c "$OUT/unit.c" -o "$OUT/unit.o"
clang -O2 -DQB_ISA=avx512 $inc -c "$here/../bounds-2026-11-30/micro/att.c" -o "$OUT/att.o"
clang "$OUT/unit.o" "$OUT/att.o" -lm -o "$OUT/att"
