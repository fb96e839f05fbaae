#!/bin/bash
# Live ab series under the committed rule: same / 3% / 10% interleaved, 10 runs each.
# Usage: series.sh QB QB_SLOW OUTDIR  (run from the checkout, for Prompts/)
set -u
qb=$1; slow=$2; out=$3
mkdir -p "$out"
cp "$qb" "$out/qb-copy"
printf '#!/bin/sh\nQB_TEST_SLOWDOWN=pp64:3 exec %s "$@"\n' "$slow" > "$out/slow3.sh"
printf '#!/bin/sh\nQB_TEST_SLOWDOWN=pp64:10 exec %s "$@"\n' "$slow" > "$out/slow10.sh"
chmod +x "$out"/*.sh
for i in $(seq 1 10); do
  for kind in same slow3 slow10; do
    case $kind in
      same) base=$qb; cand=$out/qb-copy ;;
      slow3) base=$slow; cand=$out/slow3.sh ;;
      slow10) base=$slow; cand=$out/slow10.sh ;;
    esac
    start=$(date +%s)
    "$qb" ab --baseline "$base" --candidate "$cand" --out "$out/$kind-$i.json" --summary "$out/$kind-$i.md" > "$out/$kind-$i.log" 2>&1
    rc=$?
    echo "$kind $i exit=$rc seconds=$(( $(date +%s) - start )) load=$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/series.txt"
  done
done
