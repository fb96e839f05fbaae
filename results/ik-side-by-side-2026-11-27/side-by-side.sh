#!/bin/sh
# Issue 19's side-by-side on one machine: ik_llama.cpp (-rtr 1, OMP_WAIT_POLICY=PASSIVE)
# and quantbench on the same files, 2 threads, ik and ours swapping places each round.
# Runs only: the binaries are built elsewhere and named by the environment.
#   IK_BIN  folder of ik_llama.cpp's llama-bench     QB  the quantbench binary
#   MODELS  folder of l1b-{Q4_0,Q4_K_M,Q8_0}.gguf and the l1b-mlx-q4-g64 folder
#   GEMMA   gemma-3-270m-q4_k_m.gguf                  ROUNDS  rounds (default 2)
#   FIRST   the first round's number (default 1: more rounds later add to a folder)
#   PARTS   which parts to run (default "formats onethread mlx depth")
#   FORMATS the files of the formats part (default "Q4_0 Q4_K_M Q8_0 gemma")
#   ONETHREAD the files of the onethread part (default "Q4_0")
#   DEPTH_KV the cache types of the depth part (default "f16 q8_0")
# Writes into the current folder: ik-*, qb-* (llama-bench JSON on stdout, its Markdown on
# stderr; bench's JSON, Markdown and console summary) and side-by-side.log.
set -u
ROUNDS=${ROUNDS:-2}
PARTS=${PARTS:-formats onethread mlx depth}
. "$(dirname "$0")/side-by-side-lib.sh"   # log, run, ik, qb

# pair NAME IKFILE QBMODEL THREADS PP IK-EXTRA QB-EXTRA: both engines, order by round.
pair() {
    if [ $((r % 2)) = 1 ]; then ik "ik-$1-$r" "$2" "$4" "$5" $6; qb "qb-$1-$r" "$3" "$4" "$5" $7
    else qb "qb-$1-$r" "$3" "$4" "$5" $7; ik "ik-$1-$r" "$2" "$4" "$5" $6; fi
}
for r in $(seq "${FIRST:-1}" "$ROUNDS"); do
    for part in $PARTS; do case $part in
    formats)
        for f in ${FORMATS:-Q4_0 Q4_K_M Q8_0 gemma}; do
            if [ "$f" = gemma ]; then m=$GEMMA; else m=$MODELS/l1b-$f.gguf; fi
            pair "$f" "$m" "$m" 2 512,128 "" ""
        done ;;
    onethread)   # 1 thread, decode only
        for f in ${ONETHREAD:-Q4_0}; do
            pair "$f-1t" "$MODELS/l1b-$f.gguf" "$MODELS/l1b-$f.gguf" 1 0 "" ""
        done ;;
    mlx)         # our MLX q4-g64 conversion against ik's Q4_K_M, decode only
        pair mlx-vs-Q4_K_M "$MODELS/l1b-Q4_K_M.gguf" "$MODELS/l1b-mlx-q4-g64" 2 0 "" "--tokenizer $MODELS/l1b-f16.gguf" ;;
    depth)       # decode at depth 0 and 4096 with f16 and q8_0 caches, Q4_0
        for kv in ${DEPTH_KV:-f16 q8_0}; do
            pair "Q4_0-depth-$kv" "$MODELS/l1b-Q4_0.gguf" "$MODELS/l1b-Q4_0.gguf" 2 0 \
                "-gp 4096,128 -ctk $kv -ctv $kv" "--depth 0,4096 --kv-type $kv"
        done ;;
    esac; done
done
