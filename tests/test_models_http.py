"""The LLM client against a local fake OpenAI-compatible HTTP server on 127.0.0.1 (real HTTP, real
openai client): repair path, disk cache with zero requests, 429 + Retry-After under concurrency, errors."""
from __future__ import annotations

import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from pydantic import BaseModel

from rag.models import ModelError, ModelUnavailable, StructuredOutputError, get_llm
from rag.models.jsonx import REPAIR_SYSTEM


class FakeOpenAI:
    """``reply(body, n) -> (status, text_or_error, headers)``; ``n`` = 1-based count of requests so far."""

    def __init__(self, reply):
        self.reply = reply
        self.bodies: list[dict] = []
        self.statuses: list[int] = []
        self.embed_bodies: list[dict] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # keep pytest output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path.endswith("/embeddings"):  # deterministic fake vectors, not normalized on purpose
                    with fake.lock:
                        fake.embed_bodies.append(body)
                    data = [{"object": "embedding", "index": i, "embedding": [float(len(t)), 1.0, 0.0]}
                            for i, t in enumerate(body["input"])]
                    self._send(200, {"object": "list", "data": data[::-1], "model": body["model"],  # any order
                                     "usage": {"prompt_tokens": len(data), "total_tokens": len(data)}}, {})
                    return
                with fake.lock:
                    fake.bodies.append(body)
                    n = len(fake.bodies)
                status, text, headers = fake.reply(body, n)
                with fake.lock:
                    fake.statuses.append(status)
                if status == 200:
                    prompt = sum(len(m["content"]) for m in body["messages"])
                    payload = {"id": f"c{n}", "object": "chat.completion", "created": 0, "model": body["model"],
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": text}}],
                               "usage": {"prompt_tokens": prompt, "completion_tokens": len(text),
                                         "total_tokens": prompt + len(text)}}
                else:
                    payload = {"error": {"message": text, "type": "test", "code": status}}
                self._send(status, payload, headers)

            def _send(self, status, payload, headers):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def fake_server():
    servers = []

    def _make(reply):
        s = FakeOpenAI(reply)
        servers.append(s)
        return s

    yield _make
    for s in servers:
        s.close()


@pytest.fixture
def llm_for(make_cfg):
    def _make(server: FakeOpenAI, **llm):
        over = {"llm.backend": "openai_compatible", "llm.base_url": server.base_url, "llm.model": "fake-model",
                "llm.retry_base_s": 0.01, "llm.retry_max_s": 0.5}
        over.update({f"llm.{k}": v for k, v in llm.items()})
        return get_llm(make_cfg(overrides=over))

    return _make


class Answer(BaseModel):
    value: int
    reason: str


MSG = [{"role": "user", "content": "What is six times seven?"}]


def test_repair_call_fixes_malformed_answer(fake_server, llm_for):
    def reply(body, n):
        if body["messages"][0]["content"].startswith(REPAIR_SYSTEM):
            bad = body["messages"][1]["content"]
            assert "seven" not in bad and "42" in bad  # the reparser sees the bad output, not the question
            return 200, '{"value": 42, "reason": "6*7"}', {}
        return 200, "Sure: {value: 42, reason: 6*7", {}  # not JSON at all

    srv = fake_server(reply)
    llm = llm_for(srv)
    r = llm.complete(MSG, schema=Answer)
    assert r.value == Answer(value=42, reason="6*7") and r.repaired
    assert r.raw.startswith("Sure:")  # raw is the model's first answer, before repair
    assert r.usage.requests == 2 and len(srv.bodies) == 2
    # schema-in-prompt for openai_compatible (structured=auto): the schema travels in the system message
    assert srv.bodies[0]["messages"][0]["role"] == "system" and '"reason"' in srv.bodies[0]["messages"][0]["content"]
    assert "response_format" not in srv.bodies[0]
    assert llm.meter.snapshot()["calls"] == 1  # one complete() = one usage entry, repair included


def test_unrepairable_answer_raises_with_raw(fake_server, llm_for):
    srv = fake_server(lambda body, n: (200, "I cannot answer that.", {}))
    llm = llm_for(srv)
    with pytest.raises(StructuredOutputError) as ei:
        llm.complete(MSG, schema=Answer)
    assert ei.value.raw == "I cannot answer that." and len(srv.bodies) == 2  # exactly one repair attempt


