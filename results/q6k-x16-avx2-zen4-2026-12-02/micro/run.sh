#!/bin/sh
# The runs of q6k.out: Q6K is ./q6k built by build.sh from the tree with the AVX2 sixteen-row
# kernel.
: "${Q6K:?}"
date -u
for i in 1 2 3; do echo "== 1 thread"; "$Q6K" 101 1; done
echo "== 1 thread, hot"; "$Q6K" 101 1 hot
for i in 1 2 3; do echo "== 2 threads"; "$Q6K" 101 2; done
date -u
