#!/bin/sh
# Instructions per token on the avx2 set: each binary (with its debug sections stripped:
# valgrind gives up on Swift's) generating 2 and 10 tokens at one thread; the difference over
# 8 is one token's. valgrind's CPU has no AVX-512, so the dispatcher picks the avx2 set.
#   BIN: quantbench (strip --strip-debug first), NAME: the output prefix
for n in 2 10; do
    valgrind --tool=callgrind --callgrind-out-file=cg.$n.out "$BIN" generate --model "$MODELS/l1b-Q4_K_M.gguf" \
        --prompt "Hello" --max-tokens $n --threads 1 > /dev/null 2>&1
    callgrind_annotate cg.$n.out | sed -n '/PROGRAM TOTALS/,$p' | head -14 > "$NAME-$n-tokens.txt"
done
