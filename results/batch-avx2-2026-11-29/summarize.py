#!/usr/bin/env python3
"""Whole-step times (ms) of `serve --bench-batch` per file, build, batch and round from
run.sh's output, and each round's ratio before / after (same round, adjacent runs).
A kernel set named after the round (`== round 1 avx2 FILE qb-BUILD`) is kept with the file.
usage: summarize.py RUN.txt [BEFORE AFTER]"""
import re, sys, collections
runs = collections.defaultdict(dict)  # (model, round) -> build -> {batch: ms}
gate = collections.defaultdict(dict)  # (model, round) -> build -> {batch: us}
cur = None
for line in open(sys.argv[1]):
    m = re.match(r"== round (\d+) (?:(avx2|avx512|portable) )?(\S+) qb-(\S+) ", line)
    if m:
        model = f"{m.group(2)} {m.group(3)}" if m.group(2) else m.group(3)
        cur = (model, int(m.group(1)), m.group(4))
        runs[cur[:2]][cur[2]] = {}
        gate[cur[:2]][cur[2]] = {}
        continue
    m = re.match(r"engine\s+(\d+)\s+([\d.]+)", line)
    if m and cur:
        runs[cur[:2]][cur[2]][int(m.group(1))] = float(m.group(2))
        continue
    m = re.match(r"\s+(\d+)\s+([\d.]+)\s+[\d.]+x", line)
    if m and cur:
        gate[cur[:2]][cur[2]][int(m.group(1))] = float(m.group(2))
before, after = sys.argv[2:4] if len(sys.argv) > 3 else ("d50", "b2")
print("| file | round | B | step before (ms) | after (ms) | before / after | gate+up B / B=1 before | after |")
print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |")
for (model, rnd), builds in sorted(runs.items(), key=lambda kv: (kv[0][0], kv[0][1])):
    b, a = builds.get(before, {}), builds.get(after, {})
    gb, ga = gate[(model, rnd)].get(before, {}), gate[(model, rnd)].get(after, {})
    for batch in sorted(set(b) & set(a)):
        gr = lambda g: f"{g[batch] / g[1]:.2f}" if batch in g and 1 in g else "–"
        print(f"| {model} | {rnd} | {batch} | {b[batch]:.2f} | {a[batch]:.2f} | {b[batch] / a[batch]:.3f} | {gr(gb)} | {gr(ga)} |")
