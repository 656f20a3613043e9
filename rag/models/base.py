"""Types shared by every model backend, and fakes for unit tests.

Every model call in the project goes through ``rag.models``; stage code only sees these types:

- ``LLM.complete(messages, schema=None, **params) -> LLMResult``: ``schema`` is a pydantic model
  class; with it ``result.value`` is a validated instance, without it the text.
- ``LLM.complete_many(requests) -> list[LLMResult]``: same order as ``requests`` (each a dict of
  ``complete``'s keyword arguments), run in parallel within the configured limits.
- ``Embedder.embed(texts) -> np.ndarray``: float32, shape (n, dim), rows L2-normalized, so the
  inner product is the cosine similarity (higher = more similar).
- ``CrossEncoder.score(pairs) -> np.ndarray``: one relevance score per (query, passage) pair,
  higher = more relevant.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Protocol, Sequence

import numpy as np
from pydantic import BaseModel

from ..core.errors import StageCannotRun

Messages = list[dict[str, str]]


class ModelError(RuntimeError):
    """Any failure of a model call that the caller should see."""


class ModelUnavailable(ModelError, StageCannotRun):
    """A backend cannot be used here (missing key, weights, server); the message says what to do. A
    :class:`~rag.core.errors.StageCannotRun`: the item loop stops the stage on it."""


def torchvision_hint() -> str:
    """" (...)" naming a broken torchvision when one is installed but does not import beside this torch,
    else "". Called only after a sentence-transformers load failed: transformers then reports a useless
    "Could not import module 'PreTrainedModel'" (PyPI's torchvision, pulled by `pip install docling`, next
    to the pinned CPU torch). Costs one subprocess import, so never on the success path."""
    if importlib.util.find_spec("torchvision") is None:
        return ""
    problem = torchvision_problem()
    return (f" ({problem}: run `pip uninstall -y torchvision` - the embedder and docling's native parser need "
            "none - or `make setup`, which removes it)") if problem else ""


# Seconds the torchvision import check may take (a cold import of torch + torchvision from disk).
_IMPORT_TIMEOUT_S = 300


@lru_cache(maxsize=4)
def torchvision_problem(python: str = sys.executable) -> str:
    """"" when torchvision imports beside torch in ``python`` (with its ops), else why not, in one line
    (rag.preflight and docling's full-pipeline check ask it; a subprocess, so torch is never imported here)."""
    if importlib.util.find_spec("torchvision") is None:
        return "torchvision is not installed (docling's TableFormer needs it)"
    code = "import torch, torchvision; from torchvision.ops import nms; print(torch.__version__, torchvision.__version__)"
    try:
        r = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=_IMPORT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"importing torchvision took over {_IMPORT_TIMEOUT_S}s"
    if r.returncode == 0:
        return ""
    lines = [ln.strip() for ln in (r.stderr or r.stdout).splitlines() if ln.strip()]
    return f"torchvision is installed but does not import beside this torch ({lines[-1][:200] if lines else r.returncode})"


class StructuredOutputError(ModelError):
    """The model's answer did not fit the schema, even after one repair call."""

    def __init__(self, message: str, raw: str):
        super().__init__(message)
        self.raw = raw


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0  # HTTP requests actually sent (0 for a cache hit)
    cached: bool = False
    cost_usd: float = 0.0
    seconds: float = 0.0
    restarts: int = 0  # local model server restarts this call needed (it had died)

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens,
                     self.requests + other.requests, self.cached and other.cached,
                     self.cost_usd + other.cost_usd, self.seconds + other.seconds, self.restarts + other.restarts)

    def as_dict(self) -> dict[str, Any]:
        d = {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
             "requests": self.requests, "cached": self.cached, "cost_usd": round(self.cost_usd, 6),
             "seconds": round(self.seconds, 3)}
        if self.restarts:  # only when it happened: records of normal runs keep their shape
            d["restarts"] = self.restarts
        return d


@dataclass
class LLMResult:
    value: Any  # validated pydantic instance when a schema was given, else str
    raw: str  # the model's text as received (before repair)
    model: str
    usage: Usage = field(default_factory=Usage)
    repaired: bool = False  # a repair call was needed to fit the schema
    # With params logprobs=True (+ top_logprobs=K): per generated token (token, [(alternative, logprob)...]),
    # natural-log probabilities as the server returns them; None when not asked or not returned.
    logprobs: list | None = None


class LLM(Protocol):
    model: str

    def complete(self, messages: Messages, schema: type[BaseModel] | None = None, **params: Any) -> LLMResult: ...

    def complete_many(self, requests: Sequence[dict[str, Any]]) -> list[LLMResult]: ...


class Embedder(Protocol):
    model_name: str
    dim: int

    # each=True: every text in its own model call, so its vector depends on the text alone (not on the batch).
    def embed(self, texts: Sequence[str], each: bool = False) -> np.ndarray: ...


class CrossEncoder(Protocol):
    model_name: str

    def score(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray: ...


class UsageMeter:
    """Thread-safe running totals of usage (one per LLM / embedder)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._total = Usage(cached=True)
        self.calls = 0
        self.cache_hits = 0

    def add(self, u: Usage) -> None:
        with self._lock:
            self._total = self._total + u
            self.calls += 1
            self.cache_hits += int(u.cached)

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            d = self._total.as_dict()
            d.pop("cached")
            d.update(calls=self.calls, cache_hits=self.cache_hits)
            return d

    def __getstate__(self) -> dict[str, Any]:  # picklable (a client sent to a worker process): no lock
        with self._lock:
            return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()


# ---- fakes for unit tests -------------------------------------------------------------------
class FakeLLM:
    """Deterministic stand-in: ``respond(messages, schema)`` returns a str or a dict for the schema.

    Counts calls; usage counts characters / 4 as tokens. Use for logic tests only.
    """

    def __init__(self, respond: Callable[[Messages, type[BaseModel] | None], Any], model: str = "fake-llm"):
        self.respond = respond
        self.model = model
        self.calls: list[tuple[Messages, type[BaseModel] | None]] = []
        self.meter = UsageMeter()

    def complete(self, messages: Messages, schema: type[BaseModel] | None = None, **params: Any) -> LLMResult:
        self.calls.append((messages, schema))
        out = self.respond(messages, schema)
        raw = out if isinstance(out, str) else json.dumps(out)
        value: Any = raw
        if schema is not None:
            value = schema.model_validate(out if isinstance(out, dict) else json.loads(raw))
        prompt = sum(len(m["content"]) for m in messages) // 4
        usage = Usage(prompt_tokens=prompt, completion_tokens=len(raw) // 4, requests=1)
        self.meter.add(usage)
        return LLMResult(value=value, raw=raw, model=self.model, usage=usage)

    def complete_many(self, requests: Sequence[dict[str, Any]]) -> list[LLMResult]:
        return [self.complete(**r) for r in requests]


class HashEmbedder:
    """Bag-of-words hashing embedder (no weights): for unit tests of retrieval logic."""

    def __init__(self, dim: int = 256, model_name: str = "hash-bow"):
        self.dim = dim
        self.model_name = model_name

    def embed(self, texts: Sequence[str], each: bool = False) -> np.ndarray:  # each: a text alone anyway
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"\w+", t.lower()):
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)
