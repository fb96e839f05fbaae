#!/bin/bash
# The kernels alone, one thread, 2048 x 8192 (a gate/up matrix of the 1B llama), from memory
# (16 copies rotated) and from cache (1): before (d5028f4) and after, alternating.
set -e
S=${1:-avx2}
echo "kernel set $S, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(date -u +%FT%TZ)"
for t in 2 3 6 7 8; do for n in 1 4 8; do for c in 16 1; do ./mt-$S 2048 8192 $n $c $([ $n = 1 ] && echo 41 || echo 21) $t; done; done; done
for t in 12 14; do for n in 1 4 8; do for c in 16 1; do ./mk-$S 2048 8192 $n $c $([ $n = 1 ] && echo 41 || echo 21) $t; done; done; done
for b in 4 8; do for n in 1 4 8; do for c in 16 1; do ./mx-$S 2048 8192 $n $c $([ $n = 1 ] && echo 41 || echo 21) $b 64; done; done; done
