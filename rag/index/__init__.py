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
- ``embed_query(cfg, text) -> np.ndarray (dim,)`` through the same embedder; ``embed_passages(cfg, texts)
  -> (n, dim)`` embeds chunk texts exactly as stage 04 does (stage 05's pool under "on_demand").
- ``index.chunk_vectors="on_demand"``: no chunk is embedded here; the FAISS file holds an empty index of the
  model's dimension and the meta says ``vectors: false`` (the model is not loaded when its dimension is in
  ``rag.models.embed.KNOWN_DIMS``).
- ``index_footprint(cfg, sha1, size) -> (bytes on disk, embedding seconds)`` of one built index (04's
  notebook table, :mod:`rag.views.index`).

The folder's names, metas and readers live in :mod:`rag.index.reader` (re-exported here).
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..core.artifacts import file_sha256, hash_key
from ..core.stage import ItemState, Stage, read_item_record
from ..core.stage import item_state as _item_state
from ..chunk import chunk_file, chunk_path, load_chunks
from ..core.config import RunConfig
from ..core import deps
from ..core.loop import Item, Json, Result, failures, outcome_counts, run_items, upstream_block
from ..core.usage import ItemUsage
from ..core.records import IndexInfo
from .bm25 import bm25_tokens  # the BM25 words of chunks and queries (tests import it from here)
# The folder's names, metas and readers (stage 05 reads through these; re-exported: import them from here).
from .reader import (STAGE, IndexMismatch, ReportIndex, _names, _normalize, embed_config,
                     index_files, load_index_info, load_report_index)

CODE_VERSION = "index-2"  # 2: BM25 vocabulary in sorted order (byte-reproducible)
COLUMNS = ["sha1", "company", "size", "chunks", "dim", "seconds", "bytes"]


# ---- model access (the only place the index touches rag.models) -----------------------------------
def get_embedder(cfg: RunConfig):
    """The configured embedder (``rag.models.get_embedder``; tests monkeypatch this name)."""
    from ..models import get_embedder as _get

    return _get(cfg)


def embed_precision(cfg: RunConfig) -> dict[str, str]:
    """``{"embed_precision": "float32" | "bfloat16"}``: the dtype the local torch embedder computes in on this
    process (``embed.precision`` "auto" resolves per machine), for an item's info; {} for other embedders."""
    if cfg.embed.backend != "local" or cfg.embed.runtime != "torch":
        return {}
    return {"embed_precision": str(getattr(get_embedder(cfg), "precision", "float32"))}


def embed_query(cfg: RunConfig, text: str) -> np.ndarray:
    """One query vector (dim,), L2-normalized; the model's query prefix (``embed.query_prefix``) goes first."""
    from ..models.embed import prefixes

    return _normalize(get_embedder(cfg).embed([prefixes(cfg.embed)[0] + text]))[0]


def query_cosines(cfg: RunConfig, query: str, texts: list[str]) -> np.ndarray:
    """Cosine of each of ``texts`` (passage prefix) to ``query`` (query prefix), all embedded in one batch: how
    stage 06 ranks lines by meaning (rag.answer.numbers.metric_choice, rag.answer.text.evidence_lines). (n,) float32."""
    from ..models.embed import prefixes

    qp, pp = prefixes(cfg.embed)
    vecs = _normalize(get_embedder(cfg).embed([qp + query] + [pp + t for t in texts]))
    return vecs[1:] @ vecs[0]


def embed_passages(cfg: RunConfig, texts: list[str]) -> np.ndarray:
    """Chunk texts with the model's passage prefix first, as stage 04 embeds them, L2-normalized, (n, dim);
    one text per model call (``embed(each=True)``), so a chunk's vector does not depend on which other chunks
    a question's pool holds, nor on the order questions run in (local threads or Ray workers)."""
    return _normalize(get_embedder(cfg).embed(_passages(cfg, texts), each=True))


