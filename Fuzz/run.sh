#!/usr/bin/env bash
# Fuzz/run.sh [seconds-per-target] [target...]
#
# Builds the libFuzzer targets (every module instrumented, AddressSanitizer on) and runs
# each for a bounded time. Seeds: the fixtures in ../shared/fixtures and the project's own
# files, read by path (linked into the build folder, never copied into the repository),
# plus files the project's writers make at run time. Exits non-zero when any target
# crashes; the crashing input is left in Fuzz/.build/fuzz/<target>/crash-* (add it as a
# regression test in the normal test suite).
set -uo pipefail
cd "$(dirname "$0")"
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(gguf safetensors tokenizer-json sentencepiece tiktoken jinja yaml-suite results-json chat-jsonl openai-request event-stream)
fixtures=../../shared/fixtures

swift build --scratch-path .build -Xswiftc -sanitize=fuzzer,address >.build-log 2>&1 || { cat .build-log; exit 1; }
rm -f .build-log
bin=.build/debug/qbfuzz

seeds_for() {
    case "$1" in
        gguf) ls "$fixtures"/llamacpp-vocab-tests/*.gguf ;;
        safetensors) find "$fixtures" -name '*.safetensors' -size -4M ;;
        tokenizer-json) ls "$fixtures"/llama2-tokenizer/tokenizer.json "$fixtures"/smollm2-tokenizer/tokenizer.json ;;
        sentencepiece) ls "$fixtures"/llama2-tokenizer/tokenizer.model ;;
        tiktoken) ls "$fixtures"/llama3-tokenizer/tokenizer.model ;;
        jinja) ls "$fixtures"/chat-templates/hf-templates/*.jinja "$fixtures"/chat-templates/llamacpp-minja-goldens/templates/*.jinja ;;
        yaml-suite) ls ../Prompts/*.yaml ;;
        results-json) ls ../results/*.json ;;
        chat-jsonl) ;;
    esac 2>/dev/null
}

export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1
failed=()
printf '%-16s %10s %8s %8s %s\n' target execs cov ft result
for t in "${targets[@]}"; do
    work=.build/fuzz/$t
    mkdir -p "$work/corpus" "$work/seeds"
    rm -f "$work"/seeds/*
    QBFUZZ_TARGET=$t QBFUZZ_WRITE_SEEDS="$work/seeds" "$bin" >/dev/null 2>&1
    while IFS= read -r f; do [ -n "$f" ] && ln -sf "$(realpath "$f")" "$work/seeds/$(basename "$(dirname "$f")")-$(basename "$f")"; done < <(seeds_for "$t")
    QBFUZZ_TARGET=$t "$bin" "$work/corpus" "$work/seeds" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$work/" -print_final_stats=1 >"$work/log" 2>&1
    status=$?
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/log" | grep -o '[0-9]*$' | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$work/log" | tail -1 | grep -o '[0-9]*')
    ft=$(grep -o 'ft: [0-9]*' "$work/log" | tail -1 | grep -o '[0-9]*')
    if [ $status -eq 0 ]; then result=ok; else result="CRASH (see $work/log)"; failed+=("$t"); fi
    printf '%-16s %10s %8s %8s %s\n' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$result"
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "crashes in: ${failed[*]}"
    for t in "${failed[@]}"; do grep -E 'ERROR|Fatal|SUMMARY|crash-' ".build/fuzz/$t/log" | head -5; done
    exit 1
fi
