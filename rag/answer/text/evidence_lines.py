"""Candidate evidence lines of an open (text) answer: the sentences and table rows of the context pages that
name the question's topic, numbered, for the reader to pick from (rag.answer.text.text_evidence).

Why: asked for a free answer over whole pages, the 1.5B reader quoted a figure from the wrong row or year (a
segment table read as another segment, a tax rate from another line). Shown one short numbered list where each
table row carries its table's title and period columns, it only has to say which lines answer; what the answer
states is then read from those lines (and computed from them in code).

Contracts:
- :class:`Line`: one candidate: ``n`` (1-based number in the list), its page, ``kind`` ("sentence" | "row"), the
  text as shown, and for a row its table ``title``, ``columns`` (header text per value column) and ``cells``.
- ``candidate_lines(cfg, question, pages, counter, company) -> [Line]``: segments of the top
  ``answer.text_evidence_pages`` pages (sentences: :func:`rag.answer.common.focus._segments`; rows:
  :func:`rag.answer.common.md_tables.parse_tables`) scored by the question's topic terms
  (:func:`rag.answer.common.focus.topic_terms_for`; a row counts when its table names one: title, columns, labels);
  those with a hit ranked by the embedder's cosine to the question (a row by its label and table title), the
  best of each kind (sentences, rows) up to half of ``answer.text_evidence_lines`` each (what one kind leaves
  goes to the other) and ``answer.text_evidence_tokens`` tokens, then numbered in page-rank and page order.
- ``format_lines(lines) -> str``: the numbered list, grouped by page, each table's columns shown once above
  its rows ("columns: | 2022 | 2021 |").
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...core.config import RunConfig
from ..common.context import Counter, CtxPage
from ..common.focus import _segment_terms, _segments, topic_terms_for
from ..common.md_tables import parse_tables

LINE_CHARS = 320  # a long sentence is cut here: the list stays short for a 1.5B reader
TITLE_CREDIT = 0.5  # a term in the table's title / header counts half a term on the row itself
MIN_SENTENCE_CHARS = 40  # shorter non-table lines are headings or page furniture


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
    """Sentences (non-table lines) and table rows of one page, in page order; a row's ``title`` is its table's
    title line, else the heading or short line printed just above the table."""
    out: list[Line] = []
    text_lines = page.text.splitlines()
    prose = "\n".join(ln for ln in text_lines if not ln.lstrip().startswith("|") and not ln.lstrip().startswith("Table:"))
    for seg in _segments(prose):
        seg = seg.lstrip("# ").strip()
        if len(seg) >= MIN_SENTENCE_CHARS:
            out.append(Line(page, "sentence", _cut(seg), pos=len(out)))
    for t in parse_tables(page.text):
        columns, title = t.value_columns(), t.plain_title()
        section = ""
        for r in t.rows:
            if not r or not any(c.strip() for c in r[1:]):
                section = r[0].strip().rstrip(":") if r else section  # "Sales change analysis:" over its rows
                continue
            label, cells = r[0].strip(), [c.strip() for c in r[1:]]
            if not re.search(r"[A-Za-z]", label) or not any(re.search(r"\d", c) for c in cells):
                continue  # a header row left in the body ("| | 2022 | 2021") or a row of words: no figure to cite
            shown = f"{section}: {label}" if section and len(section) < 40 else label
            out.append(Line(page, "row", _cut(" | ".join([shown] + cells)), pos=len(out), title=title,
                            columns=columns, cells=cells, label=label))
    return out


def _table_terms(rows: list[Line], terms: tuple[str, ...]) -> frozenset[str]:
    """Topic terms of a table as a whole: its title, columns and every row label."""
    words = " ".join([rows[0].title] + rows[0].columns + [r.label for r in rows])
    return _segment_terms(words, terms)


def _meaning_text(ln: Line) -> str:
    return f"{ln.label} ({ln.title})" if ln.kind == "row" and ln.title else (ln.label or ln.text)


def _rank_by_meaning(cfg: RunConfig, question: str, lines: list[Line]) -> None:
    """``score`` of each line := its cosine to the question (the embedder of stage 04/05), plus a hundredth of its
    topic-term score (ties)."""
    if not lines:
        return
    from ...index import query_cosines

    for ln, sim in zip(lines, query_cosines(cfg, question, [_meaning_text(ln) for ln in lines])):
        ln.score = float(sim) + ln.score / 100


def candidate_lines(cfg: RunConfig, question: str, pages: list[CtxPage], counter: Counter,
                    company: str = "") -> list[Line]:
    """See module docstring."""
    terms = tuple(topic_terms_for(cfg, question, company))
    sentences: list[Line] = []
    rows: list[Line] = []
    for page in pages[: cfg.answer.text_evidence_pages]:
        lines = _page_lines(page)
        tables: dict[tuple, list[Line]] = {}
        for ln in lines:
            if ln.kind == "row":
                tables.setdefault((ln.title, tuple(ln.columns)), []).append(ln)
            else:
                ln.score = len(_segment_terms(ln.text, terms))
                if ln.score > 0:
                    sentences.append(ln)
        for group in tables.values():
            whole = _table_terms(group, terms)
            for ln in group:  # a row of a table on the topic counts, its own words more
                own = _segment_terms(ln.text, terms)
                ln.score = len(own) + TITLE_CREDIT * len(whole - own)
                if ln.score > 0:
                    rows.append(ln)
    # Words alone rank a long paragraph over the row that holds the figure ("Actual tax rates" for "effective
    # tax rate"): the lines that name the topic are ranked by the embedder's cosine to the question, so the
    # reader gets a short list (its pick call costs ~1 s per line shown on a loaded 2-core CPU).
    _rank_by_meaning(cfg, question, sentences + rows)
    # Sentences and rows compete apart: long paragraphs hit more terms than a row label, and a table row holds
    # the figures. Each kind gets half the list; what one leaves unused goes to the other.
    half = cfg.answer.text_evidence_lines // 2
    for pool in (sentences, rows):
        pool.sort(key=lambda x: (-x.score, x.page.rank, x.pos))
    quota = {"sentence": max(half, cfg.answer.text_evidence_lines - len(rows)),
             "row": max(cfg.answer.text_evidence_lines - half, cfg.answer.text_evidence_lines - len(sentences))}
    kept: list[Line] = []
    used = 0
    taken = {"sentence": 0, "row": 0}
    for ln in sorted(sentences + rows, key=lambda x: (-x.score, x.page.rank, x.pos)):
        cost = counter(ln.text) + 4
        if taken[ln.kind] >= quota[ln.kind] or used + cost > cfg.answer.text_evidence_tokens:
            continue
        kept.append(ln)
        taken[ln.kind] += 1
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
