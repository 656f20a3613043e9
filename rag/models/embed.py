"""Text embedders: local sentence-transformers (offline MiniLM package) and OpenAI, with a disk cache.

Contract (see ``base.Embedder``): ``embed(texts) -> float32 (n, dim)``, rows L2-normalized so the inner
product is the cosine similarity (higher = more similar). Text longer than the model's input limit
(``cfg.embed.max_input_tokens``, in the model's own tokens) is truncated. With ``cfg.embed.cache`` each
vector is stored under ``<cache_dir>/embeddings.sqlite`` keyed by (backend, model, input limit, text), so
re-embedding unchanged text loads no model and sends no request. ``embedder.meter`` counts batches sent
(``requests``), tokens (openai) and cache hits (one call per text).
"""
from __future__ import annotations

import os
import threading
import time
from typing import Sequence

import numpy as np

from .base import ModelUnavailable, Usage, UsageMeter
from .cache import DiskCache, make_key

# Output dimension of known models (so a fully cached run needs no model load to know it).
KNOWN_DIMS = {"all-MiniLM-L6-v2": 384, "text-embedding-3-large": 3072, "text-embedding-3-small": 1536}
# USD per 1M input tokens (for Usage.cost_usd; unknown models cost 0).
EMBED_PRICES = {"text-embedding-3-large": 0.13, "text-embedding-3-small": 0.02}


def _normalize(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(norms == 0, 1, norms)


class _CachedEmbedder:
    """Cache + batching around ``_embed_batch`` (implemented by the backends)."""

    backend = "?"

    def __init__(self, model_name: str, batch_size: int, max_input_tokens: int, cache: DiskCache | None):
        self.model_name = model_name
        self.batch_size = batch_size
        self.max_input_tokens = max_input_tokens
        self.cache = cache
        self.meter = UsageMeter()
        self._dim = KNOWN_DIMS.get(model_name)

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self._embed_batch(["dimension probe"])[0].shape[-1])
        return self._dim

    def _key(self, text: str) -> str:
        return make_key("embed", self.backend, self.model_name, self.max_input_tokens, text)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = [str(t) for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        keys = [self._key(t) for t in texts]
        hits = self.cache.get_many(keys) if self.cache is not None else {}
        out: list[np.ndarray | None] = [None] * len(texts)
        for i, k in enumerate(keys):
            if k in hits:
                out[i] = np.frombuffer(hits[k], dtype=np.float32)
        todo = list(dict.fromkeys(texts[i] for i in range(len(texts)) if out[i] is None))
        fresh: dict[str, np.ndarray] = {}
        for s in range(0, len(todo), self.batch_size):
            batch = todo[s:s + self.batch_size]
            t0 = time.time()
            vecs, tokens = self._embed_batch(batch)
            vecs = _normalize(vecs)
            self._dim = vecs.shape[1]
            fresh.update(zip(batch, vecs))
            cost = tokens * EMBED_PRICES.get(self.model_name, 0.0) / 1e6
            self.meter.add(Usage(prompt_tokens=tokens, requests=1, cost_usd=cost, seconds=time.time() - t0))
            if self.cache is not None:
                self.cache.put_many((self._key(t), v.astype(np.float32).tobytes()) for t, v in zip(batch, vecs))
        for i, t in enumerate(texts):
            if out[i] is None:
                out[i] = fresh[t]
        for _ in range(len(texts) - len(todo)):
            self.meter.add(Usage(cached=True))
        return np.vstack(out).astype(np.float32, copy=False)

    def _embed_batch(self, texts: list[str]) -> tuple[np.ndarray, int]:  # vectors, tokens billed
        raise NotImplementedError


class LocalEmbedder(_CachedEmbedder):
    """sentence-transformers model from an offline package (``rag.models.weights.EMBEDDING_PACKAGES``)."""

    backend = "local"

    def __init__(self, model_name: str, batch_size: int, max_input_tokens: int, cache: DiskCache | None):
        super().__init__(model_name, batch_size, max_input_tokens, cache)
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._model is None:
                from .weights import WeightsError, embedding_model_path

                os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach a model hub
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                try:
                    path = embedding_model_path(self.model_name)
                except WeightsError as e:
                    raise ModelUnavailable(str(e)) from e
                from sentence_transformers import SentenceTransformer

                m = SentenceTransformer(str(path), device=__import__("rag.models.device", fromlist=["model_device"]).model_device())
                # Truncate to the smaller of the model's own limit and the configured one (wordpieces).
                m.max_seq_length = min(m.max_seq_length or self.max_input_tokens, self.max_input_tokens)
                self._model = m
        return self._model

    def _embed_batch(self, texts: list[str]) -> tuple[np.ndarray, int]:
        m = self._load()
        with self._lock:  # torch already uses every core; parallel encode calls only thrash
            v = m.encode(texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
                         show_progress_bar=False)
        return np.asarray(v, dtype=np.float32).reshape(len(texts), -1), 0


class OpenAIEmbedder(_CachedEmbedder):
    """OpenAI embeddings API (``text-embedding-3-large``); input truncated to ``max_input_tokens`` cl100k."""

    backend = "openai"

    def __init__(self, cfg, cache: DiskCache | None):
        super().__init__(cfg.embed.model, cfg.embed.batch_size, cfg.embed.max_input_tokens, cache)
        self.cfg = cfg
        self._client = None

    def _client_(self):
        if self._client is None:
            key = os.environ.get(self.cfg.embed.api_key_env)
            if not key:
                raise ModelUnavailable(f"embed.backend=openai needs an API key in ${self.cfg.embed.api_key_env} "
                                       "(export it, or use the offline preset)")
            from openai import OpenAI

            self._client = OpenAI(api_key=key, timeout=self.cfg.llm.timeout_s, max_retries=self.cfg.llm.max_retries)
        return self._client

    def _embed_batch(self, texts: list[str]) -> tuple[np.ndarray, int]:
        from .tokens import get_encoding

        enc = get_encoding(self.cfg)
        cut = []
        for t in texts:
            ids = enc.encode(t, disallowed_special=())
            cut.append(enc.decode(ids[:self.max_input_tokens]) if len(ids) > self.max_input_tokens else t)
        resp = self._client_().embeddings.create(model=self.model_name, input=cut)
        vecs = np.array([d.embedding for d in sorted(resp.data, key=lambda d: d.index)], dtype=np.float32)
        return vecs, int(getattr(resp.usage, "prompt_tokens", 0) or 0)


_REGISTRY: dict[tuple, _CachedEmbedder] = {}
_REG_LOCK = threading.Lock()


def get_embedder(cfg) -> _CachedEmbedder:
    """The embedder for ``cfg.embed`` (one instance per distinct config, shared across threads)."""
    e = cfg.embed
    key = (e.backend, e.model, e.batch_size, e.max_input_tokens, e.cache, str(cfg.path("cache_dir")))
    with _REG_LOCK:
        if key not in _REGISTRY:
            cache = DiskCache(cfg.path("cache_dir") / "embeddings.sqlite") if e.cache else None
            if e.backend == "local":
                _REGISTRY[key] = LocalEmbedder(e.model, e.batch_size, e.max_input_tokens, cache)
            elif e.backend == "openai":
                _REGISTRY[key] = OpenAIEmbedder(cfg, cache)
            else:  # pragma: no cover - config validation forbids it
                raise ModelUnavailable(f"unknown embed.backend {e.backend!r}")
        return _REGISTRY[key]
