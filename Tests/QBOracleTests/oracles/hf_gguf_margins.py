"""Top-2 margins of Hugging Face transformers' model of a GGUF file's dequantized weights.

usage: hf_gguf_margins.py MODEL.gguf PROMPT_IDS:CONTINUATION_IDS [...]
Each argument is a prompt and a continuation as comma-separated token ids. transformers
dequantizes the file to float32 and runs it with eager attention; for each token of each
continuation (the text fed back, not generated) prints the logit of that token minus the
largest other logit, and the id of that other token, as JSON: one list of [margin, rival]
per argument.
"""
import functools
import json
import os
import sys

import gguf
import torch
from transformers import AutoModelForCausalLM

# transformers opens the file twice (its config, then its tensors), and parsing the
# metadata (262,144 vocabulary strings, one at a time) is most of the load: parse once.
gguf.GGUFReader = functools.lru_cache(maxsize=None)(gguf.GGUFReader)


def main() -> None:
    path = sys.argv[1]
    torch.set_num_threads(2)
    model = AutoModelForCausalLM.from_pretrained(
        os.path.dirname(path) or ".", gguf_file=os.path.basename(path), dtype=torch.float32, attn_implementation="eager"
    )
    model.eval()
    out = []
    for arg in sys.argv[2:]:
        prompt, continuation = ([int(t) for t in part.split(",")] for part in arg.split(":"))
        ids = prompt + continuation
        with torch.no_grad():
            logits = model(torch.tensor([ids], dtype=torch.long), use_cache=False).logits[0].to(torch.float32)
        rows = []
        for i, token in enumerate(continuation):
            row = logits[len(prompt) - 1 + i].clone()
            chosen = float(row[token])
            row[token] = -float("inf")
            rival = int(torch.argmax(row))
            rows.append([chosen - float(row[rival]), rival])
        out.append(rows)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
