#!/bin/sh
# Prefill only (pp512, pp128): ik_llama.cpp (-rtr 1) and quantbench on the same files, 2 threads,
# engines swapping places each round. IK_BIN (its llama-bench folder), QB (the quantbench binary),
# MODELS (folder of l1b-<F>.gguf), ROUNDS (default 2), FORMATS (default "Q4_0 Q4_K_M Q8_0").
set -u
log=side-by-side.log
run() { name=$1; shift; echo "### [$(date -u +%H:%M:%S)] $*" >>"$log"
    case "$name" in
    qb-*) "$@" --no-db --out "$name.json" >"$name.txt" 2>"$name.err"; cat "$name.txt" >>"$log" ;;
    *) "$@" -o json -oe md >"$name.json" 2>"$name.md"; grep '^|' "$name.md" >>"$log" ;;
    esac
    echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$log"; }
ik() { run "$1" env OMP_WAIT_POLICY=PASSIVE "$IK_BIN/llama-bench" -m "$2" -rtr 1 -t 2 -p 512,128 -n 0 -r 3; }
qb() { run "$1" "$QB" bench --model "$2" --threads 2 --pp 512,128 --repetitions 3 --warmup 1 --roofline; }
for r in $(seq 1 "${ROUNDS:-2}"); do
    for f in ${FORMATS:-Q4_0 Q4_K_M Q8_0}; do m=$MODELS/l1b-$f.gguf
        if [ $((r % 2)) = 1 ]; then ik "ik-$f-$r" "$m"; qb "qb-$f-$r" "$m"; else qb "qb-$f-$r" "$m"; ik "ik-$f-$r" "$m"; fi
    done
done
