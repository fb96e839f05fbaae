import json,sys,glob,os
d=sys.argv[1]
for f in sorted(glob.glob(d+'/*.json'), key=lambda p:(os.path.basename(p).split('-')[0], int(os.path.basename(p).split('-')[1].split('.')[0]))):
    j=json.load(open(f)); ab=j['ab']; rep=ab['report']
    rows=[r for r in rep['rows'] if r['case']=='pp64' and r['metric'] in ('tokens_per_s','cpu_s')]
    gated=[r['case']+' '+r['metric'] for r in rep['rows'] if r['verdict']=='regression']
    desc=' '.join('%s %+.1f%% [%.3f,%.3f] %s'%(r['metric'],r['change']*100,r['interval']['ci_low'],r['interval']['ci_high'],r['verdict'][:6]) for r in rows)
    print('%-12s rounds=%2d stop=%-11s ext=%s status=%d gated=%s | %s'%(os.path.basename(f)[:-5],len(ab['rounds']),ab['stopped_by'],','.join(ab.get('extended_for') or []) or '-',rep['status'],','.join(gated) or '-',desc))
