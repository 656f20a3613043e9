"""Route a question that names no company to the filing whose text answers it best (``retrieve.route_by_content``).

Contract:
- ``content_candidates(question_text, reports) -> list[Report]``: one filing per company of the dataset, the
  one the question's period and document type pick among that company's filings
  (:func:`rag.retrieve.filing.choose_filings`, as if the company had been named); every report of a company
  whose reports carry no period. Only those printing every period the question names are kept
  (:func:`rag.retrieve.filing.prints_periods`; all when none does).
- ``route_by_content(cfg, question_text, reports, *, index_of, embed, embed_chunks) -> ContentRoute | None``:
  each candidate's ``POOL`` best BM25 chunks for the question's search query are ranked by the embedder's
  cosine to the question, and a candidate scores the mean of its ``TOP`` best cosines. The best candidate
  wins; ``why`` names it, its score and the runner-up's. None when no candidate has a BM25 hit.
  ``index_of(sha1)``, ``embed(text)`` and ``embed_chunks(texts)`` default to the run's 04 index and embedder
  (:mod:`rag.retrieve.search`); tests pass fakes.

Why meaning, not a list of words: FinanceBench hands each question its filing, so some of its questions name
no company ("the company's FY2022 capital expenditure", "the consumer segment"). BM25 scores are not
comparable across reports (each index has its own term statistics); the cosine of one embedder is, so BM25
only chooses which chunks of each filing the embedder reads. Off by default: an ERC question always names its
company, and one naming none has no answer there (N/A is right); FinanceBench's gold is never N/A, so its
datasets turn it on (``rag import financebench``).

Measured (RESULTS.md, issue 48; benchmarks/fb_content_routing.py): on fb-dev with every company name taken out,
the right filing about as often as one of the candidates at random (tuning 7 of 33 against 6.9): the period
filter does the work, the cosine adds nothing yet. It is a guess, and its reason is recorded as one.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..core.config import RunConfig
from .filing import choose_filings, prints_periods
from .names import normalize_tokens

POOL = 30  # BM25 chunks of each candidate filing the embedder reads
TOP = 3  # a filing's score: the mean of its best TOP chunk cosines (one lucky chunk does not decide)


@dataclass(frozen=True)
class ContentRoute:
    """The filing chosen by its text, with every candidate's score (sha1 -> mean cosine)."""
    sha1: str
    why: str
    scores: dict[str, float]


def content_candidates(question_text: str, reports: Sequence) -> list:
    """One filing per company: the one the question's period names among the company's filings."""
    by_company: dict[tuple[str, ...], list] = {}
    for r in reports:
        by_company.setdefault(tuple(normalize_tokens(r.company)), []).append(r)
    out = []
    for filings in by_company.values():
        if len(filings) > 1 and any(getattr(f, "period", "") for f in filings):
            chosen = choose_filings(question_text, filings).sha1s
            out += [f for f in filings if f.sha1 == chosen[0]] if chosen else []
        else:
            out += filings
    printing = [f for f in out if prints_periods(f, question_text)]
    return printing or out  # a filing that does not print the asked year cannot answer; none does: all


def _label(r) -> str:
    return getattr(r, "filing", "") or r.company  # "Walmart 10-K 2020" (Report.filing names the company)


def route_by_content(cfg: RunConfig, question_text: str, reports: Sequence, *,
                     index_of: Callable[[str], object] | None = None,
                     embed: Callable[[str], np.ndarray] | None = None,
                     embed_chunks: Callable[[list[str]], np.ndarray] | None = None) -> ContentRoute | None:
    """The candidate filing whose best chunks are closest in meaning to the question (see the contract)."""
    from .query import build_search
    from .search import _index

    if index_of is None:
        index_of = lambda sha1: _index(cfg, sha1)  # noqa: E731
    if embed is None or embed_chunks is None:
        from ..index import embed_passages, embed_query

        embed = embed or (lambda t: embed_query(cfg, t))
        embed_chunks = embed_chunks or (lambda texts: embed_passages(cfg, texts))
    search = build_search(cfg, question_text)
    qvec = np.asarray(embed(search["query"]), dtype=np.float32)
    scores: dict[str, float] = {}
    labels: dict[str, str] = {}
    for r in content_candidates(question_text, reports):
        index = index_of(r.sha1)
        pool = [i for i, _ in index.bm25(search["bm25_query"], POOL)]
        if not pool:
            continue
        cos = sorted((s for _, s in index.dense_among(qvec, pool, TOP, embed_chunks)), reverse=True)[:TOP]
        scores[r.sha1] = round(float(np.mean(cos)), 4)
        labels[r.sha1] = _label(r)
    if not scores:
        return None
    ranked = sorted(scores, key=lambda s: (-scores[s], s))
    best = ranked[0]
    runner = (f"; next {labels[ranked[1]]} {scores[ranked[1]]:.3f}" if len(ranked) > 1 else "")
    why = (f"no company named: by content, {labels[best]} (mean cosine of its best {TOP} chunks "
           f"{scores[best]:.3f}{runner}; {len(scores)} filings compared)")
    return ContentRoute(sha1=best, why=why, scores=scores)
