"""A randomly initialised transformers model saved as a Hugging Face folder, and its logits.

usage: hf_random_model.py MODEL_DIR SEED DTYPE OUT.f32 TOKEN[,TOKEN...]
MODEL_DIR holds a config.json (any architecture AutoModelForCausalLM knows). The model is
built from it with seeded random weights of a useful scale (matrices uniform with variance
1/fan_in, norm weights around 1, biases around 0 with spread 0.5: transformers' own init
leaves biases at zero and norms at one, which would hide a dropped bias or norm; Gemma's
norms multiply by 1 + w, so there w is drawn around 0 for factors around 1), stored in
DTYPE (float32, float16, bfloat16) with save_pretrained (safetensors, transformers' own
config.json), and run in float32 from the stored values with eager attention. Writes
float32 logits [len(tokens), vocab] to OUT.f32.
"""
import sys

import numpy as np
import torch
from transformers import AutoConfig, AutoModelForCausalLM


def main() -> None:
    model_dir, seed, dtype, out_path, tokens = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    ids = [int(t) for t in tokens.split(",")]
    torch.set_num_threads(2)
    torch.manual_seed(seed)
    config = AutoConfig.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.float32, attn_implementation="eager")
    norm_base = 0.0 if config.model_type.startswith("gemma") else 1.0
    with torch.no_grad():
        for name, p in model.named_parameters():
            u = torch.rand(p.shape, dtype=torch.float64) * 2 - 1
            if name.endswith("norm.weight"):
                v = norm_base + 0.25 * u
            elif name.endswith(".bias"):
                v = 0.5 * u
            else:
                v = u * (3.0 / p.shape[-1]) ** 0.5
            p.copy_(v.to(torch.float32))
    stored = getattr(torch, dtype)
    model.to(stored).save_pretrained(model_dir, safe_serialization=True)
    # Loaded afresh rather than cast back: casting would also round the rotary
    # frequencies (a float buffer) to DTYPE, which no real run does.
    model = AutoModelForCausalLM.from_pretrained(
        model_dir, torch_dtype=torch.float32, attn_implementation="eager", low_cpu_mem_usage=True
    )
    model.eval()
    with torch.no_grad():
        out = model(torch.tensor([ids], dtype=torch.long), use_cache=False)
    logits = out.logits[0].to(torch.float32).numpy()
    np.ascontiguousarray(logits, dtype="<f4").tofile(out_path)


if __name__ == "__main__":
    main()
