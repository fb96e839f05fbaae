#!/bin/sh
# The kernel benchmarks before and after, alternating: the benchmark executable `Kernels`
# built against efba6ab's kernels ($BEFORE/Kernels) and against this change's ($AFTER/Kernels:
# the f32 tiles for matmul, the tiles and the f32 rows for matvec), run by package-benchmark's
# BenchmarkTool ($TOOL, Benchmarks/.build/<triple>/release/BenchmarkTool), three rounds (four
# for bench/recheck/, the 16-bit tiles alone). Each folder also holds the shared libraries the
# executable links (Benchmarks/.build/<triple>/release/*.so).
set -eu
run() {  # side round filter output
    if [ "$1" = before ]; then dir=$BEFORE; else dir=$AFTER; fi
    "$TOOL" --command run --format markdown --baseline-storage-path /tmp --grouping benchmark --no-progress \
        --targets Kernels --benchmark-executable-paths "$dir/Kernels" --filter "$3" \
        | sed 's/\x1b\[[0-9;]*[A-Za-z]//g' > "$4"
}
for round in 1 2 3; do
    for side in before after; do
        run $side $round 'matmul (F32|F16|BF16) .*\[(avx512|avx2)\]' bench/matmul-$side-$round.md
    done
done
for round in 1 2 3; do
    for side in before after; do
        run $side $round 'matvec (F32|F16|BF16) 8192.*\[(avx512|avx2)\]' bench/matvec-$side-$round.md
    done
done
for round in 1 2 3 4; do
    for side in before after; do
        run $side $round 'matmul (F16|BF16) .*\[avx512\]' bench/recheck/matmul16-$side-$round.md
    done
done
python3 summarize.py > summary.md

# The engine: a 1B Llama in f32 (make-model llama-3.2-1b seed 1, 4.94 GB), two threads,
# 6 ABBA rounds, each set (the -avx2 wrappers run `QB_KERNELS=avx2 exec <binary> "$@"`).
# $BIN/qb-f16tiles: the release build of 5a5c3de's engine (efba6ab changed comments and the
# benchmark package only); qb-f32tiles: the matmul tiles alone; qb-f32rows: the whole change.
$BIN/qb-f32rows make-model --preset llama-3.2-1b --seed 1 --format gguf --dtype f32 --out $MODELS/l1b-f32.gguf
for set in avx512 avx2; do
    s=; [ $set = avx2 ] && s=-avx2
    $BIN/qb-f32tiles ab --baseline $BIN/qb-f16tiles$s --candidate $BIN/qb-f32tiles$s \
        --model $MODELS/l1b-f32.gguf --threads 2 --pp 128 --rounds 6 --max-rounds 6 --max-seconds 1200 \
        --out ab/l1b-f32-pp128-$set.json --summary ab/l1b-f32-pp128-$set.md
    $BIN/qb-f32rows ab --baseline $BIN/qb-f16tiles$s --candidate $BIN/qb-f32rows$s \
        --model $MODELS/l1b-f32.gguf --threads 2 --tg 32 --rounds 6 --max-rounds 6 --max-seconds 1200 \
        --out ab/l1b-f32-tg32-$set.json --summary ab/l1b-f32-tg32-$set.md
done
