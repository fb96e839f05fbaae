#!/usr/bin/env python3
"""micro.txt's pairs: per kernel set and shape, each side's median time per head pass and
the per-round ratios after / before with their median."""
import collections, re, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1] if len(sys.argv) > 1 else "micro.txt"):
    m = re.match(r"(\w+) (\w+) round (\d+): hd (\d+) group (\d+) depth (\d+) heads (\d+): ([\d.]+) us", line)
    if m:
        runs[(m[2], int(m[4]), int(m[5]), int(m[6]), int(m[7]), m[1])].append(float(m[8]))
print("| set | head size | group | depth | caches | before (us) | after (us) | after / before, per round | median |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |")
for key in sorted({k[:5] for k in runs}):
    before, after = runs[key + ("base",)], runs[key + ("new",)]
    ratios = [a / b for b, a in zip(before, after)]
    print("| %s | %d | %d | %d | %d | %.1f | %.1f | %s | **%.2f** |" % (
        *key, statistics.median(before), statistics.median(after), " ".join("%.2f" % r for r in ratios), statistics.median(ratios)))
