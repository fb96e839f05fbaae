#!/bin/bash
# The kernels alone, one thread, 2048 x 8192 (a gate/up matrix of the 1B llama), from memory
# (16 copies rotated) and from cache (1): before (3cedf5d) and after, alternating, for the
# super-block formats' plain rows: 12 Q4_K, 13 Q5_K, 14 Q6_K, 23 IQ4_XS.
set -e
S=${1:-avx2}
echo "kernel set $S, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(date -u +%FT%TZ)"
for t in 12 13 14 23; do for n in 1 4 8; do for c in 16 1; do ./mq-$S 2048 8192 $n $c $([ $n = 1 ] && echo 41 || echo 21) $t; done; done; done
