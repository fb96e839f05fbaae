#!/bin/sh
# Gemma 3 270M Q4_K_M: mainline llama.cpp's llama-bench and quantbench bench, 2 threads,
# three rounds alternating which goes first. Uses the ik side-by-side's run helpers.
set -u
. ../ik-side-by-side-2026-11-25/side-by-side-lib.sh
for r in 1 2 3; do
  if [ $((r % 2)) = 1 ]; then main "main-gemma-$r" "$GEMMA" 2 512,128; qb "qb-gemma-$r" "$GEMMA" 2 512,128
  else qb "qb-gemma-$r" "$GEMMA" 2 512,128; main "main-gemma-$r" "$GEMMA" 2 512,128; fi
done
