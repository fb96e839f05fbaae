#!/bin/bash
# For each ab JSON in DIR: the verdict on its first 24 rounds only (what the run would have
# said without added rounds), by `QB ab --rejudge` of a truncated copy.
qb=$1; dir=$2; tmp=$(mktemp -d)
for f in "$dir"/*.json; do
  b=$(basename "$f" .json)
  python3 - "$f" "$tmp/$b.json" <<'PY'
import json,sys
j=json.load(open(sys.argv[1]))
for r in j['ab']['report']['rows']:
    for k in ('base_values','new_values','base_repetitions','new_repetitions'):
        if r.get(k) is not None: r[k]=r[k][:24]
j['ab']['rounds']=j['ab']['rounds'][:24]
json.dump(j,open(sys.argv[2],'w'))
PY
  "$qb" ab --rejudge "$tmp/$b.json" --out "$tmp/$b-re.json" > /dev/null 2>&1
  echo "$b at24_status=$? $(python3 -c "
import json;j=json.load(open('$tmp/$b-re.json'));print(' '.join('%s/%s=%s'%(r['case'],r['metric'],r['verdict']) for r in j['ab']['report']['rows'] if r['verdict'] in ('regression','possible regression')))")"
done
rm -rf "$tmp"