def test_second_identical_call_is_served_from_cache(fake_server, llm_for):
    srv = fake_server(lambda body, n: (200, '```json\n{"value": 42, "reason": "x"}\n```', {}))
    llm = llm_for(srv, structured="json_object", temperature=0.0, seed=7)
    first = llm.complete(MSG, schema=Answer)
    assert first.value.value == 42 and not first.usage.cached and len(srv.bodies) == 1
    body = srv.bodies[0]
    assert body["temperature"] == 0.0 and body["seed"] == 7 and body["response_format"] == {"type": "json_object"}
    sent = llm.http_requests
    again = llm.complete(MSG, schema=Answer)
    assert again.value == first.value and again.usage.cached and again.usage.requests == 0
    assert len(srv.bodies) == 1 and llm.http_requests == sent  # zero HTTP requests
    assert again.usage.prompt_tokens == first.usage.prompt_tokens  # usage of the original call is kept
    llm.complete(MSG, schema=Answer, max_tokens=7)  # other params: another key, a real request
    assert len(srv.bodies) == 2 and srv.bodies[1]["max_tokens"] == 7
    snap = llm.meter.snapshot()
    assert snap["calls"] == 3 and snap["cache_hits"] == 1 and snap["requests"] == 2


def test_50_concurrent_calls_with_429_retry_after(fake_server, llm_for):
    """Every call completes once; none lost or doubled; usage counted once per call."""
    answered: Counter = Counter()
    refused: Counter = Counter()
    lock = threading.Lock()

    def reply(body, n):
        q = body["messages"][-1]["content"]
        i = int(q.split()[-1])
        with lock:
            if i % 3 == 0 and refused[q] < 2:  # a third of the calls get two 429s before an answer
                refused[q] += 1
                return 429, "slow down", {"Retry-After": "0.05"}
            if n % 17 == 0 and refused[q] == 0:  # and a few a 503
                refused[q] += 1
                return 503, "busy", {}
            answered[q] += 1
        return 200, f"echo {i}", {}

    srv = fake_server(reply)
    llm = llm_for(srv, concurrency=8, max_retries=5, cache=False)
    reqs = [{"messages": [{"role": "user", "content": f"question {i}"}]} for i in range(50)]
    out = llm.complete_many(reqs)
    assert [r.value for r in out] == [f"echo {i}" for i in range(50)]  # in request order
    assert len(answered) == 50 and set(answered.values()) == {1}  # each answered exactly once
    n_refused = sum(refused.values())
    assert n_refused >= 2 * 16 and srv.statuses.count(429) >= 32
    assert len(srv.bodies) == 50 + n_refused and llm.http_requests == 50 + n_refused
    snap = llm.meter.snapshot()
    assert snap["calls"] == 50 and snap["requests"] == 50 + n_refused
    assert snap["completion_tokens"] == sum(len(f"echo {i}") for i in range(50))
    assert sum(r.usage.requests for r in out) == 50 + n_refused


def test_client_error_is_not_retried_and_named(fake_server, llm_for):
    srv = fake_server(lambda body, n: (400, "bad request: n_ctx exceeded", {}))
    llm = llm_for(srv, max_retries=3)
    with pytest.raises(ModelError, match="HTTP 400"):
        llm.complete(MSG)
    assert len(srv.bodies) == 1


def test_complete_many_keeps_other_results_on_error(fake_server, llm_for):
    srv = fake_server(lambda body, n: (400, "no", {}) if "bad" in body["messages"][-1]["content"] else (200, "ok", {}))
    llm = llm_for(srv, concurrency=3, max_retries=0)
    reqs = [{"messages": [{"role": "user", "content": c}]} for c in ("a", "bad", "c")]
    out = llm.complete_many(reqs, return_exceptions=True)
    assert out[0].value == "ok" and isinstance(out[1], ModelError) and out[2].value == "ok"
    with pytest.raises(ModelError):
        llm.complete_many(reqs)


def test_unreachable_server_and_missing_key_are_model_unavailable(make_cfg, monkeypatch):
    from rag.models.llama_server import free_port

    cfg = make_cfg(overrides={"llm.backend": "openai_compatible", "llm.base_url": f"http://127.0.0.1:{free_port()}/v1",
                              "llm.max_retries": 1, "llm.retry_base_s": 0.01, "llm.timeout_s": 5})
    with pytest.raises(ModelUnavailable, match="unreachable"):
        get_llm(cfg).complete(MSG)
    monkeypatch.delenv("RAG_TEST_NO_SUCH_KEY", raising=False)
    cfg = make_cfg(overrides={"llm.backend": "openai", "llm.api_key_env": "RAG_TEST_NO_SUCH_KEY"})
    with pytest.raises(ModelUnavailable, match="RAG_TEST_NO_SUCH_KEY"):
        get_llm(cfg)  # fails at once, before any request


def test_missing_weights_is_model_unavailable(make_cfg, tmp_path):
    cfg = make_cfg(overrides={"models_dir": str(tmp_path / "empty")})
    with pytest.raises(ModelUnavailable, match="make models"):
        get_llm(cfg)


