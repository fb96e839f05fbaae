#!/bin/bash
# The full suite N times in clone DIR (oracles required, its own PostgreSQL database),
# with whatever else runs on the machine beside it. One line per run in runs.txt.
set -u
dir=$1; db=$2; n=$3; tag=$(basename "$dir")
out=${OUT:?set OUT to the folder for logs}
cd "$dir"
export QB_TEST_POSTGRES="postgres://qb:qb@127.0.0.1:5432/$db" QB_REQUIRE_ORACLES=1 QB_ORACLE_1B=1
export QB_LLAMA_CPP_VOCABS="$HOME/.cache/quantbench/llama-cpp-vocabs"
for i in $(seq 1 "$n"); do
  [ -e "$out/stop" ] && break
  start=$(date +%s); l0=$(cut -d' ' -f1 /proc/loadavg)
  commit=$(git rev-parse --short HEAD)
  swift test > "$out/$tag-$i.log" 2>&1
  rc=$?
  l1=$(cut -d' ' -f1 /proc/loadavg)
  summary=$(grep -E 'Executed [0-9]+ tests' "$out/$tag-$i.log" | tail -1)
  fails=$(grep -cE ": error: |' failed \(" "$out/$tag-$i.log")
  echo "$tag run $i commit=$commit exit=$rc seconds=$(( $(date +%s) - start )) load_start=$l0 load_end=$l1 started=$(date -d @$start +%H:%M) |$summary | error lines=$fails" | tee -a "$out/runs.txt"
done
