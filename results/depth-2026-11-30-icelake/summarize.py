"""Summarizes side-by-side.log and qb-*.json: decode t/s at depth 0 and 4096 per engine,
kernel set and cache type, round by round, and each engine's drop from depth 0 to 4096."""
import glob
import json
import re
import sys

folder = sys.argv[1] if len(sys.argv) > 1 else "."
rows = []  # (round, kv, engine, tg0, tg4096)
text = open(f"{folder}/side-by-side.log").read()
counts = {}
for block in text.split("### ")[1:]:
    head, _, body = block.partition("\n")
    if "llama-bench" not in head:
        continue
    kv = re.search(r"-ctk (\S+)", head).group(1)
    # The log names the builds by variable once its paths are replaced ($IK_BIN native,
    # $IK_AVX2_BIN x86-64-v3), by folder before.
    build = "ik avx512 (native)" if "buildicl" in head or "$IK_BIN/" in head else "ik x86-64-v3"
    key = (build, kv)
    counts[key] = counts.get(key, 0) + 1
    try:
        start, end = body.index("["), body.rindex("]") + 1
        runs = json.loads(body[start:end])
    except ValueError:  # a run still going (or one that failed): no figures
        counts[key] -= 1
        continue
    tg = {r["n_prompt"]: r["avg_ts"] for r in runs}
    rows.append((counts[key], kv, build, tg[0], tg[4096]))
for f in sorted(glob.glob(f"{folder}/qb-*.json")):
    m = re.search(r"qb-(avx512|avx2)-(\w+)-(\d+)\.json", f)
    d = json.load(open(f))
    tg = {c["id"]: c["metrics"]["tokens_per_s"]["median"] for c in d["cases"]}
    rows.append((int(m.group(3)), m.group(2), f"ours {m.group(1)}", tg["tg128"], tg["tg128@d4096"] if "tg128@d4096" in tg else tg[[k for k in tg if "4096" in k][0]]))
print("| round | cache | engine | tg128 t/s | tg128 at depth 4096 | drop |")
print("| ---: | --- | --- | ---: | ---: | ---: |")
for r, kv, e, a, b in sorted(rows, key=lambda x: (x[1], x[2].replace("ours ", "").replace("ik ", ""), x[0])):
    print(f"| {r} | {kv} | {e} | {a:.2f} | {b:.2f} | {100 * (b / a - 1):+.0f}% |")
