#!/usr/bin/env python3
"""Tables from side-by-side.sh's files (run in their folder): per file and test, each
engine's median t/s over every repetition of every round (and each round's median), ours
over ik_llama.cpp's, and our roofline lines."""
import glob, json, os, re, statistics as st

FILES = ["Q4_0", "Q4_K_M", "Q8_0", "gemma", "Q4_0-1t", "Q4_0-tg", "Q4_K_M-tg"]

def llama_bench(path):
    try:
        recs = json.load(open(path))
    except Exception:
        return {}
    out = {}
    for r in recs:
        test = f"pp{r['n_prompt']}" if r["n_gen"] == 0 else f"tg{r['n_gen']}"
        out[test] = r.get("samples_ts") or [r["avg_ts"]]
    return out

def ours(path):
    try:
        d = json.load(open(path))
    except Exception:
        return {}
    return {c["test"]: c["metrics"]["tokens_per_s"]["samples"] for c in d["cases"] if c.get("test")}

def gather(prefix, f, reader, ext):
    rounds = {}
    for p in sorted(glob.glob(f"{prefix}-{f}-[0-9]*.{ext}")):
        m = re.match(rf"{re.escape(prefix)}-{re.escape(f)}-(\d+)\.{ext}$", os.path.basename(p))
        if m:
            rounds[int(m.group(1))] = reader(p)
    return rounds

def fmt(rounds, test):
    per = [st.median(r[test]) for _, r in sorted(rounds.items()) if test in r]
    pooled = [x for _, r in sorted(rounds.items()) if test in r for x in r[test]]
    if not pooled:
        return None, "–"
    return st.median(pooled), f"{st.median(pooled):.1f} ({', '.join(f'{x:.1f}' for x in per)})"

print("| file | test | ik_llama.cpp -rtr 1 | ours | ours / ik | mainline | ours / mainline |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
for f in FILES:
    ik, qb, mn = (gather("ik", f, llama_bench, "json"), gather("qb", f, ours, "json"),
                  gather("main", f, llama_bench, "json"))
    for test in ["pp512", "pp128", "tg128"]:
        a, sa = fmt(ik, test); b, sb = fmt(qb, test); c, sc = fmt(mn, test)
        if a is None and b is None:
            continue
        r1 = f"{b / a:.2f}" if a and b else "–"
        r2 = f"{b / c:.2f}" if c and b else "–"
        print(f"| {f} | {test} | {sa} | {sb} | {r1} | {sc} | {r2} |")
print()
for p in sorted(glob.glob("qb-*.md")):
    for line in open(p):
        if re.match(r"^(pp|tg)\d+: ", line):
            print(f"- {p[:-3]}: {line.strip()}")
