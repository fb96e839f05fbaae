import re, sys, statistics as st
# Per binary and batch size: the gate+up product's engine time, and its ratio to the four-row
# kernel's time in the same run (that kernel's code is the same in both binaries, so the ratio
# takes out the host's drift between runs); whole engine steps in ms.
runs = []
cur = None
for line in open(sys.argv[1]):
    m = re.match(r'== round (\d+) qb-(\S+)', line)
    if m: cur = {'bin': m.group(2), 'prod': {}, 'step': {}, 'four': {}}; runs.append(cur); continue
    f = line.split()
    if len(f) == 11 and f[0].isdigit():
        cur['prod'][int(f[0])] = (float(f[1]), float(f[7]))
    if len(f) >= 7 and f[0] == 'engine' and f[1].isdigit(): cur['step'][int(f[1])] = float(f[2])
    if len(f) >= 7 and f[0] == 'four-row' and f[1].isdigit(): cur['four'][int(f[1])] = float(f[2])
bins = []
for r in runs:
    if r['bin'] not in bins: bins.append(r['bin'])
sizes = sorted(runs[0]['prod'])
print('| batch | ' + ' | '.join(f'{b}: gate+up us (median of rounds) | {b}: / four-row | {b}: step ms' for b in bins) + ' |')
print('|---|' + '---:|' * (3 * len(bins)))
for s in sizes:
    cells = []
    for b in bins:
        rs = [r for r in runs if r['bin'] == b]
        us = [r['prod'][s][0] for r in rs]; rel = [r['prod'][s][0] / r['prod'][s][1] for r in rs]; step = [r['step'][s] for r in rs]
        cells += [f"{st.median(us):.0f} ({', '.join(f'{x:.0f}' for x in us)})", f"{st.median(rel):.3f} ({', '.join(f'{x:.3f}' for x in rel)})", f"{st.median(step):.1f}"]
    print(f'| {s} | ' + ' | '.join(cells) + ' |')
