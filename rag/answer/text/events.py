"""Which events of a kind a filing reports in the years asked, answered with its own sentences (stage 06,
``answer.text_events``): "What are major acquisitions that Walmart has done in FY2020, FY2019 and FY2018?".

Why: asked for a free answer, the 1.5B reader listed divestitures for acquisitions, one year of three, the wrong
fiscal year, or segment names (data/fb-gen's dg10, tuning filings: 2 of 6). A filing states each such event, or
that there was none, in a sentence naming its year ("In August 2018, the Company acquired 81 percent of ...
Flipkart", "There were no acquisitions that closed during the year ended December 31, 2022").

Contracts:
- ``events_ask(question) -> EventsAsk | None``: an open question whose first sentence asks what (the major, main,
  key...) events of a kind were ("What are major acquisitions ..."): a plural noun of an action (-tions, -tures,
  -ments, -sals: acquisitions, divestitures, investments, disposals) and at least one year. None otherwise
  ("What are the geographies ...": no action noun).
- ``answer_events(cfg, question, pages) -> dict | None``: up to ``EVENT_SENTENCES`` sentences of the first
  ``answer.text_drivers_pages`` pages of at least ``MIN_WORDS`` words that say the filer did it ("we acquired",
  "the Company acquired": a past tense of the noun's stem, its first ``STEM`` letters) or that there was none ("no
  acquisitions") and name one of the asked years, each once; for "major" (largest, significant, material) events
  the sentence printing the largest dollar amount first; then closest in meaning to the question's first sentence
  (:func:`rag.index.query_cosines`); quoted with their pages in page order. The
  :func:`rag.answer.fuse.answer_pages` result shape (``interpretation["events"]``); value None when the question
  asks no such list or no sentence qualifies (the reader answers then, the record says why).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...core.config import RunConfig
from ..common import printed as nums
from ..common.context import CtxPage
from ..computed.formulas import question_years
from ..numbers.prose_period import YEAR, page_sentences
from .quotes import quoted, sentence_key

EVENT_SENTENCES = 3  # an answer of at most three sentences
STEM = 5  # "acquisitions" and "acquired" share "acqui"
MIN_WORDS = 6  # a heading ("2022 acquisitions:") is no sentence

_ASK = re.compile(r"^\s*(?:what|which)\s+(?:are|were|have\s+been)\s+(?:the\s+)?(?:(?:major|main|key|significant|"
                  r"notable|largest|biggest|material)\s+)?(?P<noun>[a-z]+(?:tions|tures|ments|sals))\b", re.I)


@dataclass(frozen=True)
class EventsAsk:
    stem: str  # "acqui"
    years: tuple[int, ...]
    major: bool = False  # "major", "largest", "significant", "material": the biggest first


_MAJOR = re.compile(r"\b(?:major|largest|biggest|significant|material)\b", re.I)
_MONEY = re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)\s*(billion|million|thousand)?", re.I)


def _amount(sentence: str) -> float:
    """The largest dollar amount the sentence prints (0 when none)."""
    return max((float(m.group(1).replace(",", "")) * nums.SCALE_WORDS.get((m.group(2) or "").lower(), 1)
                for m in _MONEY.finditer(sentence)), default=0.0)


def events_ask(question: str) -> EventsAsk | None:
    """See module docstring."""
    first = question.split("?")[0]
    m = _ASK.search(first)
    years = tuple(sorted(set(question_years(first))))
    if not m or not years:
        return None
    return EventsAsk(m.group("noun")[:STEM].lower(), years, bool(_MAJOR.search(m.group(0))))


def _sentences(pages: list[CtxPage], ask: EventsAsk) -> list[tuple[str, CtxPage, int]]:
    """Sentences with a word of the stem naming an asked year, each once: (text, page, position on the page)."""
    stem = re.escape(ask.stem)
    # the filer did it ("we acquired", "the Company acquired", "which we acquired"), or says there was none
    done = re.compile(r"\b(?:we|the\s+company|it)\s+(?:\w+\s+)?" + stem + r"\w*ed\b|\bno\s+" + stem, re.I)
    out: list[tuple[str, CtxPage, int]] = []
    seen: set[str] = set()
    for page in pages:
        for i, s in enumerate(page_sentences(page.text, figures_only=False)):
            if len(s.split()) < MIN_WORDS or not done.search(s):
                continue
            if not {int(y) for y in YEAR.findall(s)} & set(ask.years):
                continue
            key = sentence_key(s)
            if key not in seen:
                seen.add(key)
                out.append((s, page, i))
    return out


def answer_events(cfg: RunConfig, question: str, pages: list[CtxPage]) -> dict[str, Any] | None:
    """See module docstring."""
    from ...index import query_cosines

    ask = events_ask(question)
    if ask is None:
        return None
    found = _sentences(pages[: cfg.answer.text_drivers_pages], ask)
    info: dict[str, Any] = {"stem": ask.stem, "years": list(ask.years)}
    if not found:
        info["sentences"] = f"no sentence of the first pages names '{ask.stem}...' and an asked year"
        return {"value": None, "calls": [], "interpretation": {"events": info}}
    cos = query_cosines(cfg, question.split("?")[0], [s for s, _, _ in found])
    best = sorted(range(len(found)), key=lambda i: (-_amount(found[i][0]) if ask.major else 0.0, -float(cos[i])))
    best = best[:EVENT_SENTENCES]
    best.sort(key=lambda i: (found[i][1].rank, found[i][2]))  # read in the filing's order
    info["sentences"] = [{"page": found[i][1].page, "cos": round(float(cos[i]), 4), "text": found[i][0]} for i in best]
    value, cited = quoted([found[i][:2] for i in best])
    return {"value": value, "cited": cited, "calls": [], "interpretation": {"events": info}, "answering_part": cited}
