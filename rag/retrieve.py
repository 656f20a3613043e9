"""Stage 05: route each question, retrieve candidate pages per report, rerank, write the evidence.

Contract:
- ``retrieve_pages(cfg, question_text, sha1) -> list[CandidatePage]``: the top
  ``cfg.retrieve.top_pages`` pages of one report for one question, best first. Chunks come from the
  report's index (``rag.index.load_report_index``): ``top_k_chunks`` by dense cosine, BM25, or both
  fused by reciprocal rank fusion (``cfg.retrieve.mode``); chunks are lifted to their parent pages
  (1-based ``page``), a page's score made from its chunks by ``cfg.retrieve.page_score``, and
  ``scores["retrieval"]`` = page score / best page score in [0, 1] (1 = best page of this report).
  ``scores["final"]`` equals ``retrieval`` until :func:`rag.rerank.rerank` blends in its score.
  The queries come from :func:`rag.query.build_search`: the question without answer-format boilerplate
  and the company's name (``query_cleanup``), LLM expansion (``query_expansion``), and the terms of
  matching lexicon topics in the BM25 query and one more dense query (``lexicon_expansion``,
  ``lexicon_dense``); the reranker still sees the full question.
- ``run_retrieve(cfg, ds, progress=True) -> DataFrame`` writes ``05_retrieve/<qid>.json`` per question
  (question, kind, routed reports, sub-questions, candidate pages per report with every score and
  reason, the search run per report: query, dense queries, BM25 query, lexicon topics; usage) and
  the stage manifest; a question whose key is unchanged is skipped.
- Score direction everywhere: higher = better.
"""
from __future__ import annotations

import re
import threading
import time
from collections import defaultdict
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field, field_validator

from .artifacts import Stage, hash_key, read_json, stage_dir
from .config import RunConfig
from .dataset import Dataset, Question
# Fusion over chunk-id rankings ({id: score}); rag.index.rrf is the same over (id, score) lists.
from .index import rrf_scores as rrf
from .models.base import Usage
from .query import build_search, clear_expansions, lexicon_hash
from .records import CleanReport
from .route import route, split_comparative

CODE_VERSION = "retrieve-1"
SCORE_KEYS = ("dense", "bm25", "fused", "retrieval", "llm", "final")


class CandidatePage(BaseModel):
    """One page proposed as evidence for a question (``page`` is 1-based)."""

    sha1: str
    page: int
    text: str  # the full clean page Markdown (02_clean)
    chunk_ids: list[str] = Field(default_factory=list)  # the retrieved chunks on this page, best first
    # dense: best chunk cosine; bm25: best chunk BM25; fused: best chunk RRF score (None when the mode
    # did not compute it); retrieval: page score normalized to [0, 1]; llm: reranker relevance in [0, 1]
    # (None when not reranked); final: what the page list is sorted by. Higher = better for all.
    scores: dict[str, float | None] = Field(default_factory=lambda: {k: None for k in SCORE_KEYS})
    reason: str = ""  # the reranker's short reason (empty without LLM reranking)

    @field_validator("scores")
    @classmethod
    def _all_keys(cls, v: dict[str, float | None]) -> dict[str, float | None]:
        return {**{k: None for k in SCORE_KEYS}, **v}


# ---- caches (one process may answer many questions per report) -------------------------------
_LOCK = threading.Lock()
_INDEXES: dict[tuple, Any] = {}
_PAGES: dict[tuple, tuple[str, dict[int, str]]] = {}  # clean file -> (company, {page: markdown})


def clear_caches() -> None:
    """Forget cached indexes, page texts and expansions (after re-running stages 02..04)."""
    with _LOCK:
        _INDEXES.clear(), _PAGES.clear()
    clear_expansions()


def _index(cfg: RunConfig, sha1: str):
    from .index import load_report_index  # stage 04 (imported late: heavy dependencies)

    key = (str(cfg.run_dir), sha1, cfg.retrieve.chunk_size, cfg.section_hash("embed", "chunk"))
    with _LOCK:
        if key not in _INDEXES:
            _INDEXES[key] = load_report_index(cfg, sha1, size=cfg.retrieve.chunk_size)
        return _INDEXES[key]


