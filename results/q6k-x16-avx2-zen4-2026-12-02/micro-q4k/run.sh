#!/bin/sh
# The runs of q4k.out: Q4K is ./q4k built by build.sh with BEFORE the tree before this change's
# Q4_K kernel (main at 79e6695 with the AVX2 Q6_K kernel) and AFTER this change's.
: "${Q4K:?}"
date -u
for i in 1 2; do "$Q4K" 101 hot; done
for i in 1 2 3; do "$Q4K" 31; done
date -u
