#!/usr/bin/env python3
"""Reference answers from the Hugging Face `tokenizers` package for QBTextTests.

Usage: hf_oracle.py REQUEST.json RESPONSE.json

REQUEST is an object with "mode":
  "encode":      {"tokenizer": path, "texts": [...], "add_special_tokens": bool,
                  "parse_special_tokens": bool}
                 -> {"ids": [[...], ...], "tokens": [[str, ...], ...], "decoded": [str, ...]}
                 (decoded = decode(ids, skip_special_tokens=False))
  "decode":      {"tokenizer": path, "ids": [[...], ...], "skip_special_tokens": bool}
                 -> {"texts": [str, ...]}
  "pretokenize": {"pattern": regex, "texts": [...]}
                 -> {"pieces": [[str, ...], ...]}  (Split(pattern, "isolated"))
  "classes":     {"limit": n}
                 -> {"s": ranges, "L": ranges, "N": ranges} for scalars below n,
                    each a list of [first, last] inclusive ranges of code points that
                    Oniguruma's \\s, \\p{L}, \\p{N} match.
  "version":     {} -> {"tokenizers": version}
Exit status 3 means the `tokenizers` package is missing.
"""
import json
import sys

try:
    import tokenizers
    from tokenizers import Regex, Tokenizer
    from tokenizers import pre_tokenizers
except ImportError as error:  # the Swift test turns this into a skip
    print(f"tokenizers package not importable: {error}", file=sys.stderr)
    sys.exit(3)


def encode(req):
    tok = Tokenizer.from_file(req["tokenizer"])
    # encode_special_tokens=True means "treat special-token text as plain text".
    tok.encode_special_tokens = not req.get("parse_special_tokens", True)
    add = req.get("add_special_tokens", True)
    encodings = [tok.encode(t, add_special_tokens=add) for t in req["texts"]]
    ids = [e.ids for e in encodings]
    decoded = [tok.decode(i, skip_special_tokens=False) for i in ids]
    return {"ids": ids, "tokens": [e.tokens for e in encodings], "decoded": decoded}


def decode(req):
    tok = Tokenizer.from_file(req["tokenizer"])
    skip = req.get("skip_special_tokens", False)
    return {"texts": [tok.decode(i, skip_special_tokens=skip) for i in req["ids"]]}


def pretokenize(req):
    split = pre_tokenizers.Split(Regex(req["pattern"]), behavior="isolated")
    return {"pieces": [[p for p, _ in split.pre_tokenize_str(t)] for t in req["texts"]]}


def ranges(members):
    out = []
    for c in sorted(members):
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return out


def classes(req):
    limit = int(req["limit"])
    chars = [chr(c) for c in range(limit) if not (0xD800 <= c <= 0xDFFF)]
    text = "".join(chars)
    result = {}
    for name, pattern in (("s", r"\s"), ("L", r"\p{L}"), ("N", r"\p{N}")):
        removed = pre_tokenizers.Split(Regex(pattern), behavior="removed")
        kept = set("".join(p for p, _ in removed.pre_tokenize_str(text)))
        result[name] = ranges(ord(c) for c in chars if c not in kept)
    return result


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        req = json.load(f)
    mode = req["mode"]
    if mode == "encode":
        resp = encode(req)
    elif mode == "decode":
        resp = decode(req)
    elif mode == "pretokenize":
        resp = pretokenize(req)
    elif mode == "classes":
        resp = classes(req)
    elif mode == "version":
        resp = {"tokenizers": tokenizers.__version__}
    else:
        raise SystemExit(f"unknown mode {mode}")
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(resp, f, ensure_ascii=True)


if __name__ == "__main__":
    main()
