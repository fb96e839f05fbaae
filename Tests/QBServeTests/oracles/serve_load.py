"""Concurrent streams against an OpenAI-compatible endpoint: total output tokens/s.

Usage: serve_load.py BASE_URL MODEL CONCURRENCY REQUESTS_PER_STREAM MAX_TOKENS

Each of CONCURRENCY threads sends REQUESTS_PER_STREAM streamed chat completions one after
another (bounded), and the script prints one JSON line: output tokens/s over the run, TTFT
and inter-token latency percentiles. Loopback endpoints only.
"""
import json
import sys
import threading
import time

import openai

base, model, conc, per, max_tokens = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
assert base.startswith("http://127.0.0.1:") or base.startswith("http://localhost:"), "loopback only"
client = openai.OpenAI(base_url=base, api_key="none", max_retries=0, timeout=600)
ttft, itl, tokens = [], [], []
lock = threading.Lock()


def worker(w):
    for r in range(per):
        t0 = time.perf_counter()
        last, first, n = None, None, 0
        for chunk in client.completions.create(model=model, prompt="Once upon a time, in stream %d request %d," % (w, r),
                                               max_tokens=max_tokens, temperature=0.8, seed=w * 1000 + r, stream=True,
                                               stream_options={"include_usage": True}):
            now = time.perf_counter()
            if chunk.usage is not None:
                n = chunk.usage.completion_tokens
            if chunk.choices and chunk.choices[0].text:
                if first is None:
                    first = now - t0
                elif last is not None:
                    with lock:
                        itl.append(now - last)
                last = now
        with lock:
            tokens.append(n)
            if first is not None:
                ttft.append(first)


def pct(xs, q):
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(q * len(xs)))] * 1000, 1) if xs else None


start = time.perf_counter()
threads = [threading.Thread(target=worker, args=(w,)) for w in range(conc)]
for t in threads:
    t.start()
for t in threads:
    t.join()
wall = time.perf_counter() - start
print(json.dumps({"concurrency": conc, "requests": len(tokens), "output_tokens": sum(tokens), "seconds": round(wall, 2),
                  "output_tokens_per_s": round(sum(tokens) / wall, 1), "ttft_ms_p50": pct(ttft, 0.5), "ttft_ms_p90": pct(ttft, 0.9),
                  "itl_ms_p50": pct(itl, 0.5), "itl_ms_p90": pct(itl, 0.9), "itl_ms_p99": pct(itl, 0.99)}))
