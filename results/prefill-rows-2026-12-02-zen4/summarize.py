#!/usr/bin/env python3
"""Medians of tokens/s per prompt length from run.sh's JSONs: each pair of builds round by
round, and the ratio of the medians over both rounds' repetitions (usage: summarize.py DIR)."""
import glob, json, os, statistics, sys

d = sys.argv[1] if len(sys.argv) > 1 else "runs"

def reps(path):
    out = {}
    for c in json.load(open(path))["cases"]:
        out[c["id"]] = c["metrics"]["tokens_per_s"]["samples"]
    return out

for part, (old, new) in (("tails", ("69", "short")), ("short", ("47", "short"))):
    print(f"## {part}: {old} -> {new} (t/s, median of each build's repetitions over all rounds; ratio new/old)\n")
    for s in ("avx2", "avx512"):
        for m in ("Q4_0", "Q4_K_M", "Q8_0", "gemma"):
            files = {b: sorted(glob.glob(os.path.join(d, f"{part}-{s}-{m}-{b}-*.json"))) for b in (old, new)}
            if not files[old] or not files[new]:
                continue
            data = {b: {} for b in (old, new)}
            for b in (old, new):
                for f in files[b]:
                    for k, v in reps(f).items():
                        data[b].setdefault(k, []).extend(v)
            cells = []
            for k in data[old]:
                if k.startswith("tg"):
                    continue
                a, n = statistics.median(data[old][k]), statistics.median(data[new][k])
                cells.append(f"{k} {a:.0f} -> {n:.0f} ({n / a:.2f}x)")
            print(f"- {s} {m}: " + "; ".join(cells))
    print()
