import json, sys, glob, re, os
d = sys.argv[1]
lines = open(os.path.join(d, 'series.txt')).read().split('\n')
load = {}
for l in lines:
    m = re.match(r'(\w+) (\d+) exit=(\d+) seconds=(\d+) load=([\d.]+)', l)
    if m: load[(m.group(1), int(m.group(2)))] = (int(m.group(3)), int(m.group(4)), m.group(5))
print('| kind | run | exit | s | load (1 min) | gated rows | pp64 t/s change [95% CI] | pp64 CPU change | smallest p (Holm) |')
print('|---|---:|---:|---:|---:|---|---|---|---|')
for kind in ['same', 'slow3', 'slow10']:
    for i in range(1, 11):
        f = os.path.join(d, f'{kind}-{i}.json')
        if not os.path.exists(f): continue
        j = json.load(open(f))
        rows = j['ab']['report']['rows']
        gated = [f"{r['case']} {r['metric']}" for r in rows if r.get('verdict') == 'regression']
        def row(case, metric):
            for r in rows:
                if r['case'] == case and r['metric'] == metric: return r
        t = row('pp64', 'tokens_per_s'); c = row('pp64', 'cpu_s')
        def fmt(r):
            iv = r['interval']
            return f"{r['change']*100:+.1f}% [{(iv['ci_low']-1)*100 if r['metric']!='tokens_per_s' else (1/iv['ci_high']-1)*100:+.1f}, {(iv['ci_high']-1)*100 if r['metric']!='tokens_per_s' else (1/iv['ci_low']-1)*100:+.1f}]"
        ps = min(rows, key=lambda r: r.get('p', 1))
        e, s, l = load.get((kind, i), ('?', '?', '?'))
        print(f"| {kind} | {i} | {e} | {s} | {l} | {', '.join(gated) or '—'} | {fmt(t)} | {fmt(c)} | {ps['p']:.2g} ({ps['p_holm']:.2g}) {ps['case']} {ps['metric']} |")
