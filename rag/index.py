"""Stage 04: chunks -> dense (FAISS) and sparse (BM25) indexes per report and chunk size.

Contract:
- ``run_index(cfg, ds, progress=True) -> DataFrame``: one row per (report, size): sha1, company, size,
  chunks, dim, seconds, bytes. For every report and every ``cfg.chunk.sizes`` it writes under
  ``outputs/<run>/04_index/``::

      <sha1>.s<size>.faiss        faiss.IndexFlatIP over L2-normalized embeddings (inner product = cosine)
      <sha1>.s<size>.bm25/        bm25s index files (lowercased words, numbers kept, English stopwords out)
      <sha1>.s<size>.meta.json    embedding model name + dim + embed config, chunk count, chunk file sha256

  Row ``i`` of both indexes is line ``i`` of ``03_chunk/<sha1>.s<size>.jsonl``.
- Currency key per (report, size) = chunk file sha256 + embed config + :data:`CODE_VERSION`, so adding
  a report embeds only that report; changing the embedding model re-embeds everything.
- ``load_report_index(cfg, sha1, size=None) -> ReportIndex`` (``size=None``: ``cfg.retrieve.chunk_size``)
  with ``.chunks``, ``.dense(qvec, k)`` and ``.bm25(query, k)``, both ``[(chunk_idx, score)]`` best first,
  higher = better (cosine in [-1, 1]; BM25 score > 0, zero-score chunks left out).
  Loading an index built with another embedding backend/model than ``cfg.embed`` asks for raises
  :class:`IndexMismatch` naming both; a query vector of the wrong dimension too.
- ``embed_query(cfg, text) -> np.ndarray (dim,)`` through the same embedder.
"""
from __future__ import annotations

import re
import tempfile
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .artifacts import Stage, file_sha256, hash_key, read_json, stage_dir
from .chunk import chunk_file, load_chunks
from .config import RunConfig
from .records import Chunk

CODE_VERSION = "index-1"
STAGE = "04_index"
COLUMNS = ["sha1", "company", "size", "chunks", "dim", "seconds", "bytes"]
# Embed-config fields that change the vectors (batch size changes only speed).
_EMBED_KEYS = ("backend", "model", "max_input_tokens")
# Numbers keep their digits and decimal point; thousands separators go ("1,234.5" -> "1234.5").
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+")


class IndexMismatch(RuntimeError):
    """The index on disk was built with another embedding model than the one asked for."""


# ---- model access (the only place the index touches rag.models) -----------------------------------
def get_embedder(cfg: RunConfig):
    """The configured embedder (``rag.models.get_embedder``; tests monkeypatch this name)."""
    from .models import get_embedder as _get

    return _get(cfg)


def embed_config(cfg: RunConfig) -> dict[str, Any]:
    e = cfg.embed.model_dump(mode="json")
    return {k: e[k] for k in _EMBED_KEYS}


def embed_query(cfg: RunConfig, text: str) -> np.ndarray:
    """One query vector (dim,), L2-normalized."""
    return _normalize(get_embedder(cfg).embed([text]))[0]


