#!/bin/sh
# The side-by-side of issue 19 on one machine: ik_llama.cpp (-rtr 1), quantbench and
# mainline llama.cpp on the same GGUF files, 2 threads, interleaved round by round
# (ik and ours swap places each round; mainline after them). Runs only: the binaries are
# built elsewhere and named by the environment.
#   IK_BIN  folder of ik_llama.cpp's llama-bench      LLAMA_BIN  mainline llama-bench's folder
#   QB      the quantbench binary                      MODELS     folder of l1b-{Q4_0,Q4_K_M,Q8_0}.gguf
#   GEMMA   gemma-3-270m-q4_k_m.gguf                   ROUNDS     rounds (default 2)
#   MAIN_ROUNDS  rounds that also run mainline (default: every one)
#   IK_OMP_WAIT_POLICY  OMP_WAIT_POLICY for both llama-bench builds (default: unset)
# Writes into the current folder: ik-*, qb-*, main-* (llama-bench JSON on stdout, its
# Markdown on stderr; bench's JSON, Markdown and console summary) and side-by-side.log.
set -u
ROUNDS=${ROUNDS:-2}
MAIN_ROUNDS=${MAIN_ROUNDS:-$ROUNDS}
. "$(dirname "$0")/side-by-side-lib.sh"   # log, run, ik, main, qb

for r in $(seq 1 "$ROUNDS"); do
    for f in Q4_0 Q4_K_M Q8_0 gemma; do
        if [ "$f" = gemma ]; then m=$GEMMA; else m=$MODELS/l1b-$f.gguf; fi
        if [ $((r % 2)) = 1 ]; then
            ik "ik-$f-$r" "$m" 2 512,128; qb "qb-$f-$r" "$m" 2 512,128
        else
            qb "qb-$f-$r" "$m" 2 512,128; ik "ik-$f-$r" "$m" 2 512,128
        fi
        [ "$r" -le "$MAIN_ROUNDS" ] && main "main-$f-$r" "$m" 2 512,128
    done
done
# 1 thread, decode only, Q4_0.
for r in $(seq 1 "$ROUNDS"); do
    m=$MODELS/l1b-Q4_0.gguf
    if [ $((r % 2)) = 1 ]; then ik "ik-Q4_0-1t-$r" "$m" 1 0; qb "qb-Q4_0-1t-$r" "$m" 1 0
    else qb "qb-Q4_0-1t-$r" "$m" 1 0; ik "ik-Q4_0-1t-$r" "$m" 1 0; fi
    [ "$r" -le "$MAIN_ROUNDS" ] && main "main-Q4_0-1t-$r" "$m" 1 0
done
