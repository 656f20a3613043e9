"""A stand-in for the llama.cpp server in tests: a real process speaking the OpenAI API on 127.0.0.1.

``python standin_llama.py PORT MODE N ALIAS`` (ALIAS: the model id /v1/models lists)
- ``ok``: answers every request.
- ``segv N``: answers N chat requests, then kills itself with SIGSEGV on the next one (as the AMX build did).
- ``never-ready``: never listens (start timeout).
- ``exit-at-start``: exits with code 3 before listening (bad model file).
Chat answers fit the request's JSON schema (llama.cpp's ``response_format.schema`` or OpenAI's
``response_format.json_schema.schema``) with minimal values.
"""
import ctypes
import json
import os
import signal
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

PORT, MODE = int(sys.argv[1]), sys.argv[2]
N_OK = int(sys.argv[3]) if len(sys.argv) > 3 else 0
ALIAS = sys.argv[4] if len(sys.argv) > 4 else "standin"
STATE = {"chat": 0}


def minimal(schema: dict, defs: dict):
    """The smallest value that validates against ``schema`` (enough for the project's answer models)."""
    if "$ref" in schema:
        return minimal(defs[schema["$ref"].split("/")[-1]], defs)
    if "anyOf" in schema:
        return minimal(schema["anyOf"][0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    t = schema.get("type")
    if t == "object" or "properties" in schema:
        return {k: minimal(v, defs) for k, v in schema.get("properties", {}).items() if k in schema.get("required", [])}
    return {"array": [], "string": "N/A", "number": 0.5, "integer": 1, "boolean": False, "null": None}.get(t, None)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def _send(self, payload):
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._send({"object": "list", "data": [{"id": ALIAS, "object": "model"}]})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        STATE["chat"] += 1
        if MODE == "segv" and STATE["chat"] > N_OK:
            signal.signal(signal.SIGSEGV, signal.SIG_DFL)
            ctypes.string_at(0)  # a real, synchronous segfault in this thread (as the AMX kernel did)
            time.sleep(60)  # never reached; never answer from a process that is dying
        fmt = body.get("response_format") or {}
        schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema")  # llama.cpp / OpenAI style
        text = json.dumps(minimal(schema, schema.get("$defs", {}))) if schema else "OK"
        self._send({"id": f"standin-{os.getpid()}", "object": "chat.completion", "created": 0, "model": body.get("model", "standin"),
                    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})


if __name__ == "__main__":
    if MODE == "never-ready":
        time.sleep(600)
    if MODE == "exit-at-start":
        print("error loading model: bad magic", flush=True)
        sys.exit(3)
    signal.signal(signal.SIGSEGV, signal.SIG_DFL)
    HTTPServer(("127.0.0.1", PORT), Handler).serve_forever()  # one thread: the crash is the server's
