"""Is a names/name answer printed next to words that state the event the question asks about?

Why: asked "What are the names of new products launched by X?" or "...new executives...", the 1.5B
reader lists names printed anywhere in its context (a product table, the executive officers, the
subsidiaries), so names questions whose gold is N/A came back with lists (erc2-val: 1 of 6 answered N/A).
This is the names counterpart of :mod:`rag.answer.numbers.figure_check` (a figure's line must name the metric).

Contracts:
- Events file (``answer.events_file``, TOML, relative to the project root): ``[[topic]]`` with ``name``,
  ``when`` (regexes searched in the question after :func:`rag.core.questions.search_text`) and
  ``events`` (regexes searched in the words around a name); all case-insensitive.
  :class:`EventsError` names the file when it is missing or malformed.
- ``event_topics(cfg, question) -> list[EventTopic]``: topics whose ``when`` matches; ``[]`` means the
  question is not checked (its names pass).
- ``name_has_event(name, texts, topics, window) -> bool``: some text prints ``name`` (case-folded, as
  a phrase) with an ``events`` match of some topic within ``window`` words before or after it.
- ``check_names(cfg, question, names, texts) -> (kept, dropped)``: ``names`` split, order kept.
- ``pages_state_event(cfg, question, texts) -> bool``: some text prints an event of a matched topic
  (boolean questions, ``answer.require_event_for_true``); a question matching no topic passes.
- ``events_version(cfg) -> str``: the file's content hash (stage 06's key while the check is on).
"""
from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

from ...core.config import RunConfig, project_path
from ...core.questions import search_text
from ...core.topic_file import read_topics

_TOKEN = re.compile(r"\S+")


class EventsError(ValueError):
    """The events file is missing or malformed; the message names the file."""


class EventTopic(BaseModel):
    name: str
    when: list[re.Pattern]
    events: list[re.Pattern]


def events_path(cfg: RunConfig) -> Path:
    return project_path(cfg.answer.events_file)


def _read(cfg: RunConfig) -> tuple[tuple[EventTopic, ...], str]:
    topics, digest = read_topics(events_path(cfg), "answer.events_file", ("when", "events"), ("when", "events"),
                                 EventsError)
    return tuple(EventTopic(**t) for t in topics), digest


def events_version(cfg: RunConfig) -> str:
    return _read(cfg)[1]


def event_topics(cfg: RunConfig, question: str, company: str = "") -> list[EventTopic]:
    q = search_text(question, company)
    return [t for t in _read(cfg)[0] if any(w.search(q) for w in t.when)]


def _phrase(name: str) -> re.Pattern:
    # The name's words in order, any whitespace or line break between them, not inside a longer word.
    words = name.split()
    return re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, words)) + r"(?!\w)", re.I)


def name_has_event(name: str, texts: list[str], topics: list[EventTopic], window: int) -> bool:
    """See module docstring. ``window`` counts whitespace-separated words on each side of the name."""
    if not name.split():
        return False
    rx = _phrase(name)
    for text in texts:
        for m in rx.finditer(text):
            before = _TOKEN.findall(text[: m.start()])[-window:]
            after = _TOKEN.findall(text[m.end():])[:window]
            around = " ".join(before + [m.group(0)] + after)
            if any(e.search(around) for t in topics for e in t.events):
                return True
    return False


def pages_state_event(cfg: RunConfig, question: str, texts: list[str], company: str = "") -> bool:
    """Does some text print an ``events`` match of a topic the question matches? True when none matches
    (the question is not checked)."""
    topics = event_topics(cfg, question, company)
    return not topics or any(e.search(t) for t in texts for tp in topics for e in tp.events)


def check_names(cfg: RunConfig, question: str, names: list[str], texts: list[str],
                company: str = "") -> tuple[list[str], list[str]]:
    """``(kept, dropped)`` of ``names``; everything is kept when no topic matches the question."""
    topics = event_topics(cfg, question, company)
    if not topics:
        return list(names), []
    kept, dropped = [], []
    for n in names:
        (kept if name_has_event(n, texts, topics, cfg.answer.event_window_words) else dropped).append(n)
    return kept, dropped
