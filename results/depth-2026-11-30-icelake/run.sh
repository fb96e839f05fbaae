#!/bin/bash
# Decode at depth 0 and 4096, f16 and q8_0 caches, 2 threads: ik_llama.cpp (-rtr 1) native
# and x86-64-v3 builds beside ours (avx512 set, and QB_KERNELS=avx2), one engine after the other.
M=${MODELS:?}/l1b-Q4_0.gguf
QB=${BIN:?}/qb-49e8ebe
log=side-by-side.log
run() { echo "### [$(date -u +%H:%M:%S)] $*" >> $log; "$@" >> $log 2>last.err; echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >> $log; }
for round in 1 2; do
  for kv in f16 q8_0; do
    run env OMP_WAIT_POLICY=PASSIVE ${IK_BIN:?}/llama-bench -m $M -rtr 1 -t 2 -p 0 -n 128 -r 3 -gp 4096,128 -ctk $kv -ctv $kv -o json
    run $QB bench --model $M --threads 2 --tg 128 --repetitions 3 --warmup 1 --depth 0,4096 --kv-type $kv --no-db --out ./qb-avx512-$kv-$round.json
    run env OMP_WAIT_POLICY=PASSIVE ${IK_AVX2_BIN:?}/llama-bench -m $M -rtr 1 -t 2 -p 0 -n 128 -r 3 -gp 4096,128 -ctk $kv -ctv $kv -o json
    run env QB_KERNELS=avx2 $QB bench --model $M --threads 2 --tg 128 --repetitions 3 --warmup 1 --depth 0,4096 --kv-type $kv --no-db --out ./qb-avx2-$kv-$round.json
  done
done
echo DONE >> $log
