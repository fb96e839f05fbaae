#!/bin/sh
# Issue 19's side-by-side on both kernel sets, the sets alternating round by round (each
# round: avx512 then avx2, ik_llama.cpp and ours swapping places within each as
# ../ik-side-by-side-2026-11-27/side-by-side.sh does). Runs only; the binaries are built
# elsewhere and named by the environment:
#   IK_BIN       ik_llama.cpp's llama-bench folder, -DGGML_NATIVE=ON build
#   IK_AVX2_BIN  the same, x86-64-v3 build (-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_AVX512=OFF)
#   QB           quantbench;  QB_AVX2  a one-line wrapper: QB_KERNELS=avx2 exec $QB "$@"
#   MODELS, GEMMA, ROUNDS, PARTS, FORMATS as side-by-side.sh takes them
#   OUT          where avx512/ and avx2/ go (default: this folder)
set -u
here=$(cd "$(dirname "$0")" && pwd)
sbs=$here/../ik-side-by-side-2026-11-27/side-by-side.sh
out=${OUT:-$here}
mkdir -p "$out/avx512" "$out/avx2"
for r in $(seq "${FIRST:-1}" "${ROUNDS:-2}"); do
    (cd "$out/avx512" && FIRST=$r ROUNDS=$r sh "$sbs")
    (cd "$out/avx2" && IK_BIN=$IK_AVX2_BIN QB=$QB_AVX2 FIRST=$r ROUNDS=$r sh "$sbs")
done
