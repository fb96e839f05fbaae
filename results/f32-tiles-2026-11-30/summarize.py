#!/usr/bin/env python3
"""Median over the three alternating rounds of each benchmark's p50, before and after
(bench/{matmul,matvec}-{before,after}-N.md, package-benchmark's markdown)."""
import glob
import os
import statistics


def parse(path):
    out, name = {}, None
    for line in open(path):
        if line.startswith("### "):
            name = line[4:].strip()
            out[name] = {}
        elif name and line.startswith("| ") and not line.startswith("| Metric"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if "Time" not in cells[0]:
                out[name][cells[0]] = int(cells[3])  # p50
    return out


here = os.path.dirname(os.path.abspath(__file__))
print("| benchmark | metric | before (p50 per round) | after | median before -> after |")
print("| --- | --- | --- | --- | --- |")
for kind in ("matmul", "matvec"):
    rounds = {}
    for side in ("before", "after"):
        for path in sorted(glob.glob(os.path.join(here, "bench", f"{kind}-{side}-*.md"))):
            for name, metrics in parse(path).items():
                for metric, value in metrics.items():
                    rounds.setdefault((name, metric), {}).setdefault(side, []).append(value)
    for (name, metric), sides in sorted(rounds.items()):
        b, a = sides.get("before", []), sides.get("after", [])
        if b and a:
            print(f"| {name} | {metric} | {b} | {a} | {statistics.median(b)} -> {statistics.median(a)} |")
