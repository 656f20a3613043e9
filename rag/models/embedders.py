"""The embedder registry: one instance per distinct ``cfg.embed`` (+ cache folder), shared across threads.

Contract: ``get_embedder(cfg)`` -> a :class:`rag.models.embed_local.LocalEmbedder` (torch), an
:class:`rag.models.embed_onnx.OnnxEmbedder` (``embed.runtime`` onnx / onnx-int8) or an
:class:`rag.models.embed_openai.OpenAIEmbedder`; all disk-cached. Its own module so that ``embed`` and
``embed_onnx`` / ``embed_openai`` (which build on ``embed``) sit below it without importing each other both ways.
"""
from __future__ import annotations

import threading

from .base import ModelUnavailable
from .cache import DiskCache
from .embed import _CachedEmbedder
from .embed_local import LocalEmbedder
from .embed_openai import OpenAIEmbedder

_REGISTRY: dict[tuple, _CachedEmbedder] = {}
_REG_LOCK = threading.Lock()


def get_embedder(cfg) -> _CachedEmbedder:
    """The embedder for ``cfg.embed`` (one instance per distinct config, shared across threads)."""
    e = cfg.embed
    key = (e.model_dump_json(), str(cfg.path("cache_dir")))
    with _REG_LOCK:
        if key not in _REGISTRY:
            cache = DiskCache(cfg.path("cache_dir") / "embeddings.sqlite") if e.cache else None
            if e.backend == "local" and e.runtime != "torch":
                from .embed_onnx import OnnxEmbedder  # imports onnxruntime: only when asked

                _REGISTRY[key] = OnnxEmbedder(e.model, e.batch_size, e.max_input_tokens, cache, e.long_text,
                                              e.long_text_overlap, e.hub, runtime=e.runtime,
                                              models_dir=cfg.path("models_dir"), threads=e.threads)
            elif e.backend == "local":
                _REGISTRY[key] = LocalEmbedder(e.model, e.batch_size, e.max_input_tokens, cache,
                                               e.long_text, e.long_text_overlap, e.hub, threads=e.threads,
                                               precision=e.precision)
            elif e.backend == "openai":
                _REGISTRY[key] = OpenAIEmbedder(cfg, cache)
            else:  # pragma: no cover - config validation forbids it
                raise ModelUnavailable(f"unknown embed.backend {e.backend!r}")
        return _REGISTRY[key]
