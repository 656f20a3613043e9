"""The local embedder: a sentence-transformers model run by torch in this process (``embed.backend = "local"``,
``embed.runtime = "torch"``); :mod:`rag.models.embed_onnx` runs the same model in ONNX Runtime on top of it.

Contract (see :mod:`rag.models.embed` for the cache, batching and ``long_text`` windows it inherits):
- ``embed.model`` is a packaged model (the offline MiniLM), a sentence-transformers model folder by path, or,
  with ``hub=True``, a model hub name (the only case that may reach a hub): :func:`_local_source`.
- ``precision`` (``embed.precision``, resolved by :func:`rag.models.device.embed_precision`): "bfloat16" casts
  the weights after loading (the vectors come back float32) and puts ``("precision", "bfloat16")`` in every
  cache key; "float32" (the constructor's default) keeps the keys of before the setting existed.
- Every model call runs ``threads`` intra-op threads (0: the cores this process may use,
  :func:`default_threads`), set and restored under the embedder's lock.
"""
from __future__ import annotations

import os
import threading

import numpy as np

from .base import ModelUnavailable, torchvision_hint
from .cache import DiskCache
from .device import embed_precision, model_device
from .embed import _CachedEmbedder, window_spans


def _local_source(name: str, hub: bool) -> str:
    """What ``SentenceTransformer`` loads for ``embed.model``: a folder path, or the hub name itself."""
    from .weights import EMBEDDING_PACKAGES, WeightsError, embedding_folder, embedding_model_path

    if name in EMBEDDING_PACKAGES:
        try:
            return str(embedding_model_path(name))
        except WeightsError as e:
            raise ModelUnavailable(str(e)) from e
    folder = embedding_folder(name)
    if folder is not None:
        return str(folder)
    if hub:
        return name
    raise ModelUnavailable(f"embed.model={name!r} is neither a packaged model ({', '.join(EMBEDDING_PACKAGES)}) nor "
                           "a sentence-transformers model folder; a model hub name loads with embed.hub=true")


def default_threads() -> int:
    """Cores this process may use (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def quiet_weight_loading() -> None:
    """No "Loading weights: 0%..0/103" bar from transformers (it went to the console of every ``rag ask``,
    ``--quiet`` included); transformers' own switch, so its warnings and errors still show."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()


