"""Stage 04's folder as the later stages see it: file names, the embed config its metas record, and the
readers (``load_report_index``, ``index_files``, ``load_index_info``). ``rag.index`` (the stage that writes
the folder) re-exports every name here; its docstring states the contract.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..chunk import chunk_file, chunk_path, load_chunks
from ..core import deps, stages
from ..core.artifacts import read_json, stage_dir
from ..core.config import RunConfig
from ..core.records import Chunk, IndexInfo
from .bm25 import bm25_tokens

STAGE = stages.name_of("index")  # this package's folder, from the registry (rag.core.stages)
# Embed-config fields that change the vectors (batch size changes only speed); those of
# deps.OMIT_WHEN_DEFAULT / UNUSED_WHEN (embed.hub, embed.long_text, ...) join only when they change the vectors,
# so the metas of indexes built before they existed still match.
_EMBED_KEYS = ("backend", "model", "max_input_tokens")


class IndexMismatch(RuntimeError):
    """The index on disk was built with another embedding model than the one asked for."""


def embed_config(cfg: RunConfig) -> dict[str, Any]:
    """The embed settings that change the vectors (index metas and keys). Prefixes enter resolved, and only
    when one is non-empty, so a MiniLM index from before the prefix settings keeps its key."""
    from ..models.embed import prefixes

    e = cfg.embed.model_dump(mode="json")
    later = (*deps.OMIT_WHEN_DEFAULT["embed"], *deps.UNUSED_WHEN["embed"])
    omitted = deps.omitted_fields(cfg, "embed")
    out = {k: e[k] for k in (*_EMBED_KEYS, *later) if k in e and k not in omitted}
    q, p = prefixes(cfg.embed)
    if q or p:
        out["prefixes"] = [q, p]
    return out


def _normalize(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    if v.ndim == 1:
        v = v[None, :]
    n = np.linalg.norm(v, axis=1, keepdims=True)
    return np.ascontiguousarray(v / np.where(n == 0, 1, n))


def _names(sha1: str, size: int) -> tuple[str, str, str]:
    return f"{sha1}.s{size}.faiss", f"{sha1}.s{size}.bm25", f"{sha1}.s{size}.meta.json"


@dataclass
class ReportIndex:
    """Both indexes of one report at one chunk size (row i = ``chunks[i]``)."""

    sha1: str
    size: int
    model_name: str
    dim: int
    chunks: list[Chunk]
    faiss_index: Any
    bm25_index: Any | None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def has_vectors(self) -> bool:
        """False for an index built with ``index.chunk_vectors="on_demand"`` (its FAISS index is empty)."""
        return bool(self.meta.get("vectors", True))

    def _query(self, qvec: np.ndarray) -> np.ndarray:
        q = _normalize(qvec)
        if q.shape[1] != self.dim:
            raise IndexMismatch(f"query vector has dim {q.shape[1]} but the index of {self.sha1} s{self.size} "
                                f"was built with {self.model_name!r} (dim {self.dim})")
        return q

    def dense(self, qvec: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Top ``k`` chunks by cosine similarity to ``qvec`` (normalized here), best first."""
        q = self._query(qvec)
        if not self.has_vectors:
            raise IndexMismatch(f"the index of {self.sha1} s{self.size} holds no chunk vectors (built with "
                                f"index.chunk_vectors='on_demand'): search it with retrieve.dense_pool > 0")
        k = min(k, self.faiss_index.ntotal)
        if k <= 0:
            return []
        scores, ids = self.faiss_index.search(q, k)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0]) if i >= 0]

    def dense_among(self, qvec: np.ndarray, ids: list[int], k: int,
                    embed_chunks: Callable[[list[str]], np.ndarray] | None = None) -> list[tuple[int, float]]:
        """Top ``k`` of the chunks ``ids`` by cosine similarity to ``qvec``, best first (ties: lower id).

        Vectors come from the FAISS index when it holds them, else from ``embed_chunks(texts)`` (the chunk
        texts in ``ids`` order -> L2-normalized (n, dim); ``rag.index.embed_passages``), required then.
        """
        q = self._query(qvec)
        if not ids:
            return []
        if self.has_vectors:
            vecs = np.stack([self.faiss_index.reconstruct(int(i)) for i in ids])
        elif embed_chunks is None:
            raise IndexMismatch(f"the index of {self.sha1} s{self.size} holds no chunk vectors: dense_among "
                                f"needs embed_chunks")
        else:
            vecs = np.asarray(embed_chunks([self.chunks[i].text for i in ids]), dtype=np.float32)
        sims = vecs @ q[0]
        order = sorted(range(len(ids)), key=lambda j: (-float(sims[j]), ids[j]))[:k]
        return [(int(ids[j]), float(sims[j])) for j in order]

    def bm25(self, query: str, k: int) -> list[tuple[int, float]]:
        """Top ``k`` chunks by BM25 score (> 0 only), best first."""
        # Tokenized as the index was built (its meta), whatever the config asking now says.
        toks = bm25_tokens(query, self.meta.get("bm25_stemmer", "none"))
        k = min(k, len(self.chunks))
        if self.bm25_index is None or not toks or k <= 0:
            return []
        ids, scores = self.bm25_index.retrieve([toks], k=k, show_progress=False, n_threads=1)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0]) if s > 0]