def _normalize(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    if v.ndim == 1:
        v = v[None, :]
    n = np.linalg.norm(v, axis=1, keepdims=True)
    return np.ascontiguousarray(v / np.where(n == 0, 1, n))


# ---- BM25 tokenization -------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def bm25_tokens(text: str) -> list[str]:
    """Lowercased words and numbers, English stopwords and one-letter words dropped."""
    stop = _stopwords()
    out = []
    for tok in _TOKEN.findall(text.lower()):
        if tok[0].isdigit():
            out.append(tok.replace(",", ""))
        elif len(tok) > 1 and tok not in stop:
            out.append(tok)
    return out


# ---- files -------------------------------------------------------------------------------------------
def _names(sha1: str, size: int) -> tuple[str, str, str]:
    return f"{sha1}.s{size}.faiss", f"{sha1}.s{size}.bm25", f"{sha1}.s{size}.meta.json"


def _build_one(stage: Stage, cfg: RunConfig, embedder, sha1: str, size: int, chunk_hash: str) -> dict[str, Any]:
    import bm25s
    import faiss

    chunks = load_chunks(cfg, sha1, size)
    faiss_name, bm25_name, meta_name = _names(sha1, size)
    texts = [c.text for c in chunks]
    dim = int(embedder.dim)
    vecs = np.zeros((0, dim), dtype=np.float32)
    t0 = time.perf_counter()
    if texts:
        vecs = _normalize(embedder.embed(texts))
        if vecs.shape != (len(texts), dim):
            raise ValueError(f"embedder {embedder.model_name} returned shape {vecs.shape}, expected "
                             f"({len(texts)}, {dim}) for {chunk_file(sha1, size)}")
    embed_s = time.perf_counter() - t0
    index = faiss.IndexFlatIP(dim)
    if len(vecs):
        index.add(vecs)
    stage.write_bytes(faiss_name, faiss.serialize_index(index).tobytes())
    bm25_files = []
    if texts:
        retriever = bm25s.BM25()
        retriever.index([bm25_tokens(t) for t in texts], show_progress=False)
        with tempfile.TemporaryDirectory() as tmp:  # bm25s writes plain files: copy them in atomically
            retriever.save(tmp, show_progress=False)
            for f in sorted(Path(tmp).iterdir()):
                stage.write_bytes(f"{bm25_name}/{f.name}", f.read_bytes())
                bm25_files.append(f.name)
    meta = {"sha1": sha1, "size": size, "model_name": embedder.model_name, "dim": dim,
            "embed": embed_config(cfg), "chunks": len(chunks), "chunk_file": chunk_file(sha1, size),
            "chunk_sha256": chunk_hash, "bm25_files": bm25_files, "embed_seconds": round(embed_s, 3),
            "code_version": CODE_VERSION}
    stage.write_json(meta_name, meta)
    meta["bytes"] = _bytes(stage.dir, sha1, size)
    return meta


def _bytes(d: Path, sha1: str, size: int) -> int:
    total = 0
    for name in _names(sha1, size):
        p = d / name
        if p.is_dir():
            total += sum(f.stat().st_size for f in p.iterdir())
        elif p.exists():
            total += p.stat().st_size
    return total


def run_index(cfg: RunConfig, ds, progress: bool = True) -> pd.DataFrame:
    """Index every report at every size; current (report, size) items are skipped without loading
    the embedding model."""
    stage = Stage(cfg, STAGE)
    chunk_dir = stage_dir(cfg, "03_chunk")
    embedder = None
    rows = []
    totals = {"built": 0, "skipped": 0, "chunks": 0}
    for ri, rep in enumerate(ds.reports):
        for size in cfg.chunk.sizes:
            src = chunk_dir / chunk_file(rep.sha1, size)
            if not src.exists():
                raise FileNotFoundError(f"{src} is missing: run stage 03_chunk for {rep.company} ({rep.sha1})")
            chunk_hash = file_sha256(src)
            item = f"{rep.sha1}.s{size}"
            key = hash_key(chunk_hash, embed_config(cfg), CODE_VERSION)
            faiss_name, _, meta_name = _names(rep.sha1, size)
            if stage.is_current(item, key, faiss_name, meta_name):
                info = stage.item_info(item)
                rows.append({"sha1": rep.sha1, "company": rep.company, "size": size, "chunks": info.get("chunks"),
                             "dim": info.get("dim"), "seconds": 0.0, "bytes": _bytes(stage.dir, rep.sha1, size)})
                totals["skipped"] += 1
                continue
            if embedder is None:
                embedder = get_embedder(cfg)
            t0 = time.perf_counter()
            with stage.timed(item):
                meta = _build_one(stage, cfg, embedder, rep.sha1, size, chunk_hash)
            secs = round(time.perf_counter() - t0, 3)
            stage.mark_done(item, key, chunks=meta["chunks"], dim=meta["dim"], model_name=meta["model_name"],
                            seconds=secs, embed_seconds=meta["embed_seconds"], bytes=meta["bytes"])
            rows.append({"sha1": rep.sha1, "company": rep.company, "size": size, "chunks": meta["chunks"],
                         "dim": meta["dim"], "seconds": secs, "bytes": meta["bytes"]})
            totals["built"] += 1
            totals["chunks"] += meta["chunks"]
        if progress:
            print(f"[04_index] {ri + 1}/{len(ds.reports)} {rep.company}", flush=True)
    df = pd.DataFrame(rows, columns=COLUMNS)
    infos = [stage.item_info(f"{r.sha1}.s{s}") for r in ds.reports for s in cfg.chunk.sizes]
    stage.finish(counts=totals, extra={
        "model_name": embedder.model_name if embedder else next((i.get("model_name") for i in infos), None),
        "dim": embedder.dim if embedder else next((i.get("dim") for i in infos), None),
        "embed": embed_config(cfg), "sizes": list(cfg.chunk.sizes), "code_version": CODE_VERSION,
        "bytes_on_disk": int(df["bytes"].sum()) if len(df) else 0,
        "bytes_by_size": {str(s): int(df.loc[df["size"] == s, "bytes"].sum()) for s in cfg.chunk.sizes},
    })
    return df


# ---- loading -------------------------------------------------------------------------------------------
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

    def dense(self, qvec: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Top ``k`` chunks by cosine similarity to ``qvec`` (normalized here), best first."""
        q = _normalize(qvec)
        if q.shape[1] != self.dim:
            raise IndexMismatch(f"query vector has dim {q.shape[1]} but the index of {self.sha1} s{self.size} "
                                f"was built with {self.model_name!r} (dim {self.dim})")
        k = min(k, self.faiss_index.ntotal)
        if k <= 0:
            return []
        scores, ids = self.faiss_index.search(q, k)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0]) if i >= 0]

    def bm25(self, query: str, k: int) -> list[tuple[int, float]]:
        """Top ``k`` chunks by BM25 score (> 0 only), best first."""
        toks = bm25_tokens(query)
        k = min(k, len(self.chunks))
        if self.bm25_index is None or not toks or k <= 0:
            return []
        ids, scores = self.bm25_index.retrieve([toks], k=k, show_progress=False, n_threads=1)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0]) if s > 0]


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
    meta = read_json(d / meta_name)
    want = embed_config(cfg)
    if meta.get("embed") != want:
        raise IndexMismatch(
            f"index {d / meta_name} was built with embedding model {meta.get('model_name')!r} "
            f"(dim {meta.get('dim')}, {meta.get('embed')}) but the config asks for {want['model']!r} "
            f"({want}); re-run stage 04_index or use the matching embed config")
    chunks = load_chunks(cfg, sha1, size)
    if len(chunks) != meta["chunks"]:
        raise IndexMismatch(f"{d / meta_name}: index holds {meta['chunks']} chunks but "
                            f"{chunk_file(sha1, size)} has {len(chunks)}; re-run stage 04_index")
    index = faiss.deserialize_index(np.frombuffer((d / faiss_name).read_bytes(), dtype=np.uint8))
    bm = bm25s.BM25.load(str(d / bm25_name), show_progress=False) if meta.get("bm25_files") else None
    return ReportIndex(sha1=sha1, size=size, model_name=meta["model_name"], dim=int(meta["dim"]), chunks=chunks,
                       faiss_index=index, bm25_index=bm, meta=meta)


def rrf_scores(rankings: Sequence[Sequence[int]], k: int) -> dict[int, float]:
    """Reciprocal rank fusion of ranked id lists: ``{id: sum over lists of 1 / (k + rank)}`` with 1-based
    ranks, ids in order of first appearance. The one implementation (``rrf`` and ``rag.retrieve`` use it)."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, idx in enumerate(ranking, 1):
            scores[idx] = scores.get(idx, 0.0) + 1.0 / (k + rank)
    return scores


def rrf(rankings: Sequence[Sequence[tuple[int, float]]], k: int) -> list[tuple[int, float]]:
    """Reciprocal rank fusion of ``ReportIndex.dense``/``.bm25`` results (``[(chunk_idx, score)]``): the
    :func:`rrf_scores` of their chunk ids as ``[(chunk_idx, fused score)]``, best first."""
    scores = rrf_scores([[idx for idx, _ in ranking] for ranking in rankings], k)
    return sorted(scores.items(), key=lambda kv: -kv[1])

