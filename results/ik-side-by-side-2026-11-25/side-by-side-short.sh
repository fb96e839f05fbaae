#!/bin/sh
# The order actually run on 2026-11-25. The machine was at load average 9-14 on its 2 cores
# (other jobs' builds and tests), which made the full side-by-side.sh too long for the
# session, and under which OpenMP's active waiting starved ik_llama.cpp (ik-Q4_0-active: tg128 at
# 2.7 t/s). So: one round per file, ik_llama.cpp (and mainline) with
# IK_OMP_WAIT_POLICY=PASSIVE (OMP_WAIT_POLICY=PASSIVE, as the serve side-by-side ran
# llama-server here), ik and ours swapping which goes first from file to file, then 1 thread
# and mainline while time allowed. Same environment variables as side-by-side.sh.
set -u
. ./side-by-side-lib.sh
m=$MODELS/l1b-Q4_0.gguf;   ik ik-Q4_0-2 "$m" 2 512,128    # qb-Q4_0-1 ran just before; ik-Q4_0-active (OMP_WAIT_POLICY unset) before it
m=$MODELS/l1b-Q4_K_M.gguf; qb qb-Q4_K_M-1 "$m" 2 512,128; ik ik-Q4_K_M-1 "$m" 2 512,128
m=$MODELS/l1b-Q8_0.gguf;   ik ik-Q8_0-1 "$m" 2 512,128;   qb qb-Q8_0-1 "$m" 2 512,128
m=$GEMMA;                  qb qb-gemma-1 "$m" 2 512,128;  ik ik-gemma-1 "$m" 2 512,128
m=$MODELS/l1b-Q4_0.gguf;   ik ik-Q4_0-1t-1 "$m" 1 0;      qb qb-Q4_0-1t-1 "$m" 1 0
main main-Q4_0-1 "$m" 2 512,128
