import re, sys, statistics as st
# Per binary and batch size, medians over rounds: the gate+up product's time and its ratio to
# the same run's one-row time (vs-B1; the one-row path is the same in both builds, so the
# ratio takes out the host's drift between runs), and the whole engine step (ms, tokens/s)
# and its ratio to the same run's one-sequence step.
runs = []
cur = None
for line in open(sys.argv[1]):
    m = re.match(r'== round (\d+) qb-(\S+)( (?!\d\d:)\S+)?', line)
    if m: cur = {'bin': m.group(2) + (m.group(3) or ''), 'prod': {}, 'step': {}}; runs.append(cur); continue
    f = line.split()
    if cur is None: continue
    if len(f) == 11 and f[0].isdigit(): cur['prod'][int(f[0])] = (float(f[1]), float(f[2].rstrip('x')))
    if len(f) >= 7 and f[0] == 'engine' and f[1].isdigit(): cur['step'][int(f[1])] = (float(f[2]), float(f[3]))
bins = []
for r in runs:
    if r['bin'] not in bins: bins.append(r['bin'])
sizes = sorted(runs[0]['prod'])
print('| batch | ' + ' | '.join(f'{b}: gate+up us | {b}: vs one row | {b}: step ms (tokens/s) | {b}: step vs one sequence' for b in bins) + ' |')
print('|---|' + '---:|' * (4 * len(bins)))
for s in sizes:
    cells = []
    for b in bins:
        rs = [r for r in runs if r['bin'] == b and s in r['prod']]
        if not rs: cells += ['-'] * 4; continue
        us = [r['prod'][s][0] for r in rs]; rel = [r['prod'][s][1] for r in rs]; step = [r['step'][s] for r in rs]
        cells += [f"{st.median(us):.0f}", f"{st.median(rel):.2f} ({', '.join(f'{x:.2f}' for x in rel)})",
                  f"{st.median(x[0] for x in step):.1f} ({st.median(x[1] for x in step):.1f})",
                  f"{st.median(r['step'][s][0] / r['step'][1][0] for r in rs):.2f}"]
    print(f'| {s} | ' + ' | '.join(cells) + ' |')
