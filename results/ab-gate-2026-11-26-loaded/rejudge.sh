#!/bin/bash
# Re-judge every recorded ab run of a series folder with the given binary; one line per run:
# kind-i old-exit new-exit.
qb=$1; dir=$2
while read -r kind i ex rest; do
  f="$dir/$kind-$i.json"; [ -f "$f" ] || continue
  "$qb" ab --rejudge "$f" > /dev/null 2>&1; new=$?
  echo "$kind-$i old=${ex#exit=} new=$new"
done < "$dir/series.txt"
