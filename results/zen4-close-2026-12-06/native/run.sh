#!/bin/sh
# The portable release binary (candidate) against builds for this CPU (baseline). Builds (README):
#   BIN/qb-native-zen4   309473e, avx512 set -march=native (znver4), Swift -target-cpu znver4
#   BIN/qb-native-zen3   309473e, avx2 set -march=znver3, Swift -target-cpu znver3; -avx2 runs it with QB_KERNELS=avx2
#   BIN/qb-tune3         309473e, avx2 set -march=x86-64-v3 -mtune=znver3 (still portable); -avx2 likewise
#   BIN/qb-swift3        309473e as released, but Swift -target-cpu znver3 (kernels as released); -avx2 likewise
ab() { BIN/qb-final ab --baseline "$1" --candidate "$2" --model "MODELS/l1b-$3.gguf" --threads 2 \
         --repetitions 1 --rounds "$4" --max-rounds "$4" --max-seconds 900 --out "$5.json" --summary "$5.md" $6; }
# 12 rounds, pp128 and tg64
ab BIN/qb-native-zen4 BIN/qb-final Q4_K_M 12 avx512-Q4_K_M "--pp 128 --tg 64"
ab BIN/qb-native-zen4 BIN/qb-final Q4_0 12 avx512-Q4_0 "--pp 128 --tg 64"
ab BIN/qb-native-zen3-avx2 BIN/qb-final-avx2 Q4_K_M 12 avx2-Q4_K_M "--pp 128 --tg 64"
ab BIN/qb-native-zen3-avx2 BIN/qb-final-avx2 Q4_0 12 avx2-Q4_0 "--pp 128 --tg 64"
# the two rows that leaned, again with 24 rounds
ab BIN/qb-native-zen3-avx2 BIN/qb-final-avx2 Q4_K_M 24 avx2-Q4_K_M-tg64-24 "--tg 64"
ab BIN/qb-native-zen3-avx2 BIN/qb-final-avx2 Q4_0 24 avx2-Q4_0-pp128-24 "--pp 128 --tg 0"
# only the avx2 kernels tuned for Zen 3
ab BIN/qb-final-avx2 BIN/qb-tune3-avx2 Q4_0 16 tune3-Q4_0-pp128 "--pp 128 --tg 0"
ab BIN/qb-native-zen3-avx2 BIN/qb-tune3-avx2 Q4_0 24 tune3-vs-native-Q4_0-pp128 "--pp 128 --tg 0"
# the Swift code for Zen 3 alone, then the Zen 3 build again, 30 minutes after the first 24 rounds
ab BIN/qb-swift3-avx2 BIN/qb-final-avx2 Q4_0 24 swift3-Q4_0-pp128 "--pp 128 --tg 0"
ab BIN/qb-native-zen3-avx2 BIN/qb-final-avx2 Q4_0 24 avx2-Q4_0-pp128-24b "--pp 128 --tg 0"
