"""Logits of Hugging Face transformers' LlamaForCausalLM, the reference forward pass.

usage: hf_logits.py MODEL_DIR OUT.f32 TOKEN[,TOKEN...]
Writes float32 logits [len(tokens), vocab] computed in float32 (weights upcast),
with eager attention, to OUT.f32, and prints one line saying what computed them.
"""
import sys

import numpy as np
import torch
import transformers
from transformers import LlamaForCausalLM


def main() -> None:
    model_dir, out_path, tokens = sys.argv[1], sys.argv[2], sys.argv[3]
    ids = [int(t) for t in tokens.split(",")]
    torch.set_num_threads(2)
    model = LlamaForCausalLM.from_pretrained(
        model_dir, torch_dtype=torch.float32, attn_implementation="eager", low_cpu_mem_usage=True
    )
    model.eval()
    with torch.no_grad():
        out = model(torch.tensor([ids], dtype=torch.long), use_cache=False)
    logits = out.logits[0].to(torch.float32).numpy()
    np.ascontiguousarray(logits, dtype="<f4").tofile(out_path)
    print(
        f"torch {torch.__version__}, transformers {transformers.__version__}, "
        f"{torch.backends.cpu.get_cpu_capability()}, {torch.get_num_threads()} threads"
    )


if __name__ == "__main__":
    main()
