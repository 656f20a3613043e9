"""Stage 04: chunks -> dense (FAISS) and sparse (BM25) indexes per report and chunk size.

Contract:
- ``run_index(cfg, ds, progress=True) -> DataFrame``: one row per (report, size): sha1, company, size,
  chunks, dim, seconds, bytes. For every report and every ``cfg.chunk.sizes`` it writes under
  ``outputs/<run>/04_index/``::

      <sha1>.s<size>.faiss        faiss.IndexFlatIP over L2-normalized embeddings (inner product = cosine)
      <sha1>.s<size>.bm25/        bm25s index files (lowercased words, numbers kept, English stopwords out)
      <sha1>.s<size>.meta.json    embedding model name + dim + embed config, chunk count, 03's key (IndexInfo)

  Row ``i`` of both indexes is line ``i`` of ``03_chunk/<sha1>.s<size>.jsonl``.
- Currency key per (report, size) = 03's key for it + embed config + :data:`CODE_VERSION`, so adding
  a report embeds only that report; changing the embedding model re-embeds everything. Usage per item
  records the embedded tokens (cl100k count of the chunk texts) and the embedder's cost.
- ``load_report_index(cfg, sha1, size=None) -> ReportIndex`` (``size=None``: ``cfg.retrieve.chunk_size``)
  with ``.chunks``, ``.dense(qvec, k)`` and ``.bm25(query, k)``, both ``[(chunk_idx, score)]`` best first,
  higher = better (cosine in [-1, 1]; BM25 score > 0, zero-score chunks left out).
  Loading an index built with another embedding backend/model than ``cfg.embed`` asks for raises
  :class:`IndexMismatch` naming both; a query vector of the wrong dimension too.
- ``embed_query(cfg, text) -> np.ndarray (dim,)`` through the same embedder.
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..core.artifacts import file_sha256, hash_key, read_json, stage_dir

from ..core.stage import ItemState, Stage
from ..core.stage import item_state as _item_state
from ..chunk import STAGE as CHUNK_STAGE, chunk_file, load_chunks
from ..core.config import RunConfig
from ..core import deps
from ..core.loop import Item, Json, Result, failures, outcome_counts, run_items, upstream_block
from ..core.usage import ItemUsage
from ..core.records import Chunk, IndexInfo
from .bm25 import bm25_tokens  # the BM25 words of chunks and queries (tests import it from here)

CODE_VERSION = "index-2"  # 2: BM25 vocabulary in sorted order (byte-reproducible)
STAGE = "04_index"
COLUMNS = ["sha1", "company", "size", "chunks", "dim", "seconds", "bytes"]
# Embed-config fields that change the vectors (batch size changes only speed); those of
# deps.OMIT_WHEN_DEFAULT / UNUSED_WHEN (embed.hub, embed.long_text, ...) join only when they change the vectors,
# so the metas of indexes built before they existed still match.
_EMBED_KEYS = ("backend", "model", "max_input_tokens")


class IndexMismatch(RuntimeError):
    """The index on disk was built with another embedding model than the one asked for."""


# ---- model access (the only place the index touches rag.models) -----------------------------------
def get_embedder(cfg: RunConfig):
    """The configured embedder (``rag.models.get_embedder``; tests monkeypatch this name)."""
    from ..models import get_embedder as _get

    return _get(cfg)


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


def embed_query(cfg: RunConfig, text: str) -> np.ndarray:
    """One query vector (dim,), L2-normalized; the model's query prefix (``embed.query_prefix``) goes first."""
    from ..models.embed import prefixes

    return _normalize(get_embedder(cfg).embed([prefixes(cfg.embed)[0] + text]))[0]