def index_files(cfg: RunConfig, sha1: str, size: int | None = None) -> list[str]:
    """What :func:`load_report_index` reads (absolute paths, the BM25 folder as one): a worker's inputs."""
    size = cfg.retrieve.chunk_size if size is None else size
    d = stage_dir(cfg, STAGE)
    return [str(d / n) for n in _names(sha1, size)] + [str(chunk_path(cfg, sha1, size))]


def load_report_index(cfg: RunConfig, sha1: str, size: int | None = None) -> ReportIndex:
    """Load one report's indexes; raises :class:`IndexMismatch` when ``cfg.embed`` differs from the
    embedding config the index was built with, FileNotFoundError when it was never built."""
    import bm25s
    import faiss

    size = cfg.retrieve.chunk_size if size is None else size
    d = stage_dir(cfg, STAGE)
    faiss_name, bm25_name, meta_name = _names(sha1, size)
    if not (d / meta_name).exists():
        raise FileNotFoundError(f"{d / meta_name} is missing: run stage 04_index with chunk size {size} "
                                f"(indexed sizes come from chunk.sizes)")
    meta = load_index_info(cfg, sha1, size)
    want = embed_config(cfg)
    if meta.embed != want:
        raise IndexMismatch(
            f"index {d / meta_name} was built with embedding model {meta.model_name!r} "
            f"(dim {meta.dim}, {meta.embed}) but the config asks for {want['model']!r} "
            f"({want}); re-run stage 04_index or use the matching embed config")
    chunks = load_chunks(cfg, sha1, size)
    if len(chunks) != meta.chunks:
        raise IndexMismatch(f"{d / meta_name}: index holds {meta.chunks} chunks but "
                            f"{chunk_file(sha1, size)} has {len(chunks)}; re-run stage 04_index")
    index = faiss.deserialize_index(np.frombuffer((d / faiss_name).read_bytes(), dtype=np.uint8))
    bm = bm25s.BM25.load(str(d / bm25_name), show_progress=False) if meta.bm25_files else None
    return ReportIndex(sha1=sha1, size=size, model_name=meta.model_name, dim=meta.dim, chunks=chunks,
                       faiss_index=index, bm25_index=bm, meta=meta.model_dump(mode="json"))


def load_index_info(cfg: RunConfig, sha1: str, size: int) -> IndexInfo:
    """``04_index/<sha1>.s<size>.meta.json`` as :class:`IndexInfo` (FileNotFoundError naming the stage)."""
    d = stage_dir(cfg, STAGE)
    meta_name = _names(sha1, size)[2]
    if not (d / meta_name).exists():
        raise FileNotFoundError(f"{d / meta_name} is missing: run stage 04_index with chunk size {size}")
    return IndexInfo.model_validate(read_json(d / meta_name))