def _clean_report(cfg: RunConfig, sha1: str) -> tuple[str, dict[int, str]]:
    path = stage_dir(cfg, "02_clean") / f"{sha1}.json"
    key = (str(path), path.stat().st_mtime_ns if path.exists() else 0)
    with _LOCK:
        if key not in _PAGES:
            if not path.exists():
                raise FileNotFoundError(f"{path}: no clean report for {sha1}; run stage 02_clean first")
            rep = CleanReport.model_validate(read_json(path))
            _PAGES[key] = (rep.company, {p.page: p.markdown for p in rep.pages})
        return _PAGES[key]


def page_texts(cfg: RunConfig, sha1: str) -> dict[int, str]:
    """``{page (1-based): clean Markdown}`` of one report from ``02_clean/<sha1>.json``."""
    return _clean_report(cfg, sha1)[1]


# ---- chunk search, fusion, page lifting -----------------------------------------------------
def search_chunks(cfg: RunConfig, index, queries: Sequence[str], bm25_query: str,
                  embed: Callable[[str], np.ndarray]) -> dict[str, dict[int, float]]:
    """Per-chunk scores by method: ``{"dense": {idx: cos}, "bm25": {...}, "fused": {...}, "chunk": {...}}``.

    ``chunk`` holds the score the mode ranks by (dense cosine, BM25, or fused RRF) for the top
    ``top_k_chunks`` chunks only. Dense search runs each of ``queries`` and keeps a chunk's best cosine.
    """
    r = cfg.retrieve
    k = r.top_k_chunks
    out: dict[str, dict[int, float]] = {"dense": {}, "bm25": {}, "fused": {}}
    if r.mode in ("dense", "hybrid"):
        for q in queries:
            for idx, s in index.dense(np.asarray(embed(q), dtype=np.float32), k):
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
                   llm=None, usage: list[Usage] | None = None,
                   trace: dict[str, Any] | None = None) -> list[CandidatePage]:
    """Top candidate pages of report ``sha1`` for ``question_text`` (best first, before reranking).

    ``index``/``texts``/``embed``/``llm`` default to the run's stage-04 index, stage-02 pages,
    ``rag.index.embed_query`` and ``rag.models.get_llm``; tests pass fakes. Query-expansion token use
    is appended to the list ``usage`` when given; ``trace``, when given, receives the search as run
    (``query``, ``dense_queries``, ``bm25_query``, ``lexicon_topics``).
    """
    index = index if index is not None else _index(cfg, sha1)
    company = ""
    if texts is None:
        company, texts = _clean_report(cfg, sha1)
    if embed is None:
        from .index import embed_query

        embed = lambda t: embed_query(cfg, t)  # noqa: E731
    search = build_search(cfg, question_text, company, llm, usage)
    if trace is not None:
        trace.update(search)
    found = search_chunks(cfg, index, search["dense_queries"], search["bm25_query"], embed)
    return lift_to_pages(cfg, index.chunks, found, texts)


# ---- the stage --------------------------------------------------------------------------------
def _upstream_keys(cfg: RunConfig, sha1s: Sequence[str]) -> dict[str, Any]:
    """Currency keys stages 02 and 04 recorded (``.keys/<item>.key``) for these reports: our inputs."""
    items = {"02_clean": lambda s: s, "04_index": lambda s: f"{s}.s{cfg.retrieve.chunk_size}"}
    out: dict[str, Any] = {}
    for name, item in items.items():
        keys = cfg.run_dir / name / ".keys"
        out[name] = {s: (keys / f"{item(s)}.key").read_text().strip() if (keys / f"{item(s)}.key").exists()
                     else None for s in sha1s}
    return out


def _uses_llm(cfg: RunConfig) -> bool:
    return cfg.rerank.mode == "llm" or cfg.retrieve.query_expansion


def question_key(cfg: RunConfig, q: Question, routed: Sequence[str], companies: dict[str, str]) -> str:
    """Currency key: question, routed companies, upstream item keys, retrieve/rerank(/llm) config, code."""
    sections = ("retrieve", "rerank") + (("llm",) if _uses_llm(cfg) else ())
    return hash_key(q.text, q.kind, {s: companies[s] for s in routed}, _upstream_keys(cfg, routed),
                    cfg.section_hash(*sections),
                    # the lexicon's content only when it is used: keys of runs without it stay as they were
                    *([lexicon_hash(cfg)] if cfg.retrieve.lexicon_expansion else []), CODE_VERSION)