class LocalEmbedder(_CachedEmbedder):
    """sentence-transformers model: a packaged one (``rag.models.weights.EMBEDDING_PACKAGES``), a folder, or
    (``hub=True``) a model hub name."""

    backend = "local"
    # One model call gets this many batches' worth of texts, which it sorts by length (sentence-transformers
    # by characters, the ONNX runtime by wordpieces), so a batch pads little: erc2-dev's 300-token chunks
    # padded in input order cost 1.31x their wordpieces, sorted per call of 1,024 texts 1.06x.
    sort_window = 16

    def __init__(self, model_name: str, batch_size: int, max_input_tokens: int, cache: DiskCache | None,
                 long_text: str = "truncate", long_text_overlap: int = 32, hub: bool = False, threads: int = 0,
                 precision: str = "float32"):
        super().__init__(model_name, batch_size, max_input_tokens, cache, long_text, long_text_overlap)
        self.hub = hub
        # The weights' dtype in every model call ("auto" resolved here, for the device the model will load on):
        # bfloat16 vectors sit at cosine ~0.9999 to float32's, so they are cached apart (key_extra).
        self.precision = embed_precision(precision, model_device)
        self.key_extra = ("precision", "bfloat16") if self.precision == "bfloat16" else ()
        # Intra-op threads of every model call (0: the cores this process may use). Set, not inherited: a Ray
        # worker's OMP_NUM_THREADS=1 would give torch 1 thread where the driver has 2, and on AVX-512 CPUs
        # torch's vectors differ in their last bit between 1 and 2 threads (a 05 record then differs).
        self.threads = threads or default_threads()
        self._model = None
        self._specials: tuple[list[int], list[int]] | None = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._model is None:
                if not self.hub:
                    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach a model hub
                    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                source = _local_source(self.model_name, self.hub)
                try:  # the import too: a broken torchvision fails it (inside transformers)
                    from sentence_transformers import SentenceTransformer

                    quiet_weight_loading()
                    m = SentenceTransformer(source, device=model_device())
                except Exception as e:  # noqa: BLE001 - any load failure is "this model is not available"
                    offline = " (HF_HUB_OFFLINE=1 in this process: only a copy in the hub cache loads)" \
                        if os.environ.get("HF_HUB_OFFLINE") == "1" else ""
                    raise ModelUnavailable(f"embed.model={self.model_name!r}: sentence-transformers could not "
                                           f"load {source!r}{offline}: {str(e)[:500]}{torchvision_hint()}") from e
                # Truncate to the smaller of the model's own limit and the configured one (wordpieces).
                m.max_seq_length = min(m.max_seq_length or self.max_input_tokens, self.max_input_tokens)
                if self.precision == "bfloat16":
                    import torch

                    m.to(torch.bfloat16)  # sentence-transformers hands the vectors back as float32
                self._model = m
        return self._model

    @property
    def call_size(self) -> int:
        return self.batch_size * self.sort_window

    @property
    def tokenizer(self):
        """The model's tokenizer (loads the model)."""
        return self._load().tokenizer

    def _embed_texts(self, texts: list[str]) -> tuple[np.ndarray, int]:
        import torch

        m = self._load()
        with self._lock:  # torch already uses every core; parallel encode calls only thrash
            before = torch.get_num_threads()
            torch.set_num_threads(self.threads)  # process-wide in torch: restored right after
            try:
                v = m.encode(texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
                             show_progress_bar=False)
            finally:
                torch.set_num_threads(before)
        return np.asarray(v, dtype=np.float32).reshape(len(texts), -1), 0

    def _special_ids(self) -> tuple[list[int], list[int]]:
        """Token ids the tokenizer puts before and after a text ([CLS] / [SEP] for BERT)."""
        if self._specials is None:
            tok = self.tokenizer
            full = list(tok("probe")["input_ids"])
            body = list(tok("probe", add_special_tokens=False)["input_ids"])
            k = next((i for i in range(len(full) - len(body) + 1) if full[i:i + len(body)] == body), None)
            if k is None:
                raise ModelUnavailable(f"embed.long_text=mean: cannot tell the special tokens of {self.model_name!r}")
            self._specials = (full[:k], full[k + len(body):])
        return self._specials

    def _windows(self, text: str) -> list[list[int]]:
        m = self._load()
        pre, post = self._special_ids()
        size = max(1, m.max_seq_length - len(pre) - len(post))
        ids = list(m.tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])
        overlap = min(self.long_text_overlap, size // 2)
        return [pre + ids[a:b] + post for a, b in window_spans(len(ids), size, overlap)]

    def _embed_pieces(self, pieces: list[list[int]]) -> tuple[np.ndarray, int]:
        import torch

        m = self._load()
        tok = m.tokenizer
        out = []
        with self._lock, torch.inference_mode():
            for s in range(0, len(pieces), self.batch_size):
                feats = dict(tok.pad({"input_ids": pieces[s:s + self.batch_size]}, return_tensors="pt"))
                if "token_type_ids" in getattr(tok, "model_input_names", ()) and "token_type_ids" not in feats:
                    feats["token_type_ids"] = torch.zeros_like(feats["input_ids"])
                # tok.pad builds CPU tensors; the model may sit on CUDA (issue 32: "index is on cpu")
                feats = {k: v.to(m.device) for k, v in feats.items()}
                out.append(m.forward(feats)["sentence_embedding"].float().cpu().numpy())
        return np.vstack(out), 0
