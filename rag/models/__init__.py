"""Model layer: every LLM, embedding and cross-encoder call of the pipeline goes through here (contracts in
``base.py``). Two local models are called directly by their stages instead: docling (stage 01,
:mod:`rag.parse.docling_pages`) and RapidOCR (stage 02, :mod:`rag.clean.ocr`); they take their device from
:mod:`rag.models.device` like the models here.

- ``get_llm(cfg) -> LLM``: one client per ``cfg.llm`` section (the llama_cpp backend starts a local
  server on first use and stops it at exit / ``shutdown_all()``).
- ``get_embedder(cfg) -> Embedder``: L2-normalized float32 vectors, disk-cached.
- Local models (embedder, cross-encoder, docling, OCR, llama.cpp / vLLM servers) run on ``cfg.device``,
  resolved by :mod:`rag.models.device`.
- ``get_cross_encoder(cfg, name) -> CrossEncoder``: ``ModelUnavailable`` when its weights are absent.
- ``server_notes(llm) -> dict``: what a client's local server said about itself (06's manifest records it).
- ``get_encoding(cfg)`` / ``count_tokens(text, cfg)``: offline tiktoken (cl100k_base).
Importing this package is cheap: torch, sentence-transformers and openai load on first use.
"""
from __future__ import annotations

from .base import (LLM, CrossEncoder, Embedder, FakeLLM, HashEmbedder, LLMResult, ModelError, ModelUnavailable,
                   StructuredOutputError, Usage, UsageMeter)
from .tokens import count_tokens, get_encoding
from . import ray_budget as _ray_budget  # noqa: F401,E402 - registers the Ray driver's LLM budget hook


def get_embedder(cfg) -> Embedder:
    """The embedder for ``cfg.embed`` (one per distinct config); local models run on ``cfg.device``."""
    from .device import configure
    from .embedders import get_embedder as _get

    configure(cfg)  # the local embedder reads the process's device setting when it loads its model
    return _get(cfg)


def get_llm(cfg) -> LLM:
    """The LLM client for ``cfg.llm`` (built once per distinct llm section; thread-safe)."""
    from .llm import get_llm as _get

    return _get(cfg)


def server_notes(llm) -> dict[str, str]:
    """What the local server behind ``llm`` said about itself, for a stage manifest: a llama.cpp server's
    ``logits_patch`` ("installed" / "refused (version X)", :mod:`rag.models.llama_logits`); {} for a client
    without a server (remote backends, fakes) or before its server started."""
    try:
        return dict(getattr(getattr(llm, "server", None), "notes", None) or {})
    except Exception:  # noqa: BLE001 - a manifest note never fails a stage (a test double may refuse attributes)
        return {}


def get_cross_encoder(cfg, name: str) -> CrossEncoder:
    """A sentence-transformers CrossEncoder named ``name`` (local folder or cached hub id)."""
    from .cross import get_cross_encoder as _get

    return _get(cfg, name)


def shutdown_all() -> None:
    """Stop every local model server this process started (also done automatically at exit)."""
    from .llm import shutdown_all as _stop

    _stop()


__all__ = ["get_llm", "get_embedder", "get_cross_encoder", "get_encoding", "count_tokens", "shutdown_all",
           "LLM", "Embedder", "CrossEncoder", "LLMResult", "Usage", "UsageMeter", "ModelError", "ModelUnavailable",
           "StructuredOutputError", "FakeLLM", "HashEmbedder"]
