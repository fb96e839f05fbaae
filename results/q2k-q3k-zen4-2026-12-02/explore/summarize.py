#!/usr/bin/env python3
"""Medians of tokens/s in one explore folder's bench JSONs (named BUILD-SET-FILE-ROUND.json), per
set, file and case: each build's median over all rounds' repetitions, and the ratio of the
second build named to the first (usage: summarize.py DIR OLD NEW)."""
import glob, json, os, statistics, sys

d, old, new = sys.argv[1], sys.argv[2], sys.argv[3]
data = {}
for path in glob.glob(os.path.join(d, "*.json")):
    build, kset, rest = os.path.basename(path)[:-5].split("-", 2)
    model = rest.rsplit("-", 1)[0]
    for c in json.load(open(path))["cases"]:
        data.setdefault((kset, model, c["id"]), {}).setdefault(build, []).extend(c["metrics"]["tokens_per_s"]["samples"])
print(f"| set | file | case | {old} | {new} | {new} / {old} |\n| --- | --- | --- | ---: | ---: | ---: |")
for (kset, model, case), v in sorted(data.items()):
    if old in v and new in v:
        a, b = statistics.median(v[old]), statistics.median(v[new])
        print(f"| {kset} | {model} | {case} | {a:.1f} | {b:.1f} | {b / a:.2f} |")
