"""Text embedders' common part: the disk cache, batching and ``long_text`` windows of the local
sentence-transformers embedder (:mod:`rag.models.embed_local`, torch; :mod:`rag.models.embed_onnx`, ONNX Runtime)
and of the OpenAI embeddings protocol (:mod:`rag.models.embed_openai`); query / passage prefixes.

Contract (see ``base.Embedder``): ``embed(texts) -> float32 (n, dim)``, rows L2-normalized so the inner
product is the cosine similarity (higher = more similar).
- Which model: ``local`` loads ``cfg.embed.model`` as a packaged model (the offline MiniLM), a
  sentence-transformers model folder by path, or, with ``cfg.embed.hub``, a model hub name (the only case
  that may reach a hub). ``openai`` calls ``/v1/embeddings`` of OpenAI or, with ``cfg.embed.base_url``, of
  any compatible server (Ollama, vLLM, llama.cpp); with a base_url no API key is needed.
- Long text (over ``cfg.embed.max_input_tokens``, in the model's own tokens: wordpieces incl. [CLS]/[SEP]
  for local, cl100k for openai): ``long_text="truncate"`` embeds its head only; ``"mean"`` embeds
  overlapping windows of that length (``long_text_overlap`` tokens shared, the last window ends at the
  text's end) and returns the renormalized mean of the windows' unit vectors. Text that fits is one
  window: its vector is the truncate vector.
- ``local`` with ``cfg.embed.runtime`` "onnx" / "onnx-int8" runs the same model in ONNX Runtime
  (:mod:`rag.models.embed_onnx`, chosen by :mod:`rag.models.embedders`: same tokenizer, windows, pooling and normalization; faster on CPU).
- With ``cfg.embed.cache`` each vector is stored under ``<cache_dir>/embeddings.sqlite`` keyed by
  (backend, model, input limit, text) (+ ``("mean", overlap)`` in mean mode, + ``("runtime", name)`` for an
  ONNX runtime), so re-embedding unchanged
  text loads no model and sends no request. A vector read back is checked (length, finite, unit norm; the
  cache adds a CRC): a damaged one is dropped and embedded again (:mod:`rag.models.cache`).
  ``embedder.meter`` counts batches sent (``requests``), tokens
  (openai) and cache hits (one call per text).
"""
from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from .base import Usage, UsageMeter
from .cache import DiskCache
from .cache_rows import make_key

# Output dimension of known models (so a fully cached run needs no model load to know it).
KNOWN_DIMS = {"all-MiniLM-L6-v2": 384, "text-embedding-3-large": 3072, "text-embedding-3-small": 1536}
# USD per 1M input tokens (for Usage.cost_usd; unknown models cost 0).
EMBED_PRICES = {"text-embedding-3-large": 0.13, "text-embedding-3-small": 0.02}


# Query / passage markers a model family was trained with (matched on the model name, lower case).
_BGE_QUERY = "Represent this sentence for searching relevant passages: "
PREFIXES: tuple[tuple[str, tuple[str, str]], ...] = (
    ("e5-", ("query: ", "passage: ")),          # intfloat/e5-*, multilingual-e5-*
    ("bge-", (_BGE_QUERY, "")),                 # BAAI/bge-*-en(-v1.5): instruction on queries only
)
_MULTILINGUAL_BGE = ("bge-m3", "bge-multilingual")  # no instruction


def default_prefixes(model: str) -> tuple[str, str]:
    """(query prefix, passage prefix) a model is used with, from its name; ("", "") when none is known."""
    name = model.lower().replace("\\", "/").rstrip("/").split("/")[-1]
    if any(m in name for m in _MULTILINGUAL_BGE):
        return "", ""
    for key, pair in PREFIXES:
        if key in name:
            return pair
    return "", ""


def prefixes(embed_cfg) -> tuple[str, str]:
    """The configured (query, passage) prefixes, "auto" resolved from the model name."""
    q, p = default_prefixes(embed_cfg.model)
    return (q if embed_cfg.query_prefix == "auto" else embed_cfg.query_prefix,
            p if embed_cfg.passage_prefix == "auto" else embed_cfg.passage_prefix)


