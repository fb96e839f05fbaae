#!/bin/sh
# The kernels in L2 (one row, 3 and 8 rows), then from memory on one and two threads; Q4_K,
# then Q6_K (Q6=1: its kernels are unchanged, for comparison). Run from an empty directory.
set -e
sh "$(dirname "$0")/build.sh"
for round in 1 2 3; do
    echo "== round $round"
    ./q4k 9 hot; ./q4k 9 hot 3; ./q4k 9 hot 8; ./q4k 7 mem1; ./q4k 7 mem2
done
echo "== Q6_K"
Q6=1 ./q4k 9 hot; Q6=1 ./q4k 7 mem1
