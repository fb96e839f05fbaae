#!/bin/bash
# The kernels alone (../batch-avx2-2026-11-29/micro/mt.c), one thread, 2048 x 8192 (a gate/up
# matrix of the 1B llama), from memory (16 copies rotated) and from L3 (1 copy): before and
# after alternating, medians. Built in a scratch folder with
#   PROGS=mt NEW=<after>/Sources/CQBKernels VAR=<before>/Sources/CQBKernels ../batch-avx2-2026-11-29/micro/build.sh avx512
# and run there. Outputs differ (each row's block sum is now one integer): the program prints MISMATCH.
set -e
S=${1:-avx512}
echo "kernel set $S, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(date -u +%FT%TZ)"
for t in ${TYPES:-3 6 7 8}; do for n in 1 2 4 8; do for c in 16 1; do ./mt-$S 2048 8192 $n $c $([ $n = 1 ] && echo 31 || echo 15) $t; done; done; done
