#!/bin/sh
# Second round, run after side-by-side-short.sh as the load fell: each pair in the other
# order than in round 1, then mainline on the other files. Same environment.
set -u
. ./side-by-side-lib.sh
m=$MODELS/l1b-Q4_0.gguf;   ik ik-Q4_0-3 "$m" 2 512,128;   qb qb-Q4_0-2 "$m" 2 512,128
m=$MODELS/l1b-Q4_K_M.gguf; ik ik-Q4_K_M-2 "$m" 2 512,128; qb qb-Q4_K_M-2 "$m" 2 512,128
m=$MODELS/l1b-Q8_0.gguf;   qb qb-Q8_0-2 "$m" 2 512,128;   ik ik-Q8_0-2 "$m" 2 512,128
m=$GEMMA;                  ik ik-gemma-2 "$m" 2 512,128;  qb qb-gemma-2 "$m" 2 512,128
m=$MODELS/l1b-Q4_0.gguf;   qb qb-Q4_0-1t-2 "$m" 1 0;      ik ik-Q4_0-1t-2 "$m" 1 0
for f in Q4_K_M Q8_0; do main main-$f-1 "$MODELS/l1b-$f.gguf" 2 512,128; done
main main-gemma-1 "$GEMMA" 2 512,128
