#!/bin/bash
# Decode at depth 0 and 4096 on a q8_0 cache, 2 threads, the avx2 kernel set: ik_llama.cpp's
# x86-64-v3 build (-rtr 1) beside ours before (the float scores) and after (the integer
# scores), one engine after the other, the order rotating each round.
M=${MODELS:?}/l1b-Q4_0.gguf
log=side-by-side.log
run() { echo "### [$(date -u +%H:%M:%S)] $*" >> $log; "$@" >> $log 2>last.err; echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >> $log; }
ik() { run env OMP_WAIT_POLICY=PASSIVE ${IK_AVX2_BIN:?}/llama-bench -m $M -rtr 1 -t 2 -p 0 -n 128 -r 3 -gp 4096,128 -ctk q8_0 -ctv q8_0 -o json; }
ours() { run env QB_KERNELS=avx2 ${BIN:?}/qb-$1 bench --model $M --threads 2 --tg 128 --repetitions 3 --warmup 1 --depth 0,4096 --kv-type q8_0 --no-db --out ./qb-$1-avx2-q8_0-$2.json; }
for round in ${ROUNDS:-1 2}; do
  case $((round % 3)) in
    1) ik; ours $OLD $round; ours $NEW $round ;;
    2) ours $NEW $round; ik; ours $OLD $round ;;
    0) ours $OLD $round; ours $NEW $round; ik ;;
  esac
done
echo DONE >> $log
