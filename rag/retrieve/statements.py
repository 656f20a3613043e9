"""Primary financial statement pages as candidates (stage 05).

Why: a question naming a statement or a line item printed there ("net PPNE shown in the balance sheet",
"FY2021 capital expenditure ... statement of cash flows") is answered from that statement's page, which the
chunk search often ranks below MD&A or note pages quoting the same words. On financebench-dev the gold
evidence page was outside the top 10 for 23 of 65 questions, 14 of them number questions about statement
items (RESULTS.md, issue 31).

Contract:
- ``statements_hash(cfg)``: content hash of ``retrieve.statements`` ("" when ``retrieve.statement_pages`` is 0);
  05's currency key. A missing or bad file raises :class:`StatementsError` naming the file.
- ``asked_statements(cfg, query) -> [name]``: the statements whose ``when`` matches the question (file order).
- ``statement_pages(cfg, names, texts) -> [(name, page)]``: for each named statement, up to
  ``retrieve.statement_pages`` pages (1-based) that print at least ``retrieve.statement_min_figures`` figures
  with a thousands separator or decimals (a table of contents names the statement but prints none) and
  either carry the statement's ``title`` in their first ``retrieve.statement_title_chars`` characters
  (lowercased, every space removed) or print every ``body`` line label of it anywhere (same spelling: a
  balance sheet's "total assets" and "total liabilities", when the text layer lost its title). Order: pages
  with both the title and the body first (a note page quoting "our Consolidated Balance Sheets" has the
  title words, not the body), then body only, then title only; within each, pages matching an earlier
  ``title`` pattern first (the file lists the formal title first), then page order.
- ``add_statement_pages(cfg, query, pages, texts) -> pages``: those pages first (scores ``retrieval`` and
  ``final`` 1.0, ``CandidatePage.statement`` the statement's name), then the searched pages without them, cut to
  ``retrieve.top_pages``. Unchanged when no statement is asked or none is found.
"""
from __future__ import annotations

import re
from pathlib import Path

from ..core.config import RunConfig, project_path
from ..core.records import CandidatePage
from ..core.topic_file import read_topics

# A figure as statements print it: 1,234 / (1,234) / 12.5 (page numbers and years have neither). Not a
# percentage ("40.9 %": a common-size summary of the statement) and not a number opening its line ("3.1", an
# exhibit or section number: the exhibit index names every statement).
_FIGURE = re.compile(r"(?<![\d,.])(?:\(?\d{1,3}(?:,\d{3})+(?:\.\d+)?\)?|(?<!^)(?<!\n)\b\d+\.\d+\b)(?![\d,.]|\s?%)")


class StatementsError(ValueError):
    """The statements file is missing or malformed; the message names the file."""


def _path(cfg: RunConfig) -> Path:
    return project_path(cfg.retrieve.statements)


def _topics(cfg: RunConfig):
    return read_topics(_path(cfg), "retrieve.statements", ("when", "title"), ("when", "title", "body"),
                       StatementsError, optional=("body",))


def statements_hash(cfg: RunConfig) -> str:
    return _topics(cfg)[1] if cfg.retrieve.statement_pages > 0 else ""


def asked_statements(cfg: RunConfig, query: str) -> list[str]:
    if cfg.retrieve.statement_pages <= 0:
        return []
    return [t["name"] for t in _topics(cfg)[0] if any(w.search(query) for w in t["when"])]


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text.lower())


def _first_match(patterns: list[re.Pattern], text: str) -> int | None:
    """Index of the first pattern found in ``text``, None when none is."""
    return next((i for i, rx in enumerate(patterns) if rx.search(text)), None)


def statement_pages(cfg: RunConfig, names: list[str], texts: dict[int, str]) -> list[tuple[str, int]]:
    r = cfg.retrieve
    topics = {t["name"]: t for t in _topics(cfg)[0]}
    out: list[tuple[str, int]] = []
    # each page's head (and, where a named statement has body labels, its whole text) without spaces, once:
    # text layers split words ("Consolidated Balance Shee t")
    figured = [p for p in sorted(texts) if len(_FIGURE.findall(texts[p])) >= r.statement_min_figures]
    heads = {p: _squeezed(texts[p][: r.statement_title_chars]) for p in figured}
    bodies = {p: _squeezed(texts[p]) for p in figured} if any(topics[n]["body"] for n in names) else {}
    for name in names:
        t = topics[name]
        # the first title pattern a page matches (the file lists the formal title first: "statements of income"
        # before "income statement", which "Selected Income Statement Data" summaries also print)
        titled = {p: i for p in figured if (i := _first_match(t["title"], heads[p])) is not None}
        bodied = {p for p in figured if t["body"] and all(rx.search(bodies[p]) for rx in t["body"])}
        found = sorted(set(titled) | bodied, key=lambda p: (p not in bodied or p not in titled, p not in bodied,
                                                             titled.get(p, len(t["title"])), p))
        out += [(name, p) for p in found[: r.statement_pages] if all(p != q for _, q in out)]
    return out


def added_page(sha1: str, page: int, texts: dict[int, str], added_as: str,
               searched: CandidatePage | None = None) -> CandidatePage:
    """A page 05 adds to the candidates (scores ``retrieval`` and ``final`` 1.0, ``statement`` = ``added_as``);
    a searched page keeps its search scores in a copy, so the caller's records stay as they were."""
    c = searched.model_copy(deep=True) if searched is not None else \
        CandidatePage(sha1=sha1, page=page, text=texts.get(page, ""))
    c.scores.update(retrieval=1.0, final=1.0)
    c.statement = added_as
    return c


def add_statement_pages(cfg: RunConfig, query: str, pages: list[CandidatePage],
                        texts: dict[int, str]) -> list[CandidatePage]:
    names = asked_statements(cfg, query)
    if not names or not pages:
        return pages
    sha1 = pages[0].sha1
    found = statement_pages(cfg, names, texts)
    if not found:
        return pages
    by_page = {p.page: p for p in pages}
    first = [added_page(sha1, page, texts, name, by_page.get(page)) for name, page in found]
    taken = {p.page for p in first}
    return (first + [p for p in pages if p.page not in taken])[: cfg.retrieve.top_pages]
