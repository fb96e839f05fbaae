#!/bin/sh
# Round 3, decode only (tg128, 2 threads) on the two Llama files whose decode was level with
# ik's, run last as the load fell (load averages in the log); both orders. Same environment.
set -u
. ./side-by-side-lib.sh
for f in Q4_0 Q4_K_M; do
    m=$MODELS/l1b-$f.gguf
    ik ik-$f-tg-1 "$m" 2 0; qb qb-$f-tg-1 "$m" 2 0
    qb qb-$f-tg-2 "$m" 2 0; ik ik-$f-tg-2 "$m" 2 0
done
