#!/usr/bin/env python3
"""Reference answers from the PyPI `tiktoken` package for the Llama 3 tokenizer.

Usage: tiktoken_oracle.py REQUEST.json RESPONSE.json

The Encoding is built the way Meta's llama-models `tokenizer.py` builds it: the base64
ranks of tokenizer.model, the Llama 3 split pattern, and 256 special tokens named as
llama-models names them, numbered from the number of ranks.

REQUEST is an object with "mode":
  "encode":  {"model": path, "texts": [...], "parse_special_tokens": bool}
             -> {"ids": [[...], ...], "decoded": [str, ...]}
             (parse_special_tokens: allowed_special="all", else every special's text is
             plain text: disallowed_special=(), like Meta's default)
  "encode_file": {"model": path, "file": path} -> {"ids": [...]} (the file's UTF-8 text,
             special-token text as plain text)
  "decode":  {"model": path, "ids": [[...], ...]} -> {"texts": [...]}
  "version": {} -> {"tiktoken": version}
Exit status 3 means the `tiktoken` package is missing.
"""
import json
import sys

try:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
except ImportError as error:  # the Swift test turns this into a skip
    print(f"tiktoken package not importable: {error}", file=sys.stderr)
    sys.exit(3)

PATTERN = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"


def special_names():
    # models/llama3/tokenizer.py in meta-llama/llama-models.
    names = [
        "<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
        "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|step_id|>",
        "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>",
        "<|python_tag|>", "<|image|>",
    ]
    return names + [f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(names))]


def encoding(path):
    ranks = load_tiktoken_bpe(path)
    base = len(ranks)
    specials = {name: base + i for i, name in enumerate(special_names())}
    return tiktoken.Encoding(name="llama3", pat_str=PATTERN, mergeable_ranks=ranks, special_tokens=specials)


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        req = json.load(f)
    mode = req["mode"]
    if mode == "version":
        resp = {"tiktoken": tiktoken.__version__}
    elif mode == "encode":
        enc = encoding(req["model"])
        if req.get("parse_special_tokens", False):
            ids = [enc.encode(t, allowed_special="all") for t in req["texts"]]
        else:
            ids = [enc.encode(t, disallowed_special=()) for t in req["texts"]]
        resp = {"ids": ids, "decoded": [enc.decode(i) for i in ids]}
    elif mode == "encode_file":
        enc = encoding(req["model"])
        with open(req["file"], "rb") as f:
            text = f.read().decode("utf-8", errors="replace")
        resp = {"ids": enc.encode(text, disallowed_special=())}
    elif mode == "decode":
        enc = encoding(req["model"])
        resp = {"texts": [enc.decode(i) for i in req["ids"]]}
    else:
        raise SystemExit(f"unknown mode {mode}")
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(resp, f, ensure_ascii=True)


if __name__ == "__main__":
    main()
