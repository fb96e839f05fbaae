#!/bin/sh
# The runs of q6k.out: KEPT and FIRST are ./q6k built from the layout as kept (each pair's
# high bits before its low bits) and as first written (after them; the kept tree with
# q6k_x16_at and q6k_x16_values_512 put back to that order), each by build.sh.
: "${KEPT:?} ${FIRST:?}"
date -u
for i in 1 2 3; do
    echo "== kept layout (high bits first), 1 thread"; "$KEPT" 101 1
    echo "== first layout (low bits first), 1 thread"; "$FIRST" 101 1
done
echo "== kept layout, 1 thread, hot"; "$KEPT" 101 1 hot
echo "== first layout, 1 thread, hot"; "$FIRST" 101 1 hot
for i in 1 2 3; do
    echo "== kept layout, 2 threads"; "$KEPT" 101 2
    echo "== first layout, 2 threads"; "$FIRST" 101 2
done
date -u
