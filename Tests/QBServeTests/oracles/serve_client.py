"""Drives `quantbench serve` with the real `openai` client and raw HTTP.

Usage: serve_client.py QUANTBENCH_BINARY

Starts the server on a free loopback port with the built-in tiny model, runs every check,
stops it with SIGTERM, and prints one JSON line with the results. Exits 1 on the first
failed check (the message says which). Every loop is bounded in count and time, and every
connection goes to 127.0.0.1 only.
"""
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import openai

HOST = "127.0.0.1"
results = {}


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def free_port():
    s = socket.socket()
    s.bind((HOST, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def raw(port, method, path, body=None, headers=None, timeout=30):
    c = http.client.HTTPConnection(HOST, port, timeout=timeout)
    h = {"Content-Type": "application/json"} if headers is None else headers
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, dict(r.getheaders()), data


def health(port):
    status, _, data = raw(port, "GET", "/health")
    check(status == 200, "health answered %d" % status)
    return json.loads(data)


def wait_idle(port, seconds=10):
    deadline = time.time() + seconds
    while time.time() < deadline:
        h = health(port)
        if h["slots_active"] == 0 and h["queue_depth"] == 0 and h["kv_cache_used_bytes"] == 0:
            return h
        time.sleep(0.05)
    fail("slots still held after %ss: %s" % (seconds, health(port)))


def start(binary, port, extra=()):
    p = subprocess.Popen(
        [binary, "serve", "--port", str(port), "--parallel", "8", "--ctx", "256", "--threads", "2",
         "--idle-timeout", "2", "--shutdown-grace", "5", "--model-name", "tiny"] + list(extra),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline:
        if p.poll() is not None:
            fail("server exited at start: " + p.stderr.read().decode(errors="replace")[-2000:])
        try:
            health(port)
            return p
        except OSError:
            time.sleep(0.2)
    p.kill()
    fail("server did not start in 120 s")


def main():
    binary = sys.argv[1]
    port = free_port()
    server = start(binary, port)
    try:
        run_checks(port)
        check(server.poll() is None, "server died during the checks")
        shutdown_check(server, port)
    finally:
        if server.poll() is None:
            server.kill()
    print(json.dumps(results))


def run_checks(port):
    client = openai.OpenAI(base_url="http://%s:%d/v1" % (HOST, port), api_key="none", max_retries=0, timeout=60)

    models = client.models.list()
    check([m.id for m in models.data] == ["tiny"], "models: %s" % models)

    messages = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Tell me a story."}]

    # Streamed text equals non-streamed text at temperature 0; usage in the last chunk.
    whole = client.chat.completions.create(model="tiny", messages=messages, max_tokens=40, temperature=0)
    text = whole.choices[0].message.content
    check(whole.usage.completion_tokens > 0 and whole.usage.total_tokens == whole.usage.prompt_tokens + whole.usage.completion_tokens,
          "usage: %s" % whole.usage)
    pieces, chunks, last = [], 0, None
    for chunk in client.chat.completions.create(model="tiny", messages=messages, max_tokens=40, temperature=0,
                                                stream=True, stream_options={"include_usage": True}):
        chunks += 1
        last = chunk
        for c in chunk.choices:
            if c.delta.content:
                pieces.append(c.delta.content)
    check("".join(pieces) == text, "streamed %r != whole %r" % ("".join(pieces), text))
    check(last is not None and last.usage is not None and last.usage.completion_tokens == whole.usage.completion_tokens,
          "usage chunk: %s" % last)
    results["stream_equals_whole"] = True
    results["chunks"] = chunks

    # Text completions likewise, with a stop string.
    tc = client.completions.create(model="tiny", prompt="Once upon a time", max_tokens=30, temperature=0)
    ts = "".join(c.choices[0].text for c in client.completions.create(
        model="tiny", prompt="Once upon a time", max_tokens=30, temperature=0, stream=True) if c.choices)
    check(ts == tc.choices[0].text, "completions: streamed %r != whole %r" % (ts, tc.choices[0].text))
    if len(tc.choices[0].text) > 4:
        stop = tc.choices[0].text[2:4]
        st = client.completions.create(model="tiny", prompt="Once upon a time", max_tokens=30, temperature=0, stop=[stop])
        check(stop not in st.choices[0].text and st.choices[0].finish_reason == "stop", "stop string leaked: %r" % st.choices[0].text)

    # A seeded request gives identical text alone and among 7 concurrent others.
    def seeded(i, seed):
        r = client.chat.completions.create(
            model="tiny", messages=[{"role": "user", "content": "Story number %d" % i}], max_tokens=48,
            temperature=0.9, top_p=0.95, seed=seed)
        return r.choices[0].message.content, r.usage.completion_tokens

    alone = seeded(0, 1234)
    out = [None] * 8
    threads = [threading.Thread(target=lambda i=i: out.__setitem__(i, seeded(i, 1234 if i == 0 else 77 + i))) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    check(out[0] == alone, "seeded: alone %r, among others %r" % (alone, out[0]))
    check(all(o is not None for o in out), "a concurrent request failed")
    results["seeded_alone_equals_batched"] = True
    wait_idle(port)

    # Clients that disconnect mid-stream free their slots, their KV positions and their
    # memory: 100 of them, 10 at a time, after 10 that warm the allocator's caches.
    def disconnect(k):
        stream = client.chat.completions.create(model="tiny", messages=messages, max_tokens=200, temperature=0.8, seed=k, stream=True)
        n = 0
        for _chunk in stream:
            n += 1
            if n == 3:
                break
        stream.close()

    def disconnect_many(count, width):
        def run(w):
            for k in range(w, count, width):
                disconnect(k)
        ts = [threading.Thread(target=run, args=(w,)) for w in range(width)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(300)

    disconnect_many(10, 5)
    before = wait_idle(port)
    disconnect_many(100, 10)
    h = wait_idle(port)
    results["disconnect_frees_slot"] = h
    if "tcmalloc_allocated_bytes" in before:
        growth = h["tcmalloc_allocated_bytes"] - before["tcmalloc_allocated_bytes"]
        results["disconnects_allocated_growth"] = growth
        check(growth < 4 << 20, "100 disconnects grew tcmalloc's allocated bytes by %d (from %d)" % (growth, before["tcmalloc_allocated_bytes"]))

    # Malformed requests: each answers 4xx with an OpenAI-style error body.
    ok_body = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}

    def body(**over):
        b = dict(ok_body)
        for k, v in over.items():
            if v is None:
                b.pop(k, None)
            else:
                b[k] = v
        return json.dumps(b)

    chat = "/v1/chat/completions"
    corpus = [
        ("broken json", "POST", chat, '{"model": "tiny", "messages": [', None),
        ("trailing garbage", "POST", chat, body() + "xyz", None),
        ("empty body", "POST", chat, "", None),
        ("json array", "POST", chat, "[1,2,3]", None),
        ("json string", "POST", chat, '"hello"', None),
        ("json null", "POST", chat, "null", None),
        ("deep nesting", "POST", chat, "[" * 5000 + "]" * 5000, None),
        ("invalid utf8", "POST", chat, b'{"messages": "\xff\xfe"}', None),
        ("missing messages", "POST", chat, body(messages=None), None),
        ("messages not array", "POST", chat, body(messages="hi"), None),
        ("empty messages", "POST", chat, body(messages=[]), None),
        ("message without role", "POST", chat, body(messages=[{"content": "x"}]), None),
        ("bad role", "POST", chat, body(messages=[{"role": "wizard", "content": "x"}]), None),
        ("content number", "POST", chat, body(messages=[{"role": "user", "content": 5}]), None),
        ("image content", "POST", chat, body(messages=[{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]), None),
        ("huge max_tokens", "POST", chat, body(max_tokens=10 ** 12), None),
        ("max_tokens zero", "POST", chat, body(max_tokens=0), None),
        ("negative max_tokens", "POST", chat, body(max_tokens=-5), None),
        ("max_tokens string", "POST", chat, body(max_tokens="10"), None),
        ("max_tokens float", "POST", chat, body(max_tokens=3.5), None),
        ("negative temperature", "POST", chat, body(temperature=-1), None),
        ("temperature too high", "POST", chat, body(temperature=7), None),
        ("temperature string", "POST", chat, body(temperature="hot"), None),
        ("top_p zero", "POST", chat, body(top_p=0), None),
        ("top_p above one", "POST", chat, body(top_p=1.5), None),
        ("stream not bool", "POST", chat, body(stream="yes"), None),
        ("stream_options without stream", "POST", chat, body(stream_options={"include_usage": True}), None),
        ("five stop strings", "POST", chat, body(stop=["a", "b", "c", "d", "e"]), None),
        ("stop number", "POST", chat, body(stop=5), None),
        ("n two", "POST", chat, body(n=2), None),
        ("seed string", "POST", chat, body(seed="x"), None),
        ("unknown field", "POST", chat, body(frobnicate=True), None),
        ("unknown model", "POST", chat, body(model="gpt-9"), None),
        ("logprobs", "POST", chat, body(logprobs=True), None),
        ("prompt longer than context", "POST", chat, body(messages=[{"role": "user", "content": "word " * 2000}]), None),
        ("prompt plus max_tokens over context", "POST", chat, body(max_tokens=255), None),
        ("10 MB body", "POST", chat, body(messages=[{"role": "user", "content": "x" * (10 << 20)}]), None),
        ("text/plain", "POST", chat, body(), {"Content-Type": "text/plain"}),
        ("no content type", "POST", chat, body(), {}),
        ("form content type", "POST", chat, "a=b", {"Content-Type": "application/x-www-form-urlencoded"}),
        ("GET on chat", "GET", chat, None, {}),
        ("PUT on completions", "PUT", "/v1/completions", body(), None),
        ("DELETE on models", "DELETE", "/v1/models", None, {}),
        ("unknown path", "POST", "/v1/embeddings", body(), None),
        ("completions without prompt", "POST", "/v1/completions", json.dumps({"model": "tiny", "max_tokens": 3}), None),
        ("completions prompt number", "POST", "/v1/completions", json.dumps({"prompt": 7}), None),
        ("completions with messages", "POST", "/v1/completions", body(), None),
        ("echo", "POST", "/v1/completions", json.dumps({"prompt": "a", "echo": True}), None),
    ]
    answered = {}
    for name, method, path, data, headers in corpus:
        try:
            status, hdrs, payload = raw(port, method, path, data, headers)
        except (ConnectionError, http.client.HTTPException) as e:
            fail("%s: connection failed: %r" % (name, e))
        check(400 <= status < 500, "%s: status %d, body %r" % (name, status, payload[:300]))
        try:
            err = json.loads(payload)["error"]
        except Exception:
            fail("%s: body is not an OpenAI error: %r" % (name, payload[:300]))
        check(set(err) == {"message", "type", "param", "code"} and isinstance(err["message"], str) and err["message"],
              "%s: error fields %r" % (name, err))
        answered[name] = status
    results["malformed"] = len(answered)
    results["malformed_statuses"] = sorted(set(answered.values()))
    check(answered["10 MB body"] == 413, "10 MB body answered %d" % answered["10 MB body"])
    check(answered["text/plain"] == 415, "text/plain answered %d" % answered["text/plain"])
    check(answered["GET on chat"] == 405, "GET on chat answered %d" % answered["GET on chat"])
    check(answered["unknown model"] == 404, "unknown model answered %d" % answered["unknown model"])

    # Slow headers: a connection that stops mid-headers is closed after the idle timeout.
    s = socket.create_connection((HOST, port), timeout=10)
    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Ty")
    t0 = time.time()
    closed = False
    try:
        while time.time() - t0 < 8:
            d = s.recv(4096)
            if not d:
                closed = True
                break
            if b"HTTP/1.1 4" in d:
                closed = True
                break
    except (socket.timeout, ConnectionError):
        closed = True
    s.close()
    check(closed and time.time() - t0 < 8, "a slow-header connection was not closed")
    results["slow_headers_closed_after_s"] = round(time.time() - t0, 2)

    # Still serving, nothing held.
    again = client.chat.completions.create(model="tiny", messages=messages, max_tokens=40, temperature=0)
    check(again.choices[0].message.content == text, "after the corpus the reply changed")
    wait_idle(port)
    status, _, metrics = raw(port, "GET", "/metrics")
    m = metrics.decode()
    for name in ["quantbench_http_requests_total", "quantbench_generation_tokens_total", "quantbench_queue_depth",
                 "quantbench_kv_cache_used_bytes", "quantbench_time_to_first_token_seconds_bucket",
                 "quantbench_inter_token_latency_seconds_bucket"]:
        check(name in m, "metrics lack %s" % name)
    results["metrics"] = True


def shutdown_check(server, port):
    """SIGTERM during a stream: the stream ends properly, the process exits 0."""
    c = http.client.HTTPConnection(HOST, port, timeout=30)
    c.request("POST", "/v1/chat/completions", body=json.dumps({
        "messages": [{"role": "user", "content": "go"}], "max_tokens": 200, "stream": True, "temperature": 0.7, "seed": 3}),
        headers={"Content-Type": "application/json"})
    r = c.getresponse()
    check(r.status == 200, "stream before shutdown: %d" % r.status)
    first = r.readline()
    check(first.startswith(b"data: "), "first line %r" % first)
    server.send_signal(signal.SIGTERM)
    rest = r.read().decode()
    c.close()
    check(rest.rstrip().endswith("data: [DONE]"), "stream cut at shutdown: %r" % rest[-300:])
    try:
        code = server.wait(20)
    except subprocess.TimeoutExpired:
        fail("server did not exit within 20 s of SIGTERM")
    check(code == 0, "server exited %d after SIGTERM: %s" % (code, server.stderr.read().decode(errors="replace")[-2000:]))
    results["sigterm_clean"] = True


if __name__ == "__main__":
    main()