def _normalize(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(norms == 0, 1, norms)


def window_spans(n: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """``[start, end)`` spans of at most ``size`` covering ``range(n)``; consecutive spans share at least
    ``overlap`` items and the last one ends at ``n`` (so every window but a short text's one is full)."""
    if n <= size:
        return [(0, n)]
    step = max(1, size - overlap)
    spans, start = [], 0
    while start + size < n:
        spans.append((start, start + size))
        start += step
    spans.append((n - size, n))
    return spans


class _CachedEmbedder:
    """Cache + batching around ``_embed_batch`` (implemented by the backends)."""

    backend = "?"
    # Extra cache-key parts of a backend variant (the ONNX runtimes: ("runtime", name)); () for the default.
    key_extra: tuple = ()

    def __init__(self, model_name: str, batch_size: int, max_input_tokens: int, cache: DiskCache | None,
                 long_text: str = "truncate", long_text_overlap: int = 32):
        self.model_name = model_name
        self.batch_size = batch_size
        self.max_input_tokens = max_input_tokens
        self.long_text = long_text
        self.long_text_overlap = long_text_overlap
        self.cache = cache
        self.meter = UsageMeter()
        self._dim = KNOWN_DIMS.get(model_name)

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self._embed_batch(["dimension probe"])[0].shape[-1])
        return self._dim

    def _key(self, text: str, each: bool = False) -> str:
        mode = ("mean", self.long_text_overlap) if self.long_text == "mean" else ()
        alone = ("each",) if each else ()  # vectors computed one text per call never mix with batched ones
        return make_key("embed", self.backend, self.model_name, self.max_input_tokens, *mode, *self.key_extra,
                        *alone, text)

    def _check_vector(self, value: bytes) -> None:
        """A cached vector read back: float32, this model's dimension when known, finite, unit length (or 0,
        what _normalize leaves of a zero vector); raises ValueError naming what is wrong (the row is dropped)."""
        if not value or len(value) % 4:
            raise ValueError(f"{len(value)} bytes is no float32 vector")
        if self._dim is not None and len(value) != 4 * self._dim:
            raise ValueError(f"{len(value) // 4} values, the model gives {self._dim}")
        v = np.frombuffer(value, dtype=np.float32)
        if not np.isfinite(v).all():
            raise ValueError("not finite")
        norm = float(np.linalg.norm(v))
        if norm != 0.0 and abs(norm - 1.0) > 1e-3:
            raise ValueError(f"norm {norm:.4g}, stored vectors have norm 1")

    @property
    def call_size(self) -> int:
        """Texts handed to one ``_embed_batch`` call (the ONNX runtime takes several batches to sort by length)."""
        return self.batch_size

    def embed(self, texts: Sequence[str], each: bool = False) -> np.ndarray:
        """Vectors of ``texts`` (n, dim), L2-normalized. Batched (``call_size`` texts per model call, padded to
        the longest) unless ``each``: then every text is its own model call, without padding, so its vector is
        a function of the text alone, bit for bit, whichever texts it is asked with (stage 05's on-demand pools,
        whose composition depends on the question; on 2 CPU cores no slower than batches of 32)."""
        texts = [str(t) for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        keys = [self._key(t, each) for t in texts]
        hits = self.cache.get_many(keys, self._check_vector) if self.cache is not None else {}
        out: list[np.ndarray | None] = [None] * len(texts)
        for i, k in enumerate(keys):
            if k in hits:
                out[i] = np.frombuffer(hits[k], dtype=np.float32)
        todo = list(dict.fromkeys(texts[i] for i in range(len(texts)) if out[i] is None))
        fresh: dict[str, np.ndarray] = {}
        step = 1 if each else self.call_size
        for s in range(0, len(todo), step):
            batch = todo[s:s + step]
            t0 = time.time()
            vecs, tokens = self._embed_batch(batch)
            vecs = _normalize(vecs)
            self._dim = vecs.shape[1]
            fresh.update(zip(batch, vecs))
            cost = tokens * EMBED_PRICES.get(self.model_name, 0.0) / 1e6
            self.meter.add(Usage(prompt_tokens=tokens, requests=1, cost_usd=cost, seconds=time.time() - t0))
            if self.cache is not None:
                self.cache.put_many((self._key(t, each), v.astype(np.float32).tobytes()) for t, v in zip(batch, vecs))
        for i, t in enumerate(texts):
            if out[i] is None:
                out[i] = fresh[t]
        for _ in range(len(texts) - len(todo)):
            self.meter.add(Usage(cached=True))
        return np.vstack(out).astype(np.float32, copy=False)

    def _embed_batch(self, texts: list[str]) -> tuple[np.ndarray, int]:  # vectors, tokens billed
        if self.long_text != "mean":
            return self._embed_texts(texts)
        pieces: list = []
        owner: list[int] = []
        for i, t in enumerate(texts):
            w = self._windows(t)
            pieces.extend(w)
            owner.extend([i] * len(w))
        vecs, tokens = self._embed_pieces(pieces)
        vecs = _normalize(vecs)
        out = np.zeros((len(texts), vecs.shape[1]), dtype=np.float64)
        np.add.at(out, np.asarray(owner), vecs)
        return _normalize(out), tokens

    def windows_per_text(self, text: str) -> int:
        """How many windows ``long_text="mean"`` embeds for ``text`` (1: it fits the input limit)."""
        return len(self._windows(text))

    # Backends: whole texts (truncated by the model), a text's windows, and a list of windows.
    def _embed_texts(self, texts: list[str]) -> tuple[np.ndarray, int]:
        raise NotImplementedError

    def _windows(self, text: str) -> list:
        raise NotImplementedError

    def _embed_pieces(self, pieces: list) -> tuple[np.ndarray, int]:
        raise NotImplementedError
