"""A GGUF file of quantized tensors written by the PyPI `gguf` package, plus that
package's own dequantization of each tensor, for our reader to be compared against.

usage: gguf_quant_fixture.py OUT_DIR
Writes OUT_DIR/quants.gguf and OUT_DIR/<tensor>.f32 (gguf.quants.dequantize, float32).
Types the package can quantize are quantized from random normals by it; K and IQ4
types (which it can only dequantize) get random valid blocks: random bytes with the f16
scale fields set to small normal numbers.
"""
import os
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T
from gguf.constants import GGML_QUANT_SIZES


def main() -> None:
    out = sys.argv[1]
    rng = np.random.default_rng(1234)
    writer = gguf.GGUFWriter(os.path.join(out, "quants.gguf"), "llama")
    writer.add_string("test.note", "quantized by the gguf package")
    writer.add_array("test.ints", [1, 2, 3])
    rows, cols = 6, 512
    for qtype in [T.F32, T.F16, T.BF16, T.Q8_0, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1]:
        data = rng.standard_normal((rows, cols)).astype(np.float32)
        data[0, :32] = 0  # an all-zero block
        if qtype == T.F32:
            q = data
        elif qtype == T.F16:
            q = data.astype(np.float16)
        else:
            q = gguf.quants.quantize(data, qtype)
        name = f"t.{qtype.name.lower()}"
        writer.add_tensor(name, q, raw_dtype=qtype if qtype not in (T.F32, T.F16) else None)
        deq = gguf.quants.dequantize(q if qtype not in (T.F32, T.F16) else q, qtype)
        np.ascontiguousarray(deq, dtype="<f4").tofile(os.path.join(out, name + ".f32"))
    half_fields = {T.Q2_K: [80, 82], T.Q3_K: [108], T.Q4_K: [0, 2], T.Q5_K: [0, 2], T.Q6_K: [208], T.IQ4_NL: [0], T.IQ4_XS: [0]}
    for qtype, fields in half_fields.items():
        block, nbytes = GGML_QUANT_SIZES[qtype]
        nblocks = rows * cols // block
        raw = rng.integers(0, 256, size=(nblocks, nbytes), dtype=np.uint8)
        for f in fields:
            vals = (rng.uniform(0.001, 0.01, size=nblocks) * rng.choice([-1, 1], size=nblocks)).astype(np.float16)
            raw[:, f:f + 2] = vals.view(np.uint8).reshape(nblocks, 2)
        q = raw.reshape(rows, cols // block * nbytes)
        name = f"t.{qtype.name.lower()}"
        writer.add_tensor(name, q, raw_dtype=qtype)
        deq = gguf.quants.dequantize(q, qtype)
        np.ascontiguousarray(deq, dtype="<f4").tofile(os.path.join(out, name + ".f32"))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    main()
