# Summary of an ab series folder: one row per run, with the verdict the run gave live and,
# when a file of re-judged exits is given (lines "kind-i old=E new=E"), the re-judged one.
import json, sys, re, os
d = sys.argv[1]
rejudged = {}
if len(sys.argv) > 2:
    for l in open(sys.argv[2]):
        m = re.match(r'(\w+)-(\d+) old=(\d) new=(\d)', l)
        if m: rejudged[(m.group(1), int(m.group(2)))] = int(m.group(4))
load = {}
for l in open(os.path.join(d, 'series.txt')):
    m = re.match(r'(\w+) (\d+) exit=(\d+) seconds=(\d+) load=([\d.]+)', l)
    if m: load[(m.group(1), int(m.group(2)))] = (int(m.group(3)), int(m.group(4)), m.group(5))
print('| kind | run | exit live | exit re-judged | s | load (1 min) | gated live | pp64 t/s change [95% CI] | pp64 CPU change | tg16 CPU change | smallest p (Holm) |')
print('|---|---:|---:|---:|---:|---:|---|---|---|---|---|')
def fmt(r):
    iv = r['interval']
    if r['metric'] == 'tokens_per_s':
        lo, hi = (1 / iv['ci_high'] - 1) * 100, (1 / iv['ci_low'] - 1) * 100
    else:
        lo, hi = (iv['ci_low'] - 1) * 100, (iv['ci_high'] - 1) * 100
    return f"{r['change']*100:+.1f}% [{lo:+.1f}, {hi:+.1f}]"
for kind in ['same', 'slow3', 'slow10']:
    for i in range(1, 11):
        f = os.path.join(d, f'{kind}-{i}.json')
        if not os.path.exists(f): continue
        rows = json.load(open(f))['ab']['report']['rows']
        gated = [f"{r['case']} {r['metric']}" for r in rows if r.get('verdict') == 'regression']
        row = lambda c, m: next(r for r in rows if r['case'] == c and r['metric'] == m)
        ps = min(rows, key=lambda r: r.get('p', 1))
        e, s, l = load.get((kind, i), ('?', '?', '?'))
        print(f"| {kind} | {i} | {e} | {rejudged.get((kind, i), '–')} | {s} | {l} | {', '.join(gated) or '—'} | {fmt(row('pp64', 'tokens_per_s'))} | "
              f"{fmt(row('pp64', 'cpu_s'))} | {fmt(row('tg16', 'cpu_s'))} | {ps['p']:.2g} ({ps['p_holm']:.2g}) {ps['case']} {ps['metric']} |")
