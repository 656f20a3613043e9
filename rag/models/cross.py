"""Cross-encoder rerankers (sentence-transformers ``CrossEncoder``) for users who have the weights.

Contract: ``get_cross_encoder(cfg, name)`` loads ``name`` (a local folder, or a hub id already in the
local Hugging Face cache) on CPU, offline (``HF_HUB_OFFLINE=1``: nothing is downloaded at run time), once
per name. ``score(pairs)`` returns float32 relevance scores, higher = more relevant (raw model logits; not
comparable across models). Absent weights raise ``ModelUnavailable`` saying how to get them.
"""
from __future__ import annotations

import os
import threading
from typing import Sequence

import numpy as np

from .base import ModelUnavailable, torchvision_hint

_REGISTRY: dict[tuple, "STCrossEncoder"] = {}
_LOCK = threading.Lock()


class STCrossEncoder:
    def __init__(self, name: str, model, batch_size: int):
        self.model_name = name
        self._model = model
        self.batch_size = batch_size
        self._lock = threading.Lock()

    def score(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        pairs = [(str(q), str(p)) for q, p in pairs]
        if not pairs:
            return np.zeros((0,), dtype=np.float32)
        with self._lock:
            s = self._model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False, convert_to_numpy=True)
        return np.asarray(s, dtype=np.float32).reshape(len(pairs), -1)[:, -1]


def get_cross_encoder(cfg, name: str) -> STCrossEncoder:
    from .device import model_device

    device = model_device(cfg)
    key = (name, cfg.embed.batch_size, device)  # one model per device: a cuda run never gets a cpu copy
    with _LOCK:
        if key in _REGISTRY:
            return _REGISTRY[key]
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            from sentence_transformers import CrossEncoder
        except ImportError as e:
            raise ModelUnavailable("sentence-transformers does not import: run `make setup`"
                                   + torchvision_hint()) from e
        try:
            model = CrossEncoder(name, device=device)
        except Exception as e:  # noqa: BLE001 - missing files surface as OSError/ValueError/HF errors
            raise ModelUnavailable(
                f"cross-encoder {name!r}: weights not found locally ({type(e).__name__}: {str(e)[:300]})"
                f"{torchvision_hint()}. "
                "No model hub is reachable here: download it where you have internet "
                f"(e.g. `huggingface-cli download {name}`) and point rerank.cross_encoder_models at the folder, "
                "or use rerank.mode='llm'") from e
        _REGISTRY[key] = STCrossEncoder(name, model, cfg.embed.batch_size)
        return _REGISTRY[key]
