"""Candidate evidence lines of an open (text) answer: the sentences and table rows of the context pages that
name the question's topic, numbered, for the reader to pick from (rag.answer.text_evidence).

Why: asked for a free answer over whole pages, the 1.5B reader quoted a figure from the wrong row or year (a
segment table read as another segment, a tax rate from another line). Shown one short numbered list where each
table row carries its table's title and period columns, it only has to say which lines answer; what the answer
states is then read from those lines (and computed from them in code).

Contracts:
- :class:`Line`: one candidate: ``n`` (1-based number in the list), its page, ``kind`` ("sentence" | "row"), the
  text as shown, and for a row its table ``title``, ``columns`` (header text per value column) and ``cells``.
- ``candidate_lines(cfg, question, pages, counter, company) -> [Line]``: segments of the top
  ``answer.text_evidence_pages`` pages (sentences: :func:`rag.answer.focus._segments`; rows:
  :func:`rag.answer.md_tables.parse_tables`) scored by the question's topic terms
  (:func:`rag.answer.focus.topic_terms_for`; a row also gets half credit for its table's title and header);
  those with a hit, best first, at most ``answer.text_evidence_lines`` and ``answer.text_evidence_tokens``
  tokens, then numbered in page-rank and page order.
- ``format_lines(lines) -> str``: the numbered list, grouped by page, each table's columns shown once above
  its rows ("columns: | 2022 | 2021 |").
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..core.config import RunConfig
from .context import Counter, CtxPage
from .focus import _segment_terms, _segments, topic_terms_for
from .md_tables import parse_tables

LINE_CHARS = 320  # a long sentence is cut here: the list stays short for a 1.5B reader
TITLE_CREDIT = 0.5  # a term in the table's title / header counts half a term on the row itself
MIN_SENTENCE_CHARS = 25  # shorter non-table lines are headings or page furniture


@dataclass
class Line:
    page: CtxPage
    kind: str  # "sentence" | "row"
    text: str  # as shown (a row: "label | v1 | v2")
    score: float = 0.0
    pos: int = 0  # order on its page
    title: str = ""
    columns: list[str] = field(default_factory=list)  # header text of each value column (rows only)
    cells: list[str] = field(default_factory=list)  # value cells as printed (rows only)
    label: str = ""
    n: int = 0  # number in the list (1-based), set by candidate_lines


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LINE_CHARS else text[: LINE_CHARS - 3].rstrip() + "..."


def _page_lines(page: CtxPage) -> list[Line]:
    """Sentences (non-table lines) and table rows of one page, in page order."""
    out: list[Line] = []
    prose = "\n".join(ln for ln in page.text.splitlines()
                      if not ln.lstrip().startswith("|") and not ln.lstrip().startswith("Table:"))
    for seg in _segments(prose):
        seg = seg.lstrip("# ").strip()
        if len(seg) >= MIN_SENTENCE_CHARS:
            out.append(Line(page, "sentence", _cut(seg), pos=len(out)))
    for t in parse_tables(page.text):
        ncol = max((len(r) for r in t.rows), default=0)
        columns = [" ".join(h[i] for h in t.header if i < len(h) and h[i]).strip() for i in range(1, ncol)]
        title = re.sub(r"^Table:\s*", "", t.title).strip()
        for r in t.rows:
            if not r or not any(c.strip() for c in r[1:]):
                continue  # a section heading row: its words reach the rows through the title only
            label, cells = r[0].strip(), [c.strip() for c in r[1:]]
            text = _cut(" | ".join([label] + cells))
            out.append(Line(page, "row", text, pos=len(out), title=title, columns=columns, cells=cells, label=label))
    return out


def candidate_lines(cfg: RunConfig, question: str, pages: list[CtxPage], counter: Counter,
                    company: str = "") -> list[Line]:
    """See module docstring."""
    terms = tuple(topic_terms_for(cfg, question, company))
    scored: list[Line] = []
    for page in pages[: cfg.answer.text_evidence_pages]:
        for ln in _page_lines(page):
            own = len(_segment_terms(ln.label if ln.kind == "row" else ln.text, terms))
            if ln.kind == "row":
                ctx = _segment_terms(" ".join([ln.title] + ln.columns), terms)
                ln.score = own + TITLE_CREDIT * len(ctx - _segment_terms(ln.label, terms))
            else:
                ln.score = own
            if ln.score > 0:
                scored.append(ln)
    scored.sort(key=lambda x: (-x.score, x.page.rank, x.pos))
    kept, used = [], 0
    for ln in scored:
        cost = counter(ln.text) + 4
        if len(kept) >= cfg.answer.text_evidence_lines or used + cost > cfg.answer.text_evidence_tokens:
            continue
        kept.append(ln)
        used += cost
    kept.sort(key=lambda x: (x.page.rank, x.pos))
    for i, ln in enumerate(kept, 1):
        ln.n = i
    return kept


def format_lines(lines: list[Line]) -> str:
    """The numbered list (module docstring)."""
    out: list[str] = []
    page, table = None, None
    for ln in lines:
        if ln.page is not page:
            page, table = ln.page, None
            out.append(f"Page {ln.page.page}:")
        if ln.kind == "row" and (ln.title, tuple(ln.columns)) != table:
            table = (ln.title, tuple(ln.columns))
            cols = " | ".join(c or "?" for c in ln.columns)
            out.append(f"  table{' ' + repr(ln.title) if ln.title else ''}, columns: | {cols} |")
        elif ln.kind != "row":
            table = None
        out.append(f"{ln.n}. {ln.text}")
    return "\n".join(out)
