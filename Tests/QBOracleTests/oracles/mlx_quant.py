"""MLX's own affine quantization of a matrix, for our quantizer and dequantizer to be
compared against.

usage: mlx_quant.py IN.f32 ROWS COLS BITS GROUP OUT_DIR
Reads float32 [ROWS, COLS]; writes OUT_DIR/q.u32 (mx.quantize packed words),
scales.f32, biases.f32 and deq.f32 (mx.dequantize of those).
"""
import os
import sys

import numpy as np
import mlx.core as mx


def main() -> None:
    src, rows, cols, bits, group, out = sys.argv[1], *map(int, sys.argv[2:6]), sys.argv[6]
    w = np.fromfile(src, dtype="<f4").reshape(rows, cols)
    q, scales, biases = mx.quantize(mx.array(w), group_size=group, bits=bits)
    deq = mx.dequantize(q, scales, biases, group_size=group, bits=bits)
    np.array(q).astype("<u4").tofile(os.path.join(out, "q.u32"))
    np.array(scales).astype("<f4").tofile(os.path.join(out, "scales.f32"))
    np.array(biases).astype("<f4").tofile(os.path.join(out, "biases.f32"))
    np.array(deq).astype("<f4").tofile(os.path.join(out, "deq.f32"))


if __name__ == "__main__":
    main()
