#!/usr/bin/env python3
"""peers.sh's runs: per file, set and prompt length, ours / ik_llama.cpp, each the median of
its rounds' figures (ik: llama-bench's mean of 3 repetitions per round; ours: the median of 3).
Usage: peers.py DIR"""
import glob, json, os, re, statistics, sys

d = sys.argv[1] if len(sys.argv) > 1 else "peers"
print("| set | file | " + " | ".join(f"pp{n}" for n in (2, 4, 8, 16, 32, 127, 128)) + " |")
print("| --- | --- |" + " --- |" * 7)
for s in ("avx512", "avx2"):
    for m in ("Q4_0", "Q4_K_M", "gemma"):
        ik, qb = {}, {}
        for f in sorted(glob.glob(os.path.join(d, f"ik-{s}-{m}-*.md"))):
            for line in open(f):
                g = re.search(r"\|\s+pp(\d+)\s+\|\s+([\d.]+) ±", line)
                if g:
                    ik.setdefault(int(g.group(1)), []).append(float(g.group(2)))
        for f in sorted(glob.glob(os.path.join(d, f"qb-{s}-{m}-*.json"))):
            for c in json.load(open(f))["cases"]:
                if c["id"].startswith("pp"):
                    qb.setdefault(int(c["id"][2:]), []).append(c["metrics"]["tokens_per_s"]["median"])
        cells = []
        for n in (2, 4, 8, 16, 32, 127, 128):
            if n in ik and n in qb:
                a, b = statistics.median(qb[n]), statistics.median(ik[n])
                cells.append(f"{a:.0f} / {b:.0f} = **{a / b:.2f}**")
            else:
                cells.append("-")
        print(f"| {s} | {m} | " + " | ".join(cells) + " |")
