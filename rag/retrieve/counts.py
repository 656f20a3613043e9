"""Pages that print the asked count in a sentence as candidates (stage 05).

Why: a count ("148 full-time employees", "19 offices", "a fleet of 19 vessels") is printed once, in a sentence
of a short section that dense and BM25 search rank below pages using the same noun more often (stock plans,
benefits): on erc2-val five value-gold count questions had no gold page in 05's top 10.

Contract:
- ``counts_hash(cfg)``: content hash of ``retrieve.counts`` ("" when ``retrieve.count_pages`` is 0), part of
  05's currency key.
- ``asked_counts(cfg, query) -> [topic]``: the count topics whose ``when`` matches the question (file order).
- ``counted_noun(cfg, query) -> (pattern, words) | None``: the pattern matches the start of the text right
  after a figure when a noun of an asked topic follows within ``retrieve.count_gap_words`` words (" Suezmax
  tankers as of ..."); ``words``: the query's words that asked the topic ("vessels", "branch"). None when no
  count is asked (stage 06 reads such a noun as naming the counted thing; ``count_pages`` not needed).
- ``count_pages(cfg, topics, texts) -> [(topic, page)]``: pages (1-based) printing a number followed within
  ``retrieve.count_gap_words`` words by a ``noun`` of a topic; the pages printing most such figures first, then
  page order; at most ``retrieve.count_pages`` in all.
- ``add_count_pages(cfg, query, pages, texts) -> pages``: those pages join after the pages added as statements
  (rag.retrieve.statements) and before the searched ones (scores ``retrieval`` and ``final`` 1.0,
  ``CandidatePage.statement`` "count:<topic>"), cut to ``retrieve.top_pages``. Unchanged when no count is
  asked, none is printed, or every such page is already a candidate.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from ..core.config import RunConfig, project_path
from ..core.records import CandidatePage
from ..core.topic_file import read_topics
from .statements import added_page

# A count as sentences print it: 148 / 1,700 / 5,700 (not a year: those are dropped below).
_NUMBER = r"(?<![\w.,$€£¥])(\d{1,3}(?:,\d{3})+|\d+)(?![\d,.]\d|%)"
_YEAR = re.compile(r"(?:19|20)\d\d")


class CountsError(ValueError):
    """The counts file is missing or malformed; the message names the file."""


def _path(cfg: RunConfig) -> Path:
    return project_path(cfg.retrieve.counts)


def _topics(cfg: RunConfig):
    return read_topics(_path(cfg), "retrieve.counts", ("when", "noun"), ("when", "noun"), CountsError)


def counts_hash(cfg: RunConfig) -> str:
    return _topics(cfg)[1] if cfg.retrieve.count_pages > 0 else ""


def _matching(cfg: RunConfig, query: str) -> list[dict]:
    return [t for t in _topics(cfg)[0] if any(w.search(query) for w in t["when"])]


def asked_counts(cfg: RunConfig, query: str) -> list[dict]:
    if cfg.retrieve.count_pages <= 0:
        return []
    return _matching(cfg, query)


def _noun_after(cfg: RunConfig, topics: list[dict]) -> str:
    """What follows a count: up to ``retrieve.count_gap_words`` words, then a noun of one of ``topics``."""
    nouns = "|".join(f"(?:{n.pattern})" for t in topics for n in t["noun"])
    return rf"\s+(?:[\w-]+\s+){{0,{cfg.retrieve.count_gap_words}}}?\b(?:{nouns})"


def counted_noun(cfg: RunConfig, query: str) -> tuple[re.Pattern, set[str]] | None:
    topics = _matching(cfg, query)
    if not topics:
        return None
    said = {m.group(0).lower() for t in topics for w in t["when"] for m in w.finditer(query)}
    return re.compile(_noun_after(cfg, topics), re.IGNORECASE), said


def _count_re(cfg: RunConfig, topic: dict) -> re.Pattern:
    return re.compile(_NUMBER + _noun_after(cfg, [topic]), re.IGNORECASE)


def count_pages(cfg: RunConfig, topics: list[dict], texts: dict[int, str]) -> list[tuple[str, int]]:
    hits: Counter[tuple[str, int]] = Counter()
    for t in topics:
        rx = _count_re(cfg, t)
        for page, text in texts.items():
            n = sum(1 for m in rx.finditer(text or "") if not _YEAR.fullmatch(m.group(1)))
            if n:
                hits[(t["name"], page)] = n
    out: dict[int, str] = {}  # page -> the topic it counts most for
    for name, page in sorted(hits, key=lambda k: (-hits[k], k[1])):
        out.setdefault(page, name)
    return [(name, page) for page, name in out.items()][: cfg.retrieve.count_pages]


def add_count_pages(cfg: RunConfig, query: str, pages: list[CandidatePage],
                    texts: dict[int, str]) -> list[CandidatePage]:
    topics = asked_counts(cfg, query)
    if not topics or not pages:
        return pages
    have = {c.page for c in pages}
    found = [(n, p) for n, p in count_pages(cfg, topics, texts) if p not in have]
    if not found:
        return pages
    added = [added_page(pages[0].sha1, page, texts, f"count:{name}") for name, page in found]
    lead = [p for p in pages if p.statement]  # the statement pages stay first
    return (lead + added + [p for p in pages if not p.statement])[: cfg.retrieve.top_pages]
