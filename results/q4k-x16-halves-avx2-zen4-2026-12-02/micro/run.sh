#!/bin/sh
# The one-row Q4_K decode kernel on the AVX2 unit: fa79ef0's (a pass per 8-row half) against
# this tree's (both halves in one pass), taking turns, one thread, in L2 and from memory.
# Uses ../../q6k-x16-avx2-zen4-2026-12-02/micro-q4k/ (its q4k.c and build.sh). Run from an
# empty directory; writes ./q4k.
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
before=$(mktemp -d)
git -C "$root" archive fa79ef0 Sources | tar -x -C "$before"
BEFORE=$before AFTER=$root sh "$root/results/q6k-x16-avx2-zen4-2026-12-02/micro-q4k/build.sh"
rm -rf "$before"
for round in 1 2 3; do ./q4k 61 hot; ./q4k 21; done