def _normalize(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    if v.ndim == 1:
        v = v[None, :]
    n = np.linalg.norm(v, axis=1, keepdims=True)
    return np.ascontiguousarray(v / np.where(n == 0, 1, n))


# ---- files -------------------------------------------------------------------------------------------
def _names(sha1: str, size: int) -> tuple[str, str, str]:
    return f"{sha1}.s{size}.faiss", f"{sha1}.s{size}.bm25", f"{sha1}.s{size}.meta.json"


def _build_one(cfg: RunConfig, embedder, sha1: str, size: int, chunk_key: str) -> Result:
    """Both indexes of one (report, size) as loop outputs; usage counts the embedded text's tokens."""
    import bm25s
    import faiss

    chunks = load_chunks(cfg, sha1, size)
    faiss_name, bm25_name, meta_name = _names(sha1, size)
    from ..models.embed import prefixes

    passage = prefixes(cfg.embed)[1]  # e5: "passage: " before every chunk; "" for MiniLM
    texts = [passage + c.text for c in chunks]
    dim = int(embedder.dim)
    vecs = np.zeros((0, dim), dtype=np.float32)
    meter = getattr(embedder, "meter", None)
    before = meter.snapshot() if meter is not None else None
    t0 = time.perf_counter()
    if texts:
        vecs = _normalize(embedder.embed(texts))
        if vecs.shape != (len(texts), dim):
            raise ValueError(f"embedder {embedder.model_name} returned shape {vecs.shape}, expected "
                             f"({len(texts)}, {dim}) for {chunk_file(sha1, size)}")
    embed_s = time.perf_counter() - t0
    cost = (meter.snapshot()["cost_usd"] - before["cost_usd"]) if before is not None else 0.0
    index = faiss.IndexFlatIP(dim)
    if len(vecs):
        index.add(vecs)
    files: dict[str, Any] = {faiss_name: faiss.serialize_index(index).tobytes()}
    bm25_files = []
    if texts:
        retriever = bm25s.BM25()
        # Token ids from a sorted vocabulary: bm25s numbers tokens in set order when given strings, which
        # changes with PYTHONHASHSEED, so the saved files would differ between identical runs.
        docs = [bm25_tokens(t, cfg.index.bm25_stemmer) for t in texts]
        vocab = {w: i for i, w in enumerate(sorted({w for d in docs for w in d}))}
        retriever.index(([[vocab[w] for w in d] for d in docs], vocab), show_progress=False)
        with tempfile.TemporaryDirectory() as tmp:  # bm25s writes plain files: the loop copies them in atomically
            retriever.save(tmp, show_progress=False)
            for f in sorted(Path(tmp).iterdir()):
                files[f"{bm25_name}/{f.name}"] = f.read_bytes()
                bm25_files.append(f.name)
    meta = IndexInfo(sha1=sha1, size=size, model_name=embedder.model_name, dim=dim, embed=embed_config(cfg),
                     chunks=len(chunks), chunk_file=chunk_file(sha1, size), chunk_key=chunk_key,
                     chunk_sha256=file_sha256(stage_dir(cfg, CHUNK_STAGE) / chunk_file(sha1, size)),
                     bm25_files=bm25_files, bm25_stemmer=cfg.index.bm25_stemmer, embed_seconds=round(embed_s, 3), code_version=CODE_VERSION)
    files[meta_name] = Json(meta.model_dump(mode="json"))
    info = {"chunks": len(chunks), "dim": dim, "model_name": embedder.model_name, "embed_seconds": meta.embed_seconds,
            "bytes": sum(len(v) for v in files.values() if isinstance(v, bytes))}
    usage = ItemUsage(embedding_tokens=sum(c.tokens for c in chunks), cost_usd=cost)
    return Result(files=files, info=info, usage=usage)


def _bytes(d: Path, sha1: str, size: int) -> int:
    total = 0
    for name in _names(sha1, size):
        p = d / name
        if p.is_dir():
            total += sum(f.stat().st_size for f in p.iterdir())
        elif p.exists():
            total += p.stat().st_size
    return total


def item_id(sha1: str, size: int) -> str:
    return f"{sha1}.s{size}"


def item_state(cfg: RunConfig, sha1: str, size: int) -> ItemState:
    """State of (report, size) in 04_index (done + key, failed/blocked + reason, or missing)."""
    faiss_name, _, meta_name = _names(sha1, size)
    return _item_state(cfg.run_dir / STAGE, item_id(sha1, size), (faiss_name, meta_name))


def index_key(cfg: RunConfig, chunk_key: str) -> str:
    """03's key for the (report, size) + embed config (rag.core.deps) + code version."""
    return hash_key(chunk_key, deps.config_signature(cfg, STAGE), CODE_VERSION)


def run_index(cfg: RunConfig, ds, progress: bool = True) -> pd.DataFrame:
    """Index every report at every size; current (report, size) items are skipped without loading
    the embedding model; reports that failed upstream are carried as blocked."""
    from ..chunk import STAGE as CHUNK, item_state as chunk_state

    stage = Stage(cfg, STAGE)
    items = []
    for rep in ds.reports:
        for size in cfg.chunk.sizes:
            up = chunk_state(cfg, rep.sha1, size)
            if up.status == "missing":  # stage 03 never ran for it: the stage cannot run
                raise FileNotFoundError(f"{stage_dir(cfg, CHUNK) / chunk_file(rep.sha1, size)} is missing: "
                                        f"run stage 03_chunk for {rep.company} ({rep.sha1})")
            faiss_name, bm25_name, meta_name = _names(rep.sha1, size)
            items.append(Item(item_id(rep.sha1, size), index_key(cfg, up.key), (faiss_name, meta_name),
                              (rep.sha1, size, up.key), blocked=upstream_block(CHUNK, up), label=rep.company,
                              inputs=(str(stage_dir(cfg, CHUNK) / chunk_file(rep.sha1, size)),)))
    embedder = None

    def work(it: Item) -> Result:
        nonlocal embedder
        if embedder is None:  # loaded only when some item is not current
            embedder = get_embedder(cfg)
        return _build_one(cfg, embedder, *it.payload)

    outcomes = run_items(stage, items, work, progress=progress, unit="index")
    rows = []
    for it in items:
        o = outcomes[it.id]
        sha1, size, _ = it.payload
        rows.append({"sha1": sha1, "company": it.label, "size": size, "chunks": o.info.get("chunks"),
                     "dim": o.info.get("dim"), "seconds": o.seconds, "bytes": _bytes(stage.dir, sha1, size)})
    df = pd.DataFrame(rows, columns=COLUMNS)
    n = outcome_counts(outcomes)
    infos = [o.info for o in outcomes.values()]
    stage.finish(counts={"built": n["ran"], "skipped": n["current"], "failed": n["failed"], "blocked": n["blocked"],
                         "chunks": sum(o.info.get("chunks", 0) for o in outcomes.values() if o.status == "ran")},
                 item_ids=[i.id for i in items], extra={
        "model_name": embedder.model_name if embedder else next((i.get("model_name") for i in infos if i), None),
        "dim": embedder.dim if embedder else next((i.get("dim") for i in infos if i), None),
        "embed": embed_config(cfg), "sizes": list(cfg.chunk.sizes), "code_version": CODE_VERSION,
        "bytes_on_disk": int(df["bytes"].sum()) if len(df) else 0,
        "bytes_by_size": {str(s): int(df.loc[df["size"] == s, "bytes"].sum()) for s in cfg.chunk.sizes},
        "failures": failures(outcomes)})
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
    return [str(d / n) for n in _names(sha1, size)] + [str(stage_dir(cfg, CHUNK_STAGE) / chunk_file(sha1, size))]


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
