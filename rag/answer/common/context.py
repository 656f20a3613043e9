"""Context of stage 06: the pages a question is answered from, read from stage 05 and packed to fit.

Contracts:
- :class:`CtxPage` (sha1, 1-based page, text, rank 0 = best, score = retrieval/rerank "final").
- 05 records are :class:`rag.core.records.RetrievalRecord` s read through their owner
  (``rag.retrieve.load_retrieval``); ``candidates_by_report`` ranks each report's pages, ``merged_pages``
  merges the routed reports.
- ``pack_parts(pages, budget, counter, max_pages=0)``: pages in rank order packed into parts of at most ``budget``
  context tokens (as counted by ``counter``); a page over the budget is truncated into its own part.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ...core.dataset import Dataset, Report
from ...core.records import CandidatePage, RetrievalRecord

Counter = Callable[[str], int]


@dataclass
class CtxPage:
    sha1: str
    page: int  # 1-based
    text: str
    rank: int  # 0 = best
    score: float | None = None  # retrieval/rerank "final" score, higher = better
    statement: str = ""  # what 05 added the page as ("balance_sheet", "count:employees"; "" = searched)


# ---- reading stage 05 (records come typed from rag.retrieve.load_retrieval) ---------------------------
def to_ctx_pages(items: Sequence[CandidatePage]) -> list[CtxPage]:
    """Candidate pages (rank order) -> CtxPage list, stable-sorted by ``final`` desc."""
    out = []
    for i, it in enumerate(items or []):
        final = it.scores.get("final")
        out.append(CtxPage(it.sha1, it.page, it.text or "", i, None if final is None else float(final), it.statement))
    if all(p.score is not None for p in out):
        out.sort(key=lambda p: -p.score)  # type: ignore[operator]
    for i, p in enumerate(out):
        p.rank = i
    return out


def candidates_by_report(rec: RetrievalRecord) -> dict[str, list[CtxPage]]:
    """A 05 record's candidates -> ranked CtxPages per report."""
    return {sha1: to_ctx_pages(pages) for sha1, pages in rec.candidates.items()}


def merged_pages(per_report: dict[str, list[CtxPage]], sha1s: list[str]) -> list[CtxPage]:
    """One ranked list over the routed reports (several when one company has several reports):
    stable sort by ``final`` (each report's scores are normalized to its own best page = 1)."""
    pages = [p for s in sha1s for p in per_report.get(s, [])]
    pages.sort(key=lambda p: (-(p.score if p.score is not None else float("-inf")), p.rank))
    return [CtxPage(p.sha1, p.page, p.text, i, p.score, p.statement) for i, p in enumerate(pages)]


def page_row(p: CtxPage) -> dict[str, Any]:
    """A context page as stored in the debug record (``retrieved`` lists)."""
    return {"sha1": p.sha1, "page": p.page, "rank": p.rank, "score": p.score}


def report_or_none(ds: Dataset, sha1: str) -> Report | None:
    """The dataset's report ``sha1``; None for a sha1 the dataset does not list (a stale 05 record)."""
    try:
        return ds.report(sha1)
    except KeyError:
        return None


# ---- packing ----------------------------------------------------------------------------------------
def _truncate(text: str, budget: int, counter: Counter) -> str:
    """Cut ``text`` to about ``budget`` tokens (proportional cuts, a few rounds)."""
    for _ in range(4):
        n = counter(text)
        if n <= budget:
            return text
        text = text[: max(1, int(len(text) * budget / n) - 1)]
    return text


def pack_parts(pages: list[CtxPage], budget: int, counter: Counter, max_pages: int = 0) -> list[list[CtxPage]]:
    """Greedy packing in rank order into parts of <= ``budget`` context tokens (and, when
    ``max_pages`` > 0, of at most that many pages); a page larger than the budget alone is truncated
    into its own part."""
    parts: list[list[CtxPage]] = []
    cur: list[CtxPage] = []
    used = 0
    for p in pages:
        n = counter(f"=== Page 0 ===\n{p.text}")
        if n > budget:
            if cur:
                parts.append(cur)
                cur, used = [], 0
            parts.append([CtxPage(p.sha1, p.page, _truncate(p.text, budget, counter), p.rank, p.score)])
            continue
        if cur and (used + n > budget or (max_pages and len(cur) >= max_pages)):
            parts.append(cur)
            cur, used = [], 0
        cur.append(p)
        used += n
    if cur:
        parts.append(cur)
    return parts
