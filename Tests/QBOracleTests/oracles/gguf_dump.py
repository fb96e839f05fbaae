"""What the PyPI `gguf` package reads from a GGUF file: metadata and, per tensor, its
type, shape and a checksum of its raw bytes (sum over i of (byte_i + 1) * (i * K + 1)
modulo 2^64, K = 0x9E3779B97F4A7C15), as JSON on stdout.

usage: gguf_dump.py FILE.gguf
"""
import json
import sys

import gguf
import numpy as np


def value(field):
    types = field.types
    if not types:
        return None
    if types[0] == gguf.GGUFValueType.ARRAY:
        if types[-1] == gguf.GGUFValueType.STRING:
            return [bytes(field.parts[i]).decode("utf-8") for i in field.data]
        return [field.parts[i].tolist()[0] for i in field.data]
    if types[0] == gguf.GGUFValueType.STRING:
        return bytes(field.parts[field.data[0]]).decode("utf-8")
    return field.parts[field.data[0]].tolist()[0]


def checksum(raw: bytes) -> int:
    b = np.frombuffer(raw, dtype=np.uint8).astype(np.uint64)
    i = np.arange(len(b), dtype=np.uint64)
    with np.errstate(over="ignore"):
        w = i * np.uint64(0x9E3779B97F4A7C15) + np.uint64(1)
        return int(np.sum((b + np.uint64(1)) * w, dtype=np.uint64))


def main() -> None:
    reader = gguf.GGUFReader(sys.argv[1])
    meta = {}
    for name, field in reader.fields.items():
        if name.startswith("GGUF."):
            continue
        meta[name] = value(field)
    tensors = [
        {
            "name": t.name,
            "type": int(t.tensor_type),
            "shape": [int(d) for d in t.shape],
            "checksum": str(checksum(t.data.tobytes())),
        }
        for t in reader.tensors
    ]
    json.dump({"metadata": meta, "tensors": tensors}, sys.stdout)


if __name__ == "__main__":
    main()
