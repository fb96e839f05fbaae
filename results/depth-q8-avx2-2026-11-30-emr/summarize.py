"""Summarizes side-by-side.log and qb-*.json: decode t/s at depth 0 and 4096 on the q8_0
cache, round by round, for ik_llama.cpp's x86-64-v3 build and our two binaries on the avx2
set, with each one's drop from depth 0 to 4096."""
import glob
import json
import re
import sys

folder = sys.argv[1] if len(sys.argv) > 1 else "."
rows = []  # (round, engine, tg0, tg4096)
text = open(f"{folder}/side-by-side.log").read()
ik_runs = 0
for block in text.split("### ")[1:]:
    head, _, body = block.partition("\n")
    if "llama-bench" not in head:
        continue
    ik_runs += 1
    try:
        start, end = body.index("["), body.rindex("]") + 1
        runs = json.loads(body[start:end])
    except ValueError:  # a run still going (or one that failed): no figures
        continue
    tg = {r["n_prompt"]: r["avg_ts"] for r in runs}
    rows.append((ik_runs, "ik x86-64-v3", tg[0], tg[4096]))
for f in sorted(glob.glob(f"{folder}/qb-*.json")):
    m = re.search(r"qb-(\w+)-avx2-q8_0-(\d+)\.json", f)
    d = json.load(open(f))
    assert d["environment"]["kernel_set"] == "avx2", f
    tg = {c["id"]: c["metrics"]["tokens_per_s"]["median"] for c in d["cases"]}
    deep = [k for k in tg if "4096" in k][0]
    rows.append((int(m.group(2)), f"ours {m.group(1)}", tg["tg128"], tg[deep]))
print("| round | engine | tg128 t/s | tg128 at depth 4096 | drop |")
print("| ---: | --- | ---: | ---: | ---: |")
for r, e, a, b in sorted(rows, key=lambda x: (x[1], x[0])):
    print(f"| {r} | {e} | {a:.2f} | {b:.2f} | {100 * (b / a - 1):+.0f}% |")
