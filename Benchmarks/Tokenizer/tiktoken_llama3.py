#!/usr/bin/env python3
"""The tiktoken side of the tokenizer speed comparison.

Encodes a text file with the PyPI `tiktoken` package and the Llama 3 ranks (built as
Meta's llama-models tokenizer.py builds its Encoding), single-threaded, the way
`quantbench tokenize --benchmark` times QuantBench's tokenizer: one untimed warm-up, then
the median of --runs timed `encode` calls of the whole text (special-token text treated as
plain text, no BOS).

    python3 Benchmarks/Tokenizer/tiktoken_llama3.py \
        --model ../shared/fixtures/llama3-tokenizer/tokenizer.model \
        --file ../shared/fixtures/eval-text/tinyshakespeare.txt --runs 7
    swift build -c release --scratch-path .build-text-rel
    .build-text-rel/release/quantbench tokenize --benchmark --runs 7 \
        --tokenizer ../shared/fixtures/llama3-tokenizer/tokenizer.model \
        --file ../shared/fixtures/eval-text/tinyshakespeare.txt
"""
import argparse
import json
import statistics
import sys
import time

try:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
except ImportError as error:
    sys.exit(f"tiktoken is not installed ({error}); pip install tiktoken")

PATTERN = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"


def llama3_encoding(path):
    ranks = load_tiktoken_bpe(path)
    named = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
             "<|finetune_right_pad_id|>", "<|step_id|>", "<|start_header_id|>", "<|end_header_id|>",
             "<|eom_id|>", "<|eot_id|>", "<|python_tag|>", "<|image|>"]
    names = named + [f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(named))]
    specials = {name: len(ranks) + i for i, name in enumerate(names)}
    return tiktoken.Encoding(name="llama3", pat_str=PATTERN, mergeable_ranks=ranks, special_tokens=specials)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="Llama 3 tokenizer.model (tiktoken ranks)")
    parser.add_argument("--file", required=True, help="text to encode")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()

    enc = llama3_encoding(args.model)
    with open(args.file, "rb") as f:
        text = f.read().decode("utf-8", errors="replace")
    size = len(text.encode("utf-8"))
    tokens = len(enc.encode(text, disallowed_special=()))  # warm-up
    seconds = []
    for _ in range(max(args.runs, 1)):
        start = time.perf_counter()
        tokens = len(enc.encode(text, disallowed_special=()))
        seconds.append(time.perf_counter() - start)
    median = statistics.median(seconds)
    result = {
        "tiktoken": tiktoken.__version__, "bytes": size, "tokens": tokens, "seconds": seconds,
        "median_seconds": median, "megabytes_per_second": size / 1e6 / median, "tokens_per_second": tokens / median,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"tiktoken {tiktoken.__version__}: {size} bytes -> {tokens} tokens; median of {len(seconds)} runs "
              f"{median:.4f} s: {result['megabytes_per_second']:.2f} MB/s, {result['tokens_per_second']:.0f} tokens/s")


if __name__ == "__main__":
    main()
