"""A stand-in for ``vllm serve`` in tests and benchmarks: a real process speaking the OpenAI API on 127.0.0.1.

``python standin_vllm.py serve MODEL --host H --port P --served-model-name NAME --gpu-memory-utilization U
--max-model-len L --tensor-parallel-size T [vLLM's other flags are accepted and ignored]`` plus its own:
- ``--standin-mode ok|segv|exit-at-start|never-ready|reject-schema`` (default ok): ``segv`` answers
  ``--standin-n`` chat requests, then kills itself with SIGSEGV on the next one; ``exit-at-start`` prints a
  CUDA out-of-memory line and exits 1 before listening; ``never-ready`` never listens; ``reject-schema``
  answers HTTP 400 to ``response_format.type == "json_schema"`` (as vLLM does for a schema its grammar
  backend cannot compile) and normally to everything else.
- ``--standin-delay S``: each chat answer is sent after S seconds (requests are served concurrently, as
  vLLM batches them), for throughput measurements.
- ``--standin-record FILE``: appends one JSON line with this process's argv at start and one per chat
  request (its ``model`` and ``response_format``).
Chat answers are deterministic in the request's messages: with a JSON schema (``json_schema.schema``,
llama.cpp's ``schema``, or the schema-in-prompt instruction of rag.models.jsonx in the system message) every field is filled from a hash of the messages (arrays get 3 items, integers
count 1..3, numbers in [0, 1]); without one the text is ``OK <hash>``. So two different questions get
different answers and a mix-up between concurrent requests shows in the results.
"""
import argparse
import ctypes
import hashlib
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser()
ap.add_argument("cmd")
ap.add_argument("model")
ap.add_argument("--host", default="127.0.0.1")
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--served-model-name", default=None)
ap.add_argument("--gpu-memory-utilization", type=float)
ap.add_argument("--max-model-len", type=int)
ap.add_argument("--tensor-parallel-size", type=int)
ap.add_argument("--standin-mode", default="ok")
ap.add_argument("--standin-n", type=int, default=0)
ap.add_argument("--standin-delay", type=float, default=0.0)
ap.add_argument("--standin-record", default=None)
A, _rest = ap.parse_known_args()
NAME = A.served_model_name or A.model
STATE = {"chat": 0}
LOCK = threading.Lock()


def record(obj) -> None:
    if A.standin_record:
        with open(A.standin_record, "a") as f:
            f.write(json.dumps(obj) + "\n")


def _h(seed: str, path: str) -> int:
    return int(hashlib.sha256(f"{seed}|{path}".encode()).hexdigest()[:8], 16)


def fill(schema: dict, defs: dict, seed: str, path: str = "", index: int = 1):
    """A value valid for ``schema``, every field derived from ``seed`` (the messages' hash)."""
    if "$ref" in schema:
        return fill(defs[schema["$ref"].split("/")[-1]], defs, seed, path, index)
    if "anyOf" in schema:
        return fill(schema["anyOf"][0], defs, seed, path, index)
    if "enum" in schema:
        return schema["enum"][_h(seed, path) % len(schema["enum"])]
    t = schema.get("type")
    if t == "object" or "properties" in schema:
        return {k: fill(v, defs, seed, f"{path}.{k}", index) for k, v in schema.get("properties", {}).items()}
    if t == "array":
        return [fill(schema.get("items", {}), defs, seed, f"{path}[{i}]", i) for i in (1, 2, 3)]
    if t == "integer":
        return index
    if t == "number":
        return round((_h(seed, path) % 1000) / 999, 3)
    if t == "boolean":
        return bool(_h(seed, path) % 2)
    if t == "string":
        return f"standin {_h(seed, path) % 10000}"
    return None


def prompt_schema(body: dict):
    """The JSON schema a schema-in-prompt request carries in its system message (rag.models.jsonx), or None."""
    marker = "validate against this JSON schema:\n"
    for m in body.get("messages") or []:
        text = m.get("content") or ""
        if m.get("role") == "system" and marker in text:
            try:
                return json.JSONDecoder().raw_decode(text.split(marker, 1)[1])[0]
            except ValueError:
                return None
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _send(self, payload, status=200):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._send({"object": "list", "data": [{"id": NAME, "object": "model", "root": A.model}]})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with LOCK:
            STATE["chat"] += 1
            n = STATE["chat"]
        fmt = body.get("response_format") or {}
        record({"model": body.get("model"), "response_format": fmt})
        if A.standin_mode == "segv" and n > A.standin_n:
            ctypes.string_at(0)  # a real segfault (as a crashing CUDA kernel would end the server)
            time.sleep(60)
        if body.get("model") != NAME:
            return self._send({"object": "error", "message": f"The model `{body.get('model')}` does not exist.",
                               "type": "NotFoundError", "code": 404}, status=404)
        if A.standin_mode == "reject-schema" and fmt.get("type") == "json_schema":
            return self._send({"object": "error", "type": "BadRequestError", "code": 400,
                               "message": "xgrammar could not compile the JSON schema"}, status=400)
        if A.standin_delay:
            time.sleep(A.standin_delay)
        seed = hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).hexdigest()
        schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema") or prompt_schema(body)
        text = json.dumps(fill(schema, schema.get("$defs", {}), seed)) if schema else f"OK {seed[:8]}"
        self._send({"id": f"standin-{os.getpid()}-{n}", "object": "chat.completion", "created": 0,
                    "model": NAME, "choices": [{"index": 0, "finish_reason": "stop",
                                                "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})


if __name__ == "__main__":
    record({"argv": sys.argv[1:], "pid": os.getpid()})
    if A.standin_mode == "never-ready":
        time.sleep(600)
    if A.standin_mode == "exit-at-start":
        print("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", flush=True)
        sys.exit(1)
    print(f"INFO: standin vLLM serving {A.model} as {NAME} on {A.host}:{A.port}", flush=True)
    signal.signal(signal.SIGSEGV, signal.SIG_DFL)  # a segfault in any thread ends the process at once
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer((A.host, A.port), Handler).serve_forever()
