#!/usr/bin/env python3
"""Tables from side-by-side.sh's files (run in the folder holding them): per file and test,
each engine's median t/s over every repetition of every round (each round's median in
brackets) and ours over ik_llama.cpp's; decode at depth as t/s and the drop from depth 0.
With --per-round, a second table: ours / ik round by round (each round's two runs ran back
to back) and the median of those ratios."""
import glob, json, os, re, statistics as st, sys

def llama_bench(path):
    out = {}
    for r in json.load(open(path)):
        if r["n_gen"] == 0:
            test = f"pp{r['n_prompt']}"
        elif r["n_prompt"] == 0:
            test = f"tg{r['n_gen']}"
        else:  # -gp: generation after an untimed prompt
            test = f"tg{r['n_gen']}@d{r['n_prompt']}"
        out[test] = r.get("samples_ts") or [r["avg_ts"]]
    return out

def ours(path):
    out = {}
    for c in json.load(open(path))["cases"]:
        test = c.get("test")
        if not test:
            continue
        test = re.sub(r"-d(\d+)$", r"@d\1", test.replace(" @ d", "-d"))
        out[test] = c["metrics"]["tokens_per_s"]["samples"]
    return out

def gather(prefix, name, reader):
    rounds = {}
    for p in glob.glob(f"{prefix}-{name}-[0-9]*.json"):
        m = re.fullmatch(rf"{re.escape(prefix)}-{re.escape(name)}-(\d+)\.json", os.path.basename(p))
        if m:
            try:
                rounds[int(m.group(1))] = reader(p)
            except Exception:
                pass
    return rounds

def median(rounds, test):
    per = [st.median(r[test]) for _, r in sorted(rounds.items()) if test in r]
    pooled = [x for _, r in sorted(rounds.items()) if test in r for x in r[test]]
    if not pooled:
        return None, "–"
    return st.median(pooled), f"{st.median(pooled):.1f} ({', '.join(f'{x:.1f}' for x in per)})"

names = sorted({re.sub(r"^(ik|qb)-(.*)-\d+\.json$", r"\2", os.path.basename(p)) for p in glob.glob("[iq][kb]-*-[0-9]*.json")})
# Each file's rounds read once, for both tables.
files = []
for name in names:
    ik, qb = gather("ik", name, llama_bench), gather("qb", name, ours)
    files.append((name, ik, qb, sorted({t for r in list(ik.values()) + list(qb.values()) for t in r})))
print("| file | test | ik_llama.cpp -rtr 1 | ours | ours / ik |")
print("| --- | --- | ---: | ---: | ---: |")
for name, ik, qb, tests in files:
    for test in tests:
        a, sa = median(ik, test)
        b, sb = median(qb, test)
        print(f"| {name} | {test} | {sa} | {sb} | {f'{b / a:.2f}' if a and b else '–'} |")
print()
if "--per-round" in sys.argv[1:]:
    print("| file | test | ours / ik, round by round | median |")
    print("| --- | --- | --- | ---: |")
    for name, ik, qb, tests in files:
        for test in tests:
            ratios = [st.median(qb[r][test]) / st.median(ik[r][test])
                      for r in sorted(set(ik) & set(qb)) if test in ik[r] and test in qb[r]]
            if ratios:
                print(f"| {name} | {test} | {' '.join(f'{x:.2f}' for x in ratios)} | {st.median(ratios):.2f} |")
    print()
for p in sorted(glob.glob("qb-*.md")):
    for line in open(p):
        if re.match(r"^(pp|tg)\d+.*: (weight|weights)", line):
            print(f"- {p[:-3]}: {line.strip()}")
