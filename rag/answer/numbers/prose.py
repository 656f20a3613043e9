"""Figures printed in sentences (stage 06, number questions): candidates beside the table ones.

Why: many asked figures are never a table row — staff counts, patents, MW of capacity, people let go,
spending on a named programme, a total revenue quoted in the letter to shareholders. With table
candidates only, such a question has no candidate and is answered N/A although its page was read.

Contracts (what the question asks, percent / count / money: :mod:`rag.answer.numbers.prose_kinds`; the noun after a
count: :mod:`rag.answer.numbers.prose_counts`):
- ``prose_candidates(cfg, question, pages, report_currency, company) -> (kept, dropped)``: ``kept`` are
  :class:`rag.answer.numbers.figures.Candidate` records (``source="prose"``, ``label`` = the words around the
  figure), best first, one per distinct value, at most ``answer.prose_max_candidates``; ``dropped`` lists
  every number printed near the metric's words that was not kept, with why (``{"printed", "page",
  "words", "reason"}``), at most :data:`DROPPED_MAX`. A bare "$" is the report's dollar
  (:func:`report_dollar`: the one the pages say it is presented in, else the tables' unit lines').
- A number is a candidate when the words around it (``answer.prose_window_words`` before / after, within
  its sentence) name the metric: at least ``answer.prose_min_share`` of the question's metric stems
  (:mod:`rag.answer.numbers.figure_check`, synonyms included), or a multi-word term of the question's search
  lexicon topics (``prompts/search/lexicon.toml``: "issued patents", "workforce reduction") scoring
  :data:`LEXICON_SCORE`. When the metric names a thing (:func:`named_terms`: its capitalized words other
  than the first, "CDX-585 program", "LinkedIn members") the words must name it too.
- Unit, scale and currency come from the figure's own words ("$406.1 million", "1,300 employees",
  "250 MW"); the period (:func:`year_of`): the year the words right after the figure name ("... in 2022",
  "as of December 31, 2022"), else the last year before it. A figure dated other than the report's year
  (the tables' ``report_year``, else the latest "as of <date>" year of the pages' sentences; with neither,
  a later year in its own sentence) is dropped, and so is the first figure of "from X to Y", "compared
  with X", "(2021: X)".
- Also dropped, each with its reason: years, dates, references (note, page, phase, 401(k)), page numbers
  and footnote markers, numbers in a run of numbers (a table printed as text), changes ("reduced by 120",
  "an increase of 12%") unless the question asks about a change (then a change word must be next to the
  figure), one of :data:`PARTS_MIN`+ figures of one noun in a sentence (a breakdown), and measures the
  question does not name ("71,000 square feet").
- The same checks as table candidates: a percentage question takes printed percentages only and no
  other question does; a question naming a currency takes only figures printed with that currency
  ("$" resolved to the report's dollar); a count question ("number of", staff...) takes no amount of
  money; an amount question takes no bare count.
- Scores are on the table candidates' scale (share of the metric's words) less :data:`PROSE_PENALTY` (a
  sentence is looser than a labelled row), :data:`DISTANCE_PENALTY` per word between the figure and the
  nearest metric word and ``figures.RANK_PENALTY`` per page rank.
Sentences, dates and the report's dollar: :mod:`rag.answer.numbers.prose_period`; the figures a sentence prints and
which are no value (years, dates, references...): :mod:`rag.answer.numbers.prose_figures`.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Any

from . import figure_check as metric
from ..common import printed as nums
from ...core.config import RunConfig
from ...core.questions import search_text
from ..common.context import CtxPage
from ...clean import units
from .figures import RANK_PENALTY, Candidate, dedupe
from .prose_counts import counted_noun, noun_fit
from .prose_figures import _Hit, _figures, _in_asked_name, _is_year_or_date, _next_word
from .prose_kinds import _MEASURE, _kinds
# A page's sentences, the year a figure is dated to, the report's year and dollar.
from .prose_period import YEAR, page_sentences, page_year, report_dollar, year_of

# ---- scoring constants (what a prose candidate is; the knobs of a run are in AnswerConfig) -------------
PROSE_PENALTY = 0.1  # a sentence names its figure less reliably than a table row its cell
DISTANCE_PENALTY = 0.02  # per word between the figure and the nearest word of the metric
LEXICON_SCORE = 0.8  # a multi-word lexicon term of the question's topic next to the figure
DROPPED_MAX = 40  # dropped numbers kept in the debug record
WORDS_CHARS = 160  # the words around the figure shown to the picker

# Words that make the figure after them an earlier period's or another basis's.
_EARLIER = re.compile(r"(?i)(?:\bfrom|\bcompared (?:to|with)|\bversus|\bvs\.?|\bagainst|\bup from|\bdown from|"
                      r"\bprior year(?:'s)?(?: of)?|\blast year(?:'s)?(?: of)?|\bpreviously|\(\s*(?:19|20)\d\d\s*[:=])"
                      r"\s*(?:the\s+)?(?:US\$|A\$|[$€£¥]|approximately|about|around)?\s*$")
_CHANGE = re.compile(r"(?i)^\s*(?:%|per\s?cent|percent)?\s*(?:increase|decrease|growth|decline|rise|drop|higher|"
                     r"lower|more|less|fewer|up|down|improvement|reduction)\b")
# "reduced our workforce by 120", "grew by 40 stores": a change; the level is asked unless the question is
# about the change itself (people let go, openings, new stores).
_BY_CHANGE = re.compile(r"(?i)\b(?:by|reduced|reduction of|cut|eliminated|added|increased|decreased|grew|fell|rose|"
                        r"terminated|hired|laid off|let go|dismissed)"
                        r"(?:\s+(?:approximately|about|around|some|over|nearly|almost|more than|less than|fewer than|"
                        r"up to))?\s*(?:US\$|[$€£¥])?\s*$"
                        r"|\bby\s+(?:[a-z]+\s+)?\d+(?:\.\d+)?\s?%,?\s+or\s*$")  # "by approximately 67%, or 12 employees"
_ASKS_CHANGE = re.compile(r"(?i)\b(?:laid off|let go|layoffs?|redundanc|reduc|cut|eliminat|terminat|severance|"
                          r"new|openings?|opened|closed|closures?|added|additions?|increase|decrease|growth|change)\w*")
# A share's par (nominal, face) value printed in a sentence ("Common stock, $0.01 par value", "par value $0.01 per
# share"): the face value of one share, never an amount of equity, earnings or a dividend.
_PAR_AFTER = re.compile(r"(?i)^\s*(?:per share\s+)?(?:par|nominal|stated|face)\s+value\b")
_PAR_BEFORE = re.compile(r"(?i)\b(?:par|nominal|stated|face)\s+value(?:\s+of)?\s*(?:US\$|[$€£¥])?\s*$")
_ASKS_PAR = re.compile(r"(?i)\b(?:par|nominal) value")  # a question asking for it keeps such figures
_WORD = re.compile(r"\S+")
PARTS_MIN = 3  # figures in one sentence followed by the same noun ("3 stores in Delaware, 49 stores in ...")


def named_terms(question: str, company: str = "") -> set[str]:
    """Stems of the metric's named things (:func:`rag.answer.numbers.figure_check.named_words`: "CDX-585 program",
    "LinkedIn members"). When there are any, a sentence must name one: a programme's spend is not the
    company's total R&D, a product's users are not all users."""
    return metric._stems(" ".join(metric.named_words(question, company))) - (metric._stems(company) if company else set())


def _lexicon_phrases(cfg: RunConfig, question: str, company: str) -> list[str]:
    """Multi-word terms of the search-lexicon topics the question matches (single words are the metric's
    own stems or synonyms, counted by figure_check; a lone "employees" would name every staff count)."""
    from ...retrieve.query import lexicon_terms

    try:
        terms = lexicon_terms(cfg, search_text(question, company))
    except Exception:  # noqa: BLE001 - a missing lexicon only removes this help (stage 05 reports it)
        return []
    return [t.lower() for t in terms if len(t.split()) >= 2]


def _window(sentence: str, a: int, b: int, before: int, after: int) -> tuple[list[str], list[str]]:
    left = _WORD.findall(sentence[:a])[-before:] if before else []
    right = _WORD.findall(sentence[b:])[:after] if after else []
    return left, right


def _metric_fit(left: list[str], right: list[str], terms: set[str], phrases: list[str],
                min_share: float) -> tuple[float, int] | None:
    """(score, words between figure and nearest metric word) or None when the window does not name it."""
    words = [*left, *right]
    pos = [len(left) - i for i in range(len(left))] + [i + 1 for i in range(len(right))]
    best: tuple[float, int] | None = None
    if terms:
        stems = [metric._stems(w) for w in words]
        hit = {t for s in stems for t in terms if any(x.startswith(t) or t.startswith(x) for x in s)}
        share = len(hit) / len(terms)
        if (hit or min_share <= 0) and share >= min_share - 1e-9:  # 0: every figure (rag.answer.numbers.metric_choice)
            dist = min((p for p, s in zip(pos, stems) if any(x.startswith(t) or t.startswith(x) for x in s for t in terms)),
                       default=1)
            best = (share, dist - 1)
    text = " ".join(words).lower()
    for ph in phrases:
        i = text.find(ph)
        if i >= 0:
            k = len(text[:i].split())  # the phrase's first word's index in ``words``
            dist = min(abs(pos[j]) for j in range(k, min(len(words), k + len(ph.split()))))
            if best is None or LEXICON_SCORE > best[0]:
                best = (LEXICON_SCORE, dist - 1)
    return best


def prose_candidates(cfg: RunConfig, question: str, pages: list[CtxPage], report_currency: str | None,
                     company: str = "", context_pages: list[CtxPage] | None = None
                     ) -> tuple[list[Candidate], list[dict[str, Any]]]:
    """Candidate figures of the question's metric printed in the sentences of ``pages`` (module docstring);
    ``context_pages`` (default ``pages``) say which dollar a bare "$" is (:func:`report_dollar`)."""
    a = cfg.answer
    terms = metric.metric_terms(question, company)
    phrases = _lexicon_phrases(cfg, question, company)
    named = named_terms(question, company)
    acr = metric.acronyms(question, company)
    if not terms and not phrases:
        return [], []
    pct, count, money = _kinds(question, company)
    counted = counted_noun(cfg, question, company, terms) if count else None
    asked = nums.question_currency(question)
    per_share = nums.asks_per_share(question)
    changes = bool(_ASKS_CHANGE.search(search_text(question, company)))
    asks_par = bool(_ASKS_PAR.search(question))
    dollar = report_dollar(context_pages or pages, report_currency)
    year = page_year(pages)
    before, after = a.prose_window_words
    found: list[Candidate] = []
    dropped: list[dict[str, Any]] = []

    def drop(h: _Hit, p: CtxPage, words: str, why: str) -> None:
        if len(dropped) < DROPPED_MAX:
            dropped.append({"printed": h.printed, "page": p.page, "words": words[:WORDS_CHARS], "reason": why})

    for p in pages:
        for s in page_sentences(p.text):
            hits = _figures(s, dollar)
            nouns = Counter(_next_word(s, h) for h in hits)
            for h in hits:
                left, right = _window(s, h.first, h.end, before, after)
                if acr:  # "NAV" next to the figure names "Net asset value"
                    left, right = (metric.expand_acronyms(" ".join(w), acr).split() for w in (left, right))
                fit = _metric_fit(left, right, terms, phrases, a.prose_min_share)
                if fit and counted and not (h.currency or h.percent):
                    fit = noun_fit(fit, counted, s[h.end:], lambda rest: _metric_fit(left, right, rest, phrases, 1.0))
                if fit is None:
                    continue  # not near the metric's words: not listed (every number of the page would be)
                if named and not named & {t for w in [*left, *right] for t in metric._stems(w)
                                          if any(t.startswith(n) or n.startswith(t) for n in named)}:
                    fit = None
                if fit is None:
                    continue
                words = " ".join([*left, h.printed, *right])
                why = _is_year_or_date(s, h)
                if why is None and _in_asked_name(s, h, question):
                    why = "part of a name the question uses ('Microsoft 365')"
                if why is None and _EARLIER.search(s[max(0, h.first - 30):h.first]):
                    why = "an earlier period's or another basis's figure (from / compared with / prior year)"
                if why is None and changes and not _ASKS_CHANGE.search(words):
                    why = "the question asks about a change, no change word next to the figure"
                if why is None and not changes and _BY_CHANGE.search(s[max(0, h.start - 40):h.start]):
                    why = "a change ('reduced by', 'grew by'), the level is asked"
                if why is None and not asks_par and (
                        _PAR_AFTER.match(s[h.end:]) or _PAR_BEFORE.search(s[max(0, h.start - 40):h.start])):
                    why = "a share's par value, not an amount of the metric"
                if why is None and _CHANGE.match(s[h.end:]):
                    why = "a change, not a level"
                if why is None and nouns[_next_word(s, h)] >= PARTS_MIN and _next_word(s, h):
                    why = f"one of {nouns[_next_word(s, h)]} figures of '{_next_word(s, h)}' in one sentence (a breakdown)"
                if why is None and (m := _MEASURE.match(s[h.end:])) and m.group(1).lower() not in question.lower():
                    why = f"measured in '{m.group(1)}', not asked"
                if why is None and pct != h.percent:
                    why = "a percentage, not asked" if h.percent else "not a percentage, one is asked"
                if why is None and count and (h.currency or h.factor > 1 and not right):
                    why = "an amount of money, a count is asked" if h.currency else "scaled amount, a count is asked"
                if why is None and money and not pct and not h.currency:
                    why = "no currency printed with the figure, an amount is asked"
                if why is None and asked and h.currency and h.currency != asked:
                    why = f"printed in {h.currency}, {asked} is asked"
                if why is None and per_share and "share" not in words.lower():
                    why = "no 'per share' next to the figure"
                fy = year_of(s, h.first, h.end)
                if why is None and year and fy and fy != year:
                    why = f"dated {fy}, the report's year is {year}"
                if why is None and not year and fy and (later := max(map(int, YEAR.findall(s)))) > fy:
                    why = f"dated {fy}, its sentence names {later}"
                if why is not None:
                    drop(h, p, words, why)
                    continue
                score, dist = fit
                value = h.value * (1 if pct or per_share else h.factor)
                unit = "%" if pct else f"{h.currency} per share" if per_share else \
                    (f"{units.SCALE_NAMES.get(h.factor, '')} of {h.currency}".strip() if h.factor > 1 else h.currency) \
                    if h.currency else ("count" if count else "as printed")
                found.append(Candidate(
                    label=words[:WORDS_CHARS], period=str(fy or year or ""), printed=h.printed,
                    value=int(value) if float(value).is_integer() else value, factor=1 if pct else h.factor,
                    unit=unit or "as printed", currency=h.currency, sha1=p.sha1, page=p.page, rank=p.rank,
                    title="sentence", score=score - PROSE_PENALTY - DISTANCE_PENALTY * dist - RANK_PENALTY * p.rank,
                    notes=["prose"] + ([] if fy else ["period not printed in the sentence"]), source="prose"))
    return dedupe(found)[: a.prose_max_candidates], dropped
