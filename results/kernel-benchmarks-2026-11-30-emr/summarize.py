"""Medians (p50) of output.md, package-benchmark's markdown: one row per kernel and weight
format, the kernel sets side by side.  python3 summarize.py > summary.md"""
import re
import sys
from collections import OrderedDict

text = open(sys.argv[1] if len(sys.argv) > 1 else "output.md").read()
rows = OrderedDict()  # name without set -> {set: {metric: p50}}
for block in re.split(r"^### ", text, flags=re.M)[1:]:
    head, _, body = block.partition("\n")
    m = re.match(r"(.*) \[(\w+)\]$", head.strip())
    name, kset = (m.group(1), m.group(2)) if m else (head.strip(), "-")
    metrics = {}
    for line in body.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or cells[0] in ("Metric", "") or cells[0].startswith(":"):
            continue
        metrics[cells[0]] = cells[3]
    rows.setdefault(name, {})[kset] = metrics

sets = ["avx512", "avx2", "portable"]
def cell(ms, keys):
    for k in keys:
        for metric, v in ms.items():
            if metric.startswith(k):
                scale = " (K)" in metric
                return (v + "K" if scale else v), metric
    return "", ""

print("| benchmark | " + " | ".join(f"{s}: rate | {s}: share" for s in sets[:2]) + " | portable: rate | time avx512 / avx2 (µs) |")
print("| --- | " + " | ".join("---: | ---:" for _ in sets[:2]) + " | ---: | ---: |")
for name, per in rows.items():
    if name.startswith("ceilings") or name.startswith("sample"):
        continue
    out = [name]
    for s in sets[:2]:
        ms = per.get(s, {})
        rate, _ = cell(ms, ["MB/s", "GOP/s"])
        share, metric = cell(ms, ["%"])
        out += [rate, f"{share}% {metric[2:].replace('of ', '')}" if share else ""]
    rate, _ = cell(per.get("portable", {}), ["MB/s", "GOP/s"])
    t512, _ = cell(per.get("avx512", {}), ["Time"])
    t2, _ = cell(per.get("avx2", {}), ["Time"])
    out += [rate, f"{t512} / {t2}"]
    print("| " + " | ".join(out) + " |")
print()
print("| ceilings | " + " | ".join(sets) + " |")
print("| --- | " + " | ".join("---:" for _ in sets) + " |")
names = OrderedDict()
for s in sets:
    for metric in rows.get("ceilings", {}).get(s, {}):
        names[metric] = True
for metric in names:
    print(f"| {metric} | " + " | ".join(rows["ceilings"].get(s, {}).get(metric, "") for s in sets) + " |")
