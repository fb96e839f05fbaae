#!/bin/sh
# The AVX2 16-bit rows before and after: the benchmark executable `Kernels` built against
# c1df0b8's qb_dense.c ($BEFORE/Kernels) and against this change's ($AFTER/Kernels), run by
# package-benchmark's BenchmarkTool ($TOOL, Benchmarks/.build/<triple>/release/BenchmarkTool)
# alternately, three rounds, the f16 and bf16 matvec benchmarks of the avx2 set.
set -eu
# (Each folder also holds the shared libraries the executable links: Benchmarks/.build/<triple>/release/*.so.)
for round in 1 2 3; do
    for side in before after; do
        if [ "$side" = before ]; then dir=$BEFORE; else dir=$AFTER; fi
        "$TOOL" --command run --format markdown --baseline-storage-path /tmp --grouping benchmark --no-progress \
            --targets Kernels --benchmark-executable-paths "$dir/Kernels" --filter 'matvec (F16|BF16) .*\[avx2\]' \
            | sed 's/\x1b\[[0-9;]*[A-Za-z]//g' > "$side-$round.md"
    done
done