def _passages(cfg: RunConfig, texts: list[str]) -> list[str]:
    """Chunk texts as the embedder and BM25 read them: the model's passage prefix first."""
    from ..models.embed import prefixes

    passage = prefixes(cfg.embed)[1]  # e5: "passage: " before every chunk; "" for MiniLM
    return [passage + t for t in texts]


# ---- building ----------------------------------------------------------------------------------------
def _build_one(cfg: RunConfig, embedder, sha1: str, size: int, chunk_key: str) -> Result:
    """Both indexes of one (report, size) as loop outputs; usage counts the embedded text's tokens."""
    import bm25s
    import faiss

    chunks = load_chunks(cfg, sha1, size)
    faiss_name, bm25_name, meta_name = _names(sha1, size)
    texts = _passages(cfg, [c.text for c in chunks])
    stored = cfg.index.chunk_vectors == "stored"  # on_demand: nothing embedded here
    # Building an embedder loads no model; .dim loads it only for a model missing from KNOWN_DIMS.
    model_name, dim = embedder.model_name, int(embedder.dim)
    vecs = np.zeros((0, dim), dtype=np.float32)
    meter = getattr(embedder, "meter", None)
    before = meter.snapshot() if meter is not None else None
    t0 = time.perf_counter()
    if texts and stored:
        vecs = _normalize(embedder.embed(texts))
        if vecs.shape != (len(texts), dim):
            raise ValueError(f"embedder {model_name} returned shape {vecs.shape}, expected "
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
    meta = IndexInfo(sha1=sha1, size=size, model_name=model_name, dim=dim, embed=embed_config(cfg), vectors=stored,
                     chunks=len(chunks), chunk_file=chunk_file(sha1, size), chunk_key=chunk_key,
                     chunk_sha256=file_sha256(chunk_path(cfg, sha1, size)),
                     bm25_files=bm25_files, bm25_stemmer=cfg.index.bm25_stemmer, embed_seconds=round(embed_s, 3), code_version=CODE_VERSION)
    files[meta_name] = Json(meta.model_dump(mode="json"))
    info = {"chunks": len(chunks), "dim": dim, "model_name": model_name, "embed_seconds": meta.embed_seconds,
            "bytes": sum(len(v) for v in files.values() if isinstance(v, bytes)),
            **(embed_precision(cfg) if stored else {})}
    usage = ItemUsage(embedding_tokens=sum(c.tokens for c in chunks) if stored else 0, cost_usd=cost)
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


def index_footprint(cfg: RunConfig, sha1: str, size: int) -> tuple[int, float | None]:
    """(bytes on disk, embedding seconds from its item record; None when unrecorded) of one (report, size)
    index of this run; (0, None) when 04 never wrote it. The owner reader behind 04's notebook table."""
    d = cfg.run_dir / STAGE  # may not exist yet: nothing on disk, no record
    rec = read_item_record(d, item_id(sha1, size)) or {}
    return _bytes(d, sha1, size), (rec.get("info") or {}).get("embed_seconds")


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
                raise FileNotFoundError(f"{chunk_path(cfg, rep.sha1, size)} is missing: "
                                        f"run stage 03_chunk for {rep.company} ({rep.sha1})")
            faiss_name, bm25_name, meta_name = _names(rep.sha1, size)
            items.append(Item(item_id(rep.sha1, size), index_key(cfg, up.key), (faiss_name, meta_name),
                              (rep.sha1, size, up.key), blocked=upstream_block(CHUNK, up), label=rep.company,
                              inputs=(str(chunk_path(cfg, rep.sha1, size)),)))
    embedder = None

    def work(it: Item) -> Result:
        nonlocal embedder
        if embedder is None:  # built only when some item is not current
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
        "embed": embed_config(cfg), "chunk_vectors": cfg.index.chunk_vectors, "sizes": list(cfg.chunk.sizes),
        "code_version": CODE_VERSION,
        "bytes_on_disk": int(df["bytes"].sum()) if len(df) else 0,
        "bytes_by_size": {str(s): int(df.loc[df["size"] == s, "bytes"].sum()) for s in cfg.chunk.sizes},
        "failures": failures(outcomes)})
    return df


