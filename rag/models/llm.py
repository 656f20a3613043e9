"""Chat LLM clients over the OpenAI protocol: OpenAI, any OpenAI-compatible server, a local llama.cpp or vLLM server.

Contract (see ``base.LLM``):
- ``get_llm(cfg)`` returns one ``ChatLLM`` per distinct ``cfg.llm`` section (+ cache/models dirs), shared
  by threads; it raises ``ModelUnavailable`` at once when weights, package, executable or API key are
  missing. The llama_cpp and vllm backends start their server (rag.models.llama_server / vllm_server, one
  managed-subprocess machinery) lazily on the first call that is not a cache hit and stop it at
  interpreter exit or ``shutdown()`` / ``shutdown_all()``. With backend vllm the request's ``model`` is
  ``llm.vllm.served_model_name`` (default ``llm.model``).
- ``complete(messages, schema=None, **params) -> LLMResult``. ``params`` override ``temperature``,
  ``max_tokens``, ``seed`` from the config (reasoning models: ``max_completion_tokens``, no sampling params,
  see ``is_reasoning_model``); other known chat-completion params pass through, unknown
  ones go to the server in ``extra_body``. With a pydantic ``schema``: enforced per ``cfg.llm.structured``
  (auto: ``json_schema`` for openai and vllm, ``json_object`` + grammar schema for llama_cpp,
  schema-in-prompt for openai_compatible), parsed tolerantly (``jsonx``), and on failure ONE repair call;
  then ``StructuredOutputError(raw)``. A vLLM server that refuses the json_schema request (HTTP 400: a
  schema its grammar backend cannot compile) is asked again with the schema in the prompt, and this client
  keeps doing so (``schema_fallbacks`` counts them).
- Each HTTP chat call is disk-cached (``<cache_dir>/llm.sqlite``) under (model id, messages, response
  format, sampling params); a hit sends no request. An entry read back must parse to its shape
  (:func:`rag.models.chat_entry.check_entry`); a damaged one is dropped and asked again (:mod:`rag.models.cache`).
  ``LLMResult.usage`` sums the call and its repair; ``usage.cached`` is True only when nothing was sent.
  Every ``complete`` adds its usage ONCE to ``self.meter`` (``meter.snapshot()`` = totals).
- A local llama.cpp / vLLM server that dies is restarted at most ``cfg.llm.server_max_restarts`` times
  (``usage.restarts`` counts them); after that the call raises ``ModelUnavailable`` naming the signal.
- Retries (own, the openai client's are off): 429, 5xx, timeouts and connection errors, up to
  ``cfg.llm.max_retries`` times, waiting Retry-After when the server sends it, else exponential backoff
  with jitter. Requests/min and tokens/min budgets are shared by all threads of one client, and inside a
  Ray worker by every worker of the cluster (one actor per endpoint, ``ray_budget.limiter_for``).
- A client pickles as its config: unpickled in another process (a Ray worker) it is that process's
  ``get_llm(cfg)``.
- ``complete_many(requests)``: results in request order, ``cfg.llm.concurrency`` threads.
- ``complete(..., logprobs=True, top_logprobs=K)``: ``LLMResult.logprobs`` holds each generated token with its
  top alternatives (cached with the text; :mod:`rag.models.logprobs` reads a JSON field's value from them).

Each backend's endpoint (and its up-front checks) is in ``llm_backends``; what a request carries for a model
(prices, reasoning-model params, the structured response format) in ``chat_params``; a cache entry's format
and the error a failed call ends in, in ``chat_entry``.
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence

from pydantic import BaseModel

from .base import LLMResult, ModelError, StructuredOutputError, Usage, UsageMeter
from .cache import DiskCache
from .cache_rows import make_key
from .chat_entry import check_entry, decode_entry, encode_entry, final_error
from .chat_params import CLIENT_PARAMS, is_reasoning_model, price, reasoning_params, request_format
from .jsonx import parse_structured, repair_messages
from .llm_backends import check_backend, endpoint
from .logprobs import token_logprobs
from .ratelimit import backoff_s, retry_decision
from .ray_budget import limiter_for


class ChatLLM:
    def __init__(self, cfg):
        self.cfg = cfg
        self.llm_cfg = c = cfg.llm
        self.backend = c.backend
        if c.backend == "llama_cpp":  # llm.gguf: a key of weights.GGUF or a path to any .gguf file
            from .weights import gguf_alias, gguf_cache_id

            self.model = gguf_alias(c.gguf)  # the name the server answers to (a key: unchanged)
            # Flash attention sums in another order (a near-tie answer may differ): its answers are cached apart.
            self._cache_model = gguf_cache_id(c.gguf, cfg.path("models_dir")) + ("+flash_attn" if c.flash_attn else "")
        else:
            self.model = self._cache_model = c.model
        # The model id sent in requests: vLLM answers to its served name.
        self.api_model = (c.vllm.served_model_name or c.model) if c.backend == "vllm" else self.model
        self.schema_fallbacks = 0  # json_schema requests a vLLM server refused, asked again schema-in-prompt
        self._schema_refused = False
        self.meter = UsageMeter()
        self.cache = DiskCache(cfg.path("cache_dir") / "llm.sqlite") if c.cache else None
        self.limiter = limiter_for(c)
        # At most llm.concurrency requests in flight per client, however the callers nest their threads
        # (05/06 run questions in parallel and a question's rerank batches go out in parallel too).
        self._in_flight = threading.BoundedSemaphore(c.concurrency)
        self.server = None
        self._client = None
        self._client_url: str | None = None
        self._lock = threading.Lock()
        self._count_lock = threading.Lock()
        self.http_requests = 0  # HTTP attempts actually sent (incl. failed ones), for tests/diagnostics

    def __reduce__(self):
        # Sent to another process (a Ray task's closure): it uses its own client for the same config.
        return (get_llm, (self.cfg,))

    def check_available(self) -> None:
        """Cheap up-front checks (no server start, no request): weights / package / key present.

        Raises ``ModelUnavailable`` saying what to do (``llm_backends.check_backend``); lets ``get_llm`` fail
        early and clearly.
        """
        check_backend(self.cfg)

    # ---- connection ------------------------------------------------------------------------------
    @property
    def structured_mode(self) -> str:
        mode = self.llm_cfg.structured
        if mode != "auto":
            return mode
        if self.backend == "vllm" and self._schema_refused:
            return "prompt"
        return {"openai": "json_schema", "vllm": "json_schema", "llama_cpp": "json_object"}.get(self.backend, "prompt")

    def _connect(self):
        with self._lock:
            c = self.llm_cfg
            server, base_url, key = endpoint(self.cfg, self.model)
            self.server = server
            if self._client is None or self._client_url != base_url:
                from openai import OpenAI

                # max_retries=0: the one retry loop is _request's. The client's own would retry a local server
                # that died without restarting it, and would bypass the shared rate limiter between attempts.
                self._client = OpenAI(api_key=key, base_url=base_url, timeout=c.timeout_s, max_retries=0)
                self._client_url = base_url
            return self._client

    def shutdown(self) -> None:
        """Stop the local server this client uses (if any); a later call starts a new one."""
        with self._lock:
            if self.server is not None:
                self.server.stop()
            self._client = None

    def __enter__(self) -> "ChatLLM":
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()

    # ---- one HTTP chat call, cached and retried ------------------------------------------------------
    def _request(self, messages: list[dict[str, str]], response_format: dict | None,
                 params: dict) -> tuple[str, Usage, list | None]:
        key = make_key("chat", self.backend if self.backend == "llama_cpp" else "remote", self._cache_model, messages,
                       response_format, params)
        if self.cache is not None:
            hit = self.cache.get(key, check_entry)
            if hit is not None:
                return decode_entry(hit)
        kwargs: dict[str, Any] = {k: v for k, v in params.items() if k in CLIENT_PARAMS}
        extra = {k: v for k, v in params.items() if k not in CLIENT_PARAMS}
        if response_format is not None:
            kwargs["response_format"] = response_format
        if extra:
            kwargs["extra_body"] = extra
        est = 0
        if self.limiter.limits_tokens:  # token budget: prompt (cl100k estimate) + completion cap
            from .tokens import count_tokens

            est = sum(count_tokens(m.get("content") or "", self.cfg) for m in messages) + int(params.get("max_tokens") or params.get("max_completion_tokens") or 0)
        c = self.llm_cfg
        t0, sent, attempt, restarts = time.time(), 0, 0, 0
        while True:
            # A local server that died (segfault, OOM kill) is restarted here at most
            # llm.server_max_restarts times, then ModelUnavailable names the signal: no retries on a dead port.
            if self.server is not None and self.server.ensure_alive():
                restarts += 1
            client = self._connect()
            # The budget is booked last, right before sending: a slow first connect (client import, server
            # start) must not bunch booked requests up so that they reach the API faster than booked.
            self.limiter.acquire(est)
            sent += 1
            with self._count_lock:
                self.http_requests += 1
            try:
                with self._in_flight:
                    resp = client.chat.completions.create(model=self.api_model, messages=messages, **kwargs)
                break
            except Exception as e:  # noqa: BLE001 - classified below
                if self.server is not None and self.server.dead:
                    continue  # the request killed it (or it died meanwhile): ensure_alive decides above
                retry_after, retryable = retry_decision(e)
                if not retryable or attempt >= c.max_retries:
                    raise final_error(e, f"{self.backend} model {self.model!r}", self.server, c, sent) from e
                time.sleep(backoff_s(attempt, c.retry_base_s, c.retry_max_s, retry_after))
                attempt += 1
        text = resp.choices[0].message.content or ""
        u = resp.usage
        pt, ct = (u.prompt_tokens or 0, u.completion_tokens or 0) if u else (0, 0)
        usage = Usage(pt, ct, sent, False, price(self.model, pt, ct), time.time() - t0, restarts)
        lps = token_logprobs(resp) if params.get("logprobs") else None
        if self.cache is not None:
            self.cache.put(key, encode_entry(text, pt, ct, lps))
        return text, usage, lps

    # ---- public API ------------------------------------------------------------------------------
    def _params(self, params: dict[str, Any]) -> dict[str, Any]:
        c = self.llm_cfg
        out = {"temperature": c.temperature, "max_tokens": c.max_tokens, "seed": c.seed}
        out.update({k: v for k, v in params.items() if v is not None})
        if self.backend != "llama_cpp" and is_reasoning_model(self.model, c.reasoning):
            return reasoning_params(out, c.reasoning_effort)
        return out

    def _format(self, messages: list[dict[str, str]], schema: type[BaseModel] | None) -> tuple[list, dict | None]:
        return request_format(messages, schema, self.structured_mode, self.backend)

    def complete(self, messages: Sequence[dict[str, str]], schema: type[BaseModel] | None = None,
                 **params: Any) -> LLMResult:
        messages = [dict(m) for m in messages]
        p = self._params(params)
        msgs, fmt = self._format(messages, schema)
        try:
            raw, usage, lps = self._request(msgs, fmt, p)
        except ModelError as e:
            if not self._refused_schema(e, fmt):
                raise
            msgs, fmt = self._format(messages, schema)  # now schema-in-prompt
            raw, usage, lps = self._request(msgs, fmt, p)
        if schema is None:
            self.meter.add(usage)
            return LLMResult(value=raw, raw=raw, model=self.model, usage=usage, logprobs=lps)
        try:
            value = parse_structured(raw, schema)
            self.meter.add(usage)
            return LLMResult(value=value, raw=raw, model=self.model, usage=usage, logprobs=lps)
        except ValueError as e:
            err = str(e)
        if not self.llm_cfg.repair:
            self.meter.add(usage)
            raise StructuredOutputError(f"{self.model}: answer does not fit {schema.__name__}: {err[:500]}", raw)
        rmsgs, rfmt = self._format(repair_messages(schema.model_json_schema(), raw, err), schema)
        fixed, u2, _ = self._request(rmsgs, rfmt, p)
        usage = usage + u2
        self.meter.add(usage)
        try:
            value = parse_structured(fixed, schema)
        except ValueError as e2:
            raise StructuredOutputError(f"{self.model}: answer does not fit {schema.__name__} even after one "
                                        f"repair call: {str(e2)[:500]}", raw) from e2
        return LLMResult(value=value, raw=raw, model=self.model, usage=usage, repaired=True)

    def _refused_schema(self, e: ModelError, fmt: dict | None) -> bool:
        """A vLLM server answered HTTP 400 to a json_schema request: from now on this client puts the schema in
        the prompt (the reply is still parsed and, if needed, repaired). True when the request should be re-sent."""
        if self.backend != "vllm" or self.llm_cfg.structured != "auto" or (fmt or {}).get("type") != "json_schema" \
                or getattr(e, "status_code", None) != 400:
            return False
        with self._count_lock:
            if not self._schema_refused:
                import sys

                print(f"warning: vLLM refused a json_schema response_format ({str(e).splitlines()[0][:300]}); "
                      "sending the schema in the prompt from now on", file=sys.stderr, flush=True)
            self._schema_refused = True
            self.schema_fallbacks += 1
        return True

    def complete_many(self, requests: Sequence[dict[str, Any]], return_exceptions: bool = False) -> list:
        """``complete(**r)`` for each request, in order, on ``cfg.llm.concurrency`` threads.

        An error in one request does not stop the others (their results are cached); afterwards the
        first error is raised, or with ``return_exceptions=True`` errors take their request's place.
        """
        requests = list(requests)
        if not requests:
            return []

        def one(r: dict[str, Any]):
            try:
                return self.complete(**r)
            except Exception as e:  # noqa: BLE001 - handed back or re-raised below
                return e

        workers = min(self.llm_cfg.concurrency, len(requests))
        if workers == 1:
            out = [one(r) for r in requests]
        else:
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="llm") as pool:
                out = list(pool.map(one, requests))
        if not return_exceptions:
            for r in out:
                if isinstance(r, Exception):
                    raise r
        return out


_REGISTRY: dict[tuple, ChatLLM] = {}
_REG_LOCK = threading.Lock()


def get_llm(cfg) -> ChatLLM:
    key = (cfg.llm.model_dump_json(), str(cfg.path("cache_dir")), str(cfg.path("models_dir")))
    with _REG_LOCK:
        if key not in _REGISTRY:
            client = ChatLLM(cfg)
            client.check_available()  # raises ModelUnavailable early; a failed client is not kept
            _REGISTRY[key] = client
        return _REGISTRY[key]


def shutdown_all() -> None:
    with _REG_LOCK:
        clients = list(_REGISTRY.values())
    for c in clients:
        c.shutdown()
    from .llama_server import stop_all_servers

    stop_all_servers()
