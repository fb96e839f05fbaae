#!/usr/bin/env python3
"""Reference answers from the PyPI `sentencepiece` package (SentencePiece tokenizer.model).

Usage: spm_oracle.py REQUEST.json RESPONSE.json

REQUEST is an object with "mode":
  "encode":  {"model": path, "texts": [...]} -> {"ids": [[...], ...], "decoded": [...]}
             (no BOS/EOS; special-token text is plain text, as sentencepiece always does)
  "decode":  {"model": path, "ids": [[...], ...]} -> {"texts": [...]}
Exit status 3 means the `sentencepiece` package is missing.
"""
import json
import sys

try:
    import sentencepiece
except ImportError as error:  # the Swift test turns this into a skip
    print(f"sentencepiece package not importable: {error}", file=sys.stderr)
    sys.exit(3)


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        req = json.load(f)
    sp = sentencepiece.SentencePieceProcessor(model_file=req["model"])
    if req["mode"] == "encode":
        ids = [sp.encode(t) for t in req["texts"]]
        resp = {"ids": ids, "decoded": [sp.decode(i) for i in ids]}
    elif req["mode"] == "decode":
        resp = {"texts": [sp.decode(i) for i in req["ids"]]}
    else:
        raise SystemExit(f"unknown mode {req['mode']}")
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(resp, f, ensure_ascii=True)


if __name__ == "__main__":
    main()