def retrieve_question(cfg: RunConfig, q: Question, ds: Dataset, llm=None) -> dict[str, Any]:
    """The 05_retrieve record of one question (routing, sub-questions, reranked candidates, usage)."""
    from .rerank import rerank

    t0 = time.perf_counter()
    subs = split_comparative(q.text, q.kind, ds.reports)
    usages: list[Usage] = []
    candidates: dict[str, list[dict]] = {}
    searches: dict[str, dict[str, Any]] = {}
    for sha1, text in subs.items():
        searches[sha1] = {}
        pages = retrieve_pages(cfg, text, sha1, llm=llm, usage=usages, trace=searches[sha1])
        pages, u = rerank(cfg, text, pages, llm=llm)
        usages.append(u)
        candidates[sha1] = [p.model_dump(mode="json") for p in pages]
    companies = {r.sha1: r.company for r in ds.reports}
    return {"qid": q.qid, "question": q.text, "kind": q.kind,
            "routed": [{"sha1": s, "company": companies[s]} for s in subs],
            "sub_questions": subs if q.kind == "comparative" else {},
            "candidates": candidates, "search": searches, "usage": sum(usages, Usage()).as_dict(),
            "seconds": round(time.perf_counter() - t0, 3)}


def summary_row(rec: dict[str, Any], skipped: bool = False) -> dict[str, Any]:
    tops = [f"{s[:8]}:p{c[0]['page']}" for s, c in rec["candidates"].items() if c]
    return {"qid": rec["qid"], "kind": rec["kind"], "companies": ", ".join(r["company"] for r in rec["routed"]),
            "n_reports": len(rec["routed"]), "top_pages": " ".join(tops),
            "lexicon": ", ".join(sorted({t for s in rec.get("search", {}).values()
                                         for t in s.get("lexicon_topics", [])})),
            "top_final": max((c[0]["scores"]["final"] for c in rec["candidates"].values() if c), default=None),
            "seconds": rec.get("seconds"), "skipped": skipped}


def run_retrieve(cfg: RunConfig, ds: Dataset, progress: bool = True) -> pd.DataFrame:
    """Stage 05 over every question of ``ds``; one summary row per question."""
    stage = Stage(cfg, "05_retrieve")
    companies = {r.sha1: r.company for r in ds.reports}
    llm = None
    rows, counts = [], defaultdict(int)
    for n, q in enumerate(ds.questions, 1):
        routed = route(q.text, ds.reports)
        key = question_key(cfg, q, routed, companies)
        out = f"{q.qid}.json"
        if stage.is_current(q.qid, key, out):
            rows.append(summary_row(read_json(stage.path(out)), skipped=True))
            counts["skipped"] += 1
            continue
        if llm is None and _uses_llm(cfg) and routed:
            from .models import get_llm

            llm = get_llm(cfg)
        with stage.timed(q.qid):
            rec = retrieve_question(cfg, q, ds, llm=llm)
            stage.write_json(out, rec)
        u = rec["usage"]
        stage.add_tokens(prompt_tokens=u["prompt_tokens"], completion_tokens=u["completion_tokens"],
                         requests=u["requests"])
        stage.mark_done(q.qid, key, reports=[r["sha1"] for r in rec["routed"]], seconds=rec["seconds"])
        counts["done"] += 1
        counts["unrouted"] += int(not routed)
        rows.append(summary_row(rec))
        if progress:
            print(f"[05_retrieve] {n}/{len(ds.questions)} {q.qid} {rows[-1]['top_pages'] or '(no report)'} "
                  f"{rec['seconds']:.1f}s", flush=True)
    stage.finish(counts={"questions": len(ds.questions), **counts},
                 extra={"code_version": CODE_VERSION})
    return pd.DataFrame(rows)


def load_records(cfg: RunConfig, ds: Dataset) -> dict[str, dict[str, Any]]:
    """``{qid: record}`` of the 05_retrieve outputs present for ``ds``'s questions."""
    d = stage_dir(cfg, "05_retrieve")
    return {q.qid: read_json(d / f"{q.qid}.json") for q in ds.questions if (d / f"{q.qid}.json").exists()}
