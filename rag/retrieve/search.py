"""Stage 05's search of one report: chunks by dense / BM25 / hybrid (RRF), lifted to pages.

Contract: see :mod:`rag.retrieve` (``retrieve_pages``, ``search_chunks``, ``lift_to_pages``, ``rrf``). The
report's index comes from ``rag.index.load_report_index`` and its page texts from
``rag.clean.page_texts`` (cached per process; ``clear_caches()`` forgets them).
"""
from __future__ import annotations

import threading
from collections import defaultdict
from typing import Any, Callable, Sequence

import numpy as np

from ..core.config import RunConfig
from ..core.records import CandidatePage
from ..models.base import Usage
from .query import build_search, clear_expansions
from .counts import add_count_pages
from .statements import add_statement_pages

COUNT_KINDS = ("number", "comparative")  # question kinds whose counts are looked for on every page


# ---- caches (one process may answer many questions per report) -------------------------------
_LOCK = threading.Lock()
_INDEXES: dict[tuple, Any] = {}


def clear_caches() -> None:
    """Forget cached indexes, page texts and expansions (after re-running stages 02..04)."""
    from ..clean import clear_page_cache

    with _LOCK:
        _INDEXES.clear()
    clear_page_cache()
    clear_expansions()


def _index(cfg: RunConfig, sha1: str):
    from ..index import load_report_index  # stage 04 (imported late: heavy dependencies)

    key = (str(cfg.run_dir), sha1, cfg.retrieve.chunk_size, cfg.section_hash("embed", "chunk"))
    with _LOCK:
        if key not in _INDEXES:
            _INDEXES[key] = load_report_index(cfg, sha1, size=cfg.retrieve.chunk_size)
        return _INDEXES[key]


def page_texts(cfg: RunConfig, sha1: str) -> dict[int, str]:
    """``{page (1-based): clean Markdown}`` of one report (read through ``rag.clean.page_texts``)."""
    from ..clean import page_texts as clean_pages

    return clean_pages(cfg, sha1)[1]


