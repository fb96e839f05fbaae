# Drop of decode from depth 0 to 4096 per run of run.sh: llama-bench JSON in side-by-side.log, ours in qb-*.json.
import json, re, glob, statistics
rows = []
log = open('side-by-side.log').read()
rnd = {}
for blk in log.split('### ')[1:]:
    head = blk.split('\n')[0]
    if 'llama-bench' not in head: continue
    if 'load average' not in blk: continue
    body = blk[blk.index('\n') + 1:blk.index('load average')]
    arr = json.loads(body)
    kv = re.search(r'-ctk (\S+)', head).group(1)
    setn = 'avx2' if 'build-avx2' in head or 'IK_AVX2_BIN' in head else 'avx512'  # before or after the paths became placeholders
    key = ('ik', setn, kv); rnd[key] = rnd.get(key, 0) + 1
    ts = {a['n_prompt']: a['avg_ts'] for a in arr}
    rows.append((rnd[key], 'ik ' + ('x86-64-v3' if setn == 'avx2' else 'native'), kv, ts[0], ts[4096]))
for f in sorted(glob.glob('qb-*.json')):
    d = json.load(open(f)); _, setn, kv, r = f[:-5].split('-')
    ts = {}
    for c in d['cases']:
        ts[c['id']] = c['metrics']['tokens_per_s']['median']
    rows.append((int(r), 'ours ' + setn, kv, ts.get('tg128'), ts.get('tg128-d4096')))
print('| round | engine | cache | tg128 t/s | at depth 4096 | drop |\n| ---: | --- | --- | ---: | ---: | ---: |')
for r in sorted(rows, key=lambda x: (x[2], x[1], x[0])):
    print(f'| {r[0]} | {r[1]} | {r[2]} | {r[3]:.2f} | {r[4]:.2f} | {100*(r[4]/r[3]-1):+.0f}% |')
