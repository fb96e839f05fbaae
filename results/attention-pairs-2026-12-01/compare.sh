#!/bin/sh
# compare.sh ROUNDS HD GROUP SPAN [group]: alternates /tmp/att-before/att and /tmp/att-after/att
# (build.sh), 10 passes each per round, and prints each side's best and median of the
# rounds' best-of-10 thread CPU times, and whether their outputs are byte for byte the same.
set -eu
R=$1 HD=$2 G=$3 SPAN=$4 MODE=${5:-}
log=$(mktemp)
for r in $(seq "$R"); do
    for side in before after; do
        printf '%s ' $side >> "$log"
        /tmp/att-$side/att "$HD" "$G" "$SPAN" 10 /tmp/att-$side/out.bin $MODE >> "$log"
    done
done
python3 - "$log" <<'P'
import collections, statistics, sys
t = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    t[f[0]].append(float(f[f.index('ms,') - 1]))
for side in ('before', 'after'):
    print('%-6s best %.4f ms, median %.4f ms' % (side, min(t[side]), statistics.median(t[side])))
print('after / before: best %.3f, median %.3f' % (min(t['after']) / min(t['before']), statistics.median(t['after']) / statistics.median(t['before'])))
P
head -1 "$log" | cut -d' ' -f2-6
cmp -s /tmp/att-before/out.bin /tmp/att-after/out.bin && echo "outputs: the same bytes" || echo "outputs: DIFFER"
rm -f "$log"