# ---- chunk search, fusion, page lifting -----------------------------------------------------
def rrf(rankings: Sequence[Sequence[int]], k: int) -> dict[int, float]:
    """Reciprocal rank fusion of ranked id lists (best first): ``{id: sum over lists of 1 / (k + rank)}``
    with 1-based ranks, ids in order of first appearance. The one implementation in the project."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, idx in enumerate(ranking, 1):
            scores[idx] = scores.get(idx, 0.0) + 1.0 / (k + rank)
    return scores


def search_chunks(cfg: RunConfig, index, queries: Sequence[str], bm25_query: str,
                  embed: Callable[[str], np.ndarray],
                  embed_chunks: Callable[[list[str]], np.ndarray] | None = None) -> dict[str, dict[int, float]]:
    """Per-chunk scores by method: ``{"dense": {idx: cos}, "bm25": {...}, "fused": {...}, "chunk": {...}}``.

    ``pool`` (only with a dense pool) holds the pooled chunk ids. ``chunk`` holds the score the mode ranks by (dense cosine, BM25, or fused RRF) for the top
    ``top_k_chunks`` chunks only. Dense search runs each of ``queries`` and keeps a chunk's best cosine;
    with ``retrieve.dense_pool`` N > 0 it ranks only the N best BM25 chunks of ``bm25_query``, whose vectors
    come from the index or, for an index without vectors, from ``embed_chunks`` (chunk texts -> vectors).
    """
    r = cfg.retrieve
    k = r.top_k_chunks
    out: dict[str, dict[int, float]] = {"dense": {}, "bm25": {}, "fused": {}}
    if r.mode in ("dense", "hybrid"):
        pool = [i for i, _ in index.bm25(bm25_query, r.dense_pool)] if r.dense_pool else None
        if pool is not None:
            out["pool"] = dict.fromkeys(pool, 1.0)  # which chunks dense ranked (the trace counts them)
        for q in queries:
            qvec = np.asarray(embed(q), dtype=np.float32)
            hits = index.dense(qvec, k) if pool is None else index.dense_among(qvec, pool, k, embed_chunks)
            for idx, s in hits:
                out["dense"][int(idx)] = max(float(s), out["dense"].get(int(idx), -np.inf))
    if r.mode in ("bm25", "hybrid"):
        out["bm25"] = {int(i): float(s) for i, s in index.bm25(bm25_query, k)}
    rank = lambda d: [i for i, _ in sorted(d.items(), key=lambda x: (-x[1], x[0]))][:k]  # noqa: E731
    if r.mode == "hybrid":
        out["fused"] = rrf([rank(out["dense"]), rank(out["bm25"])], r.rrf_k)
        main = out["fused"]
    else:
        main = out[r.mode]
    out["chunk"] = {i: main[i] for i in rank(main)}
    return out


def lift_to_pages(cfg: RunConfig, chunks: Sequence, found: dict[str, dict[int, float]],
                  texts: dict[int, str]) -> list[CandidatePage]:
    """Parent pages of the found chunks, scored by ``cfg.retrieve.page_score``, top ``top_pages``.

    max: best chunk score; sum: sum of chunk scores; rrf_sum: sum of 1 / (rrf_k + chunk rank).
    ``retrieval`` = page score / best page score, clipped to [0, 1].
    """
    r = cfg.retrieve
    ranked = sorted(found["chunk"].items(), key=lambda x: (-x[1], x[0]))
    by_page: dict[tuple[str, int], list[tuple[int, int, float]]] = defaultdict(list)  # (rank, idx, score)
    for rank, (idx, s) in enumerate(ranked, 1):
        c = chunks[idx]
        by_page[(c.sha1, c.page)].append((rank, idx, s))
    pages = []
    for (sha1, page), hits in by_page.items():
        if r.page_score == "max":
            score = max(s for _, _, s in hits)
        elif r.page_score == "sum":
            score = sum(s for _, _, s in hits)
        else:
            score = sum(1.0 / (r.rrf_k + rank) for rank, _, _ in hits)
        best = lambda key: max((found[key][i] for _, i, _ in hits if i in found[key]), default=None)  # noqa: E731
        pages.append(CandidatePage(
            sha1=sha1, page=page, text=texts.get(page, ""), chunk_ids=[chunks[i].chunk_id for _, i, _ in hits],
            scores={"dense": best("dense"), "bm25": best("bm25"), "fused": best("fused"), "raw": score,
                    "retrieval": None, "llm": None, "final": None}))
    pages.sort(key=lambda p: (-p.scores["raw"], p.page))
    pages = pages[:r.top_pages]
    top = max((p.scores["raw"] for p in pages), default=0.0)
    for p in pages:
        raw = p.scores.pop("raw")
        p.scores["retrieval"] = float(min(1.0, max(0.0, raw / top))) if top > 0 else 0.0
        p.scores["final"] = p.scores["retrieval"]
    return pages


def retrieve_pages(cfg: RunConfig, question_text: str, sha1: str, *, index=None,
                   texts: dict[int, str] | None = None, embed: Callable[[str], np.ndarray] | None = None,
                   embed_chunks: Callable[[list[str]], np.ndarray] | None = None, llm=None,
                   usage: list[Usage] | None = None, trace: dict[str, Any] | None = None, kind: str | None = None) -> list[CandidatePage]:
    """Top candidate pages of report ``sha1`` for ``question_text`` (best first, before reranking).

    ``index``/``texts``/``embed``/``embed_chunks``/``llm`` default to the run's stage-04 index, stage-02
    pages, ``rag.index.embed_query``, ``rag.index.embed_passages`` and ``rag.models.get_llm``; tests pass
    fakes. Query-expansion token use is appended to the list ``usage`` when given; ``trace``, when given, receives the search as run
    (``query``, ``dense_queries``, ``bm25_query``, ``lexicon_topics``, ``statement_pages``, ``count_pages``).
    ``kind`` "number" or "comparative": pages printing an asked count join (rag.retrieve.counts).
    """
    index = index if index is not None else _index(cfg, sha1)
    company = ""
    if texts is None:
        from ..clean import page_texts as clean_pages

        company, texts = clean_pages(cfg, sha1)
    from ..index import embed_passages, embed_query

    if embed is None:
        embed = lambda t: embed_query(cfg, t)  # noqa: E731
    if embed_chunks is None:
        embed_chunks = lambda texts: embed_passages(cfg, texts)  # noqa: E731
    search = build_search(cfg, question_text, company, llm, usage)
    if trace is not None:
        trace.update(search)
    found = search_chunks(cfg, index, search["dense_queries"], search["bm25_query"], embed, embed_chunks)
    if trace is not None and "pool" in found:  # what dense search ranked (05's embedding_tokens add these up)
        trace["dense_pool_chunks"] = len(found["pool"])
        trace["dense_pool_tokens"] = sum(index.chunks[i].tokens for i in found["pool"])  # cl100k, as 04 counts
    pages = lift_to_pages(cfg, index.chunks, found, texts)
    added = add_statement_pages(cfg, search["query"], pages, texts)
    if trace is not None and added is not pages:
        trace["statement_pages"] = [p.page for p in added if p.statement]
    if kind in COUNT_KINDS:
        counted = add_count_pages(cfg, search["query"], added, texts)
        if trace is not None and counted is not added:
            trace["count_pages"] = [p.page for p in counted if p.statement.startswith("count:")]
        added = counted
    return added
