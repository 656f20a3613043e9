"""Text embeddings over the OpenAI embeddings protocol (``embed.backend = "openai"``): OpenAI itself or any
``/v1/embeddings`` server at ``embed.base_url`` (Ollama, vLLM, llama.cpp; no API key needed then).

Contract: as :mod:`rag.models.embed` (the cache, windows and normalisation of ``_CachedEmbedder``); input is cut
to ``embed.max_input_tokens`` cl100k tokens (or windows of them). A missing key, an unreachable server or an
unknown model raises ``ModelUnavailable`` naming the server.
"""
from __future__ import annotations

import os

import numpy as np

from .base import ModelUnavailable
from .cache import DiskCache
from .embed import _CachedEmbedder, window_spans


class OpenAIEmbedder(_CachedEmbedder):
    """OpenAI embeddings protocol (``text-embedding-3-large``, or any model of an OpenAI-compatible server at
    ``embed.base_url``); input cut to ``max_input_tokens`` cl100k tokens (or windows of them)."""

    backend = "openai"

    def __init__(self, cfg, cache: DiskCache | None):
        e = cfg.embed
        super().__init__(e.model, e.batch_size, e.max_input_tokens, cache, e.long_text, e.long_text_overlap)
        self.cfg = cfg
        self.base_url = e.base_url
        self._client = None

    def _client_(self):
        if self._client is None:
            key = os.environ.get(self.cfg.embed.api_key_env)
            if not key and not self.base_url:
                raise ModelUnavailable(f"embed.backend=openai needs an API key in ${self.cfg.embed.api_key_env} "
                                       "(export it, set embed.base_url to a local server, or use the offline preset)")
            from openai import OpenAI

            self._client = OpenAI(api_key=key or "not-needed", base_url=self.base_url, timeout=self.cfg.llm.timeout_s,
                                  max_retries=self.cfg.llm.max_retries)
        return self._client

    def _ids(self, text: str) -> tuple[object, list[int]]:
        from .tokens import get_encoding

        enc = get_encoding(self.cfg)
        return enc, enc.encode(text, disallowed_special=())

    def _embed_texts(self, texts: list[str]) -> tuple[np.ndarray, int]:
        cut = []
        for t in texts:
            enc, ids = self._ids(t)
            cut.append(enc.decode(ids[:self.max_input_tokens]) if len(ids) > self.max_input_tokens else t)
        return self._embed_pieces(cut)

    def _windows(self, text: str) -> list[str]:
        enc, ids = self._ids(text)
        overlap = min(self.long_text_overlap, self.max_input_tokens // 2)
        spans = window_spans(len(ids), self.max_input_tokens, overlap)
        return [text] if len(spans) == 1 else [enc.decode(ids[a:b]) for a, b in spans]

    def _embed_pieces(self, pieces: list[str]) -> tuple[np.ndarray, int]:
        try:
            resp = self._client_().embeddings.create(model=self.model_name, input=pieces)
        except ModelUnavailable:
            raise
        except Exception as e:  # noqa: BLE001 - connection / HTTP errors: name the server
            import openai

            if isinstance(e, (openai.APIConnectionError, openai.APITimeoutError, openai.AuthenticationError,
                              openai.NotFoundError)):
                where = self.base_url or "api.openai.com"
                raise ModelUnavailable(f"embed model {self.model_name!r} at {where}: {str(e)[:300]}") from e
            raise
        vecs = np.array([d.embedding for d in sorted(resp.data, key=lambda d: d.index)], dtype=np.float32)
        return vecs, int(getattr(resp.usage, "prompt_tokens", 0) or 0)
