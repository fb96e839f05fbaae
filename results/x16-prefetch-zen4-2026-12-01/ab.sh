#!/bin/sh
# One binary against itself: QB_X16_PREFETCH=1 (the sixteen-row Q4_0 kernel's own prefetches,
# the behaviour before this change) as the baseline, the default on this AMD CPU (the
# hardware prefetcher alone) as the candidate. Wrappers in $BIN:
#   qb-pf            the release build of this change
#   qb-pf-sw         QB_X16_PREFETCH=1 exec qb-pf "$@"
#   qb-pf-avx2       QB_KERNELS=avx2 exec qb-pf "$@"
#   qb-pf-sw-avx2    QB_X16_PREFETCH=1 QB_KERNELS=avx2 exec qb-pf "$@"
M=${MODELS:?folder of l1b-Q4_0.gguf}
B=${BIN:?folder of the binaries}
run() { name=$1; shift; "$B/qb-pf" ab "$@" --out "$name.json" --summary "$name.md" > "$name.log" 2>&1; echo "$name: exit $?"; }
run Q4_0-1t-avx512 --baseline $B/qb-pf-sw --candidate $B/qb-pf --model $M/l1b-Q4_0.gguf --threads 1 --pp 16 --tg 64 --repetitions 1 --rounds 8 --max-rounds 8 --max-seconds 900
run Q4_0-2t-avx512 --baseline $B/qb-pf-sw --candidate $B/qb-pf --model $M/l1b-Q4_0.gguf --threads 2 --pp 16 --tg 64 --repetitions 1 --rounds 8 --max-rounds 8 --max-seconds 900
run Q4_0-1t-avx2 --baseline $B/qb-pf-sw-avx2 --candidate $B/qb-pf-avx2 --model $M/l1b-Q4_0.gguf --threads 1 --pp 16 --tg 64 --repetitions 1 --rounds 8 --max-rounds 8 --max-seconds 900
run Q4_0-2t-avx2 --baseline $B/qb-pf-sw-avx2 --candidate $B/qb-pf-avx2 --model $M/l1b-Q4_0.gguf --threads 2 --pp 16 --tg 64 --repetitions 1 --rounds 8 --max-rounds 8 --max-seconds 900
