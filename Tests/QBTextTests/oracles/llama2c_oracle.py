#!/usr/bin/env python3
"""A line-by-line transliteration of llama2.c run.c's encode() and decode(), as an oracle
for Llama2cTokenizer (which uses a heap instead of run.c's quadratic rescans).

Usage: llama2c_oracle.py REQUEST.json RESPONSE.json
REQUEST: {"tokenizer": path, "vocab_size": n, "texts": [...], "bos": bool, "eos": bool}
RESPONSE: {"ids": [[...], ...], "pieces": [[bytes as ints, ...] per id of each text]}
where "pieces" is decode(prev, token) for each token after the first, as run.c prints.
Needs only the standard library.
"""
import json
import struct
import sys


def c_float(x):
    # run.c compares floats: round through float32 like `float best_score = -1e10`.
    return struct.unpack("<f", struct.pack("<f", x))[0]


def load(path, vocab_size):
    data = open(path, "rb").read()
    (max_len,) = struct.unpack_from("<i", data, 0)
    off = 4
    vocab, scores = [], []
    for _ in range(vocab_size):
        score, n = struct.unpack_from("<fi", data, off)
        off += 8
        piece = data[off:off + n]
        off += n
        nul = piece.find(b"\0")
        vocab.append(piece if nul < 0 else piece[:nul])
        scores.append(score)
    # str_lookup via bsearch over the sorted vocabulary; for unique pieces any search works.
    lookup = {}
    for i, p in enumerate(vocab):
        lookup.setdefault(p, i)
    return vocab, scores, lookup


def encode(vocab, scores, lookup, text, bos, eos):
    tokens = []
    if bos:
        tokens.append(1)
    if text:
        tokens.append(lookup.get(b" ", -1))
    raw = text.encode("utf-8")
    buf = b""
    for i, c in enumerate(raw):
        if (c & 0xC0) != 0x80:
            buf = b""
        buf += bytes([c])
        nxt = raw[i + 1] if i + 1 < len(raw) else 0
        if (nxt & 0xC0) == 0x80 and len(buf) < 4:
            continue
        tid = lookup.get(buf, -1)
        if tid != -1:
            tokens.append(tid)
        else:
            for b in buf:
                tokens.append(b + 3)
        buf = b""
    while True:
        best_score = c_float(-1e10)
        best_id = -1
        best_idx = -1
        for i in range(len(tokens) - 1):
            s = vocab[tokens[i]] + vocab[tokens[i + 1]]
            tid = lookup.get(s, -1)
            if tid != -1 and scores[tid] > best_score:
                best_score = scores[tid]
                best_id = tid
                best_idx = i
        if best_idx == -1:
            break
        tokens[best_idx] = best_id
        del tokens[best_idx + 1]
    if eos:
        tokens.append(2)
    return tokens


def decode(vocab, prev, token):
    piece = vocab[token]
    if prev == 1 and piece[:1] == b" ":
        piece = piece[1:]
    if len(piece) == 6 and piece[:3] == b"<0x" and piece[5:] == b">":
        try:
            return bytes([int(piece[3:5], 16)])
        except ValueError:
            pass
    return piece


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        req = json.load(f)
    vocab, scores, lookup = load(req["tokenizer"], req["vocab_size"])
    all_ids, all_pieces = [], []
    for text in req["texts"]:
        ids = encode(vocab, scores, lookup, text, req.get("bos", True), req.get("eos", False))
        all_ids.append(ids)
        all_pieces.append([list(decode(vocab, ids[i - 1], ids[i])) for i in range(1, len(ids))])
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump({"ids": all_ids, "pieces": all_pieces}, f)


if __name__ == "__main__":
    main()