def test_openai_backend_sends_strict_json_schema_and_prices_usage(fake_server, make_cfg, monkeypatch):
    srv = fake_server(lambda body, n: (200, '{"value": 42, "reason": "r"}', {}))
    monkeypatch.setenv("RAG_TEST_KEY", "sk-test-not-real")
    cfg = make_cfg(overrides={"llm.backend": "openai", "llm.base_url": srv.base_url, "llm.model": "gpt-4o-2024-08-06",
                              "llm.api_key_env": "RAG_TEST_KEY"})
    llm = get_llm(cfg)
    assert llm.structured_mode == "json_schema"
    r = llm.complete(MSG, schema=Answer)
    fmt = srv.bodies[0]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"]["additionalProperties"] is False
    assert set(fmt["json_schema"]["schema"]["required"]) == {"value", "reason"}
    assert srv.bodies[0]["messages"] == MSG  # native structured output: no schema in the prompt
    expected = (r.usage.prompt_tokens * 2.5 + r.usage.completion_tokens * 10.0) / 1e6
    assert r.usage.cost_usd == pytest.approx(expected) and r.usage.cost_usd > 0


def test_openai_embedder_batches_truncates_normalizes(fake_server, make_cfg, monkeypatch):
    from rag.models import count_tokens, get_embedder

    srv = fake_server(lambda body, n: (200, "", {}))
    monkeypatch.setenv("RAG_TEST_KEY", "sk-test-not-real")
    monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)  # the openai client's own override
    cfg = make_cfg(overrides={"embed.backend": "openai", "embed.model": "text-embedding-3-large",
                              "embed.api_key_env": "RAG_TEST_KEY", "embed.batch_size": 2, "embed.max_input_tokens": 5})
    emb = get_embedder(cfg)
    long = "one two three four five six seven eight nine ten"
    v = emb.embed(["a", "bb", long, "a"])
    assert [len(b["input"]) for b in srv.embed_bodies] == [2, 1]  # batches of 2, duplicate sent once
    sent = srv.embed_bodies[1]["input"][0]
    assert count_tokens(sent, cfg) == 5 and long.startswith(sent)  # truncated to max_input_tokens
    assert v.shape == (4, 3) and v.dtype == np.float32 and np.allclose(np.linalg.norm(v, axis=1), 1)
    assert np.array_equal(v[0], v[3]) and v[1][0] > v[0][0]  # rows kept in input order despite shuffled reply
    emb.embed(["bb"])
    assert len(srv.embed_bodies) == 2  # cached


def test_cross_encoder_without_weights_is_model_unavailable(make_cfg, tmp_path):
    from rag.models import get_cross_encoder

    with pytest.raises(ModelUnavailable, match="rerank"):
        get_cross_encoder(make_cfg(), str(tmp_path / "no-such-cross-encoder"))


def test_retry_after_ms_is_waited_before_retry_after(fake_server, llm_for, monkeypatch):
    """OpenAI's retry-after-ms (milliseconds) wins over Retry-After (seconds); without either, backoff."""
    import rag.models.llm as llm_mod

    waits = []
    monkeypatch.setattr(llm_mod, "backoff_s", lambda attempt, base, cap, retry_after: waits.append(retry_after) or 0)
    headers = iter([{"retry-after-ms": "250", "Retry-After": "7"}, {"Retry-After": "2"}, {}])

    def reply(body, n):
        h = next(headers, None)
        return (429, "slow down", h) if h is not None else (200, "done", {})

    llm = llm_for(fake_server(reply), max_retries=5, cache=False)
    assert llm.complete(MSG).value == "done"
    assert waits == [0.25, 2.0, None]


def test_reasoning_model_gets_max_completion_tokens_and_no_temperature(fake_server, llm_for):
    """o1/o3/o4/gpt-5 refuse temperature and max_tokens (HTTP 400): the body carries max_completion_tokens
    and reasoning_effort instead; a plain chat model on the same server keeps today's params."""
    srv = fake_server(lambda body, n: (200, '{"value": 42, "reason": "x"}', {}))
    llm = llm_for(srv, model="o3-mini", max_tokens=300, reasoning_effort="low", cache=False)
    assert llm.complete(MSG, schema=Answer).value.value == 42
    body = srv.bodies[-1]
    assert body["max_completion_tokens"] == 300 and body["reasoning_effort"] == "low"
    assert "max_tokens" not in body and "temperature" not in body
    llm_for(srv, model="gpt-5-chat-latest", max_tokens=300, cache=False).complete(MSG, schema=Answer)
    assert srv.bodies[-1]["max_tokens"] == 300 and "temperature" in srv.bodies[-1]
    llm_for(srv, model="my-finetune", reasoning="on", cache=False).complete(MSG, schema=Answer, max_tokens=9)
    assert srv.bodies[-1]["max_completion_tokens"] == 9 and "temperature" not in srv.bodies[-1]
