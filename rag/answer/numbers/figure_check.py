"""Does the line that prints a number answer's figure name the metric the question asks for?

A small model, asked for a metric a report does not state ("Gross margin" of a biotech without
revenue), often returns some other figure of the context. The printed-figure check passes (the digits
are there); this check asks that the figure's own line — a table row with its label and the table's
header row, or the words around the figure in a sentence — hold at least a share of the metric's words.

Contracts:
- ``metric_terms(question, company="") -> set[str]``: word stems of the metric asked for: the question
  minus ERC boilerplate, the company's name, question words, units/currency codes and generic words
  ("total", "value", "year"...). Stems are the first :data:`STEM_CHARS` letters of a word with inner
  hyphens removed ("non-performing" and "nonperforming" -> "nonpe"; "operations"/"operating" -> "opera").
  May be empty: then nothing can be judged and :func:`names_metric` returns True.
- ``figure_lines(text, printed) -> list[str]``: each table row of page Markdown printing the figure's
  digits as one number, joined with its table's first row (a column header may name the metric) and,
  with ``title_lines``, the non-table lines just above the table; on a text line, the words around the
  figure (:data:`WINDOW`).
- ``names_metric(text, printed, terms, title_lines, min_share, window) -> bool``: some figure line holds at least
  ``min_share`` of ``terms`` (at least one); words of one :data:`SYNONYMS` group count as the same term.
"""
from __future__ import annotations

import math
import re

from ..common import printed as nums
from ...core.questions import asking_part, search_text

# Words kept before / after the figure on a text (non-table) line.
WINDOW = (10, 6)
STEM_CHARS = 5  # prefix length: long enough to tell "gross" from "group", short enough for inflections
# Words of an ERC question that say how to answer or where, not which metric.
_GENERIC = frozenset("""
what was were is are the for of and or its their in on at to by from with within value values total
number amount amounts year years end period periods last latest current fiscal annual report reported
company group data available give list according listed mentioned did does has have any which
how much many per net average as a an this that yearend yearended endofyear endofperiod yearending off
during covered under
usd eur gbp jpy aud cad chf cny inr sek nok dkk hkd sgd nzd zar brl krw
""".split())
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


# Words reports use for the same thing (IFRS and US GAAP wording, plain synonyms): a stem of a group
# stands for the whole group, so "Net income" is named by "Profit for the year".
SYNONYMS = (
    ("income", "profit", "earnings"),
    ("revenue", "revenues", "sales", "turnover"),
    ("expenditure", "expenditures", "capex", "purchases"),
    ("employees", "headcount", "staff", "workforce", "personnel"),
    ("liabilities", "debt", "borrowings"),
    ("laid", "layoffs", "redundancies", "reduction", "terminated", "terminations"),  # "laid off" employees
)
_CANON = {w[:STEM_CHARS]: group[0][:STEM_CHARS] for group in SYNONYMS for w in group}


def _stems(text: str) -> set[str]:
    out = set()
    for w in _WORD.findall(text.lower()):
        w = w.replace("-", "")  # "year-end" -> "yearend", "non-performing" -> "nonperforming"
        if len(w) >= 3 and w not in _GENERIC:
            stem = w[:STEM_CHARS]
            out.add(_CANON.get(stem, stem))
    return out


def metric_terms(question: str, company: str = "") -> set[str]:
    """Stems of the metric's words (see module docstring); the company's own words never count."""
    # FinanceBench's instructions around its question name no metric (asking_part); "(in USD)", "(%)": units
    text = re.sub(r"\([^)]*\)", " ", search_text(asking_part(question), company))
    return _stems(text) - (_stems(company) if company else set())


# where the metric starts: "the value of <metric>", else "what was the <metric>" ("was the value of" is the first)
_METRIC_START = (re.compile(r"(?i)\bvalue of\s+(\S+)"), re.compile(r"(?i)\b(?:is|was|were) the\s+(\S+)"))
_QUESTION_WORDS = frozenset("what for according which how did does is was were the".split())
_PERIOD_WORD = re.compile(r"(?:fy|cy|q[1-4]|h[12])?'?\d{2,4}|q[1-4]\s?fy\d{2,4}|fy\d{2,4}q[1-4]")  # FY2019, Q2, 2022


def named_words(question: str, company: str = "") -> list[str]:
    """The metric's capitalized words other than its first, as printed ("CDX-585", "LinkedIn"), lowercased,
    without the company's words: the things a figure must belong to (a programme, a product)."""
    q = re.sub(r"\([^)]*\)", " ", search_text(question, company))
    first = _METRIC_START[0].search(q) or _METRIC_START[1].search(q)
    skip = {first.start(1)} if first else set()
    own = set(_WORD.findall(company.lower())) if company else set()
    return [w for m in re.finditer(r"\S+", q) if m.start() not in skip and m.start() > 0
            and any(c.isupper() for c in m.group(0)) and (w := re.sub(r"'s$", "", m.group(0).strip("?,.;:").lower()))
            and w not in _QUESTION_WORDS and w not in own and w not in _GENERIC and not _PERIOD_WORD.fullmatch(w)]


ACRONYM_WORDS = (3, 4)  # a metric's runs of this many words may be printed as their initials ("NAV", "GTV")


def acronyms(question: str, company: str = "") -> dict[str, str]:
    """Initialisms of runs of the metric's words -> the words: "Net asset value per share" gives "NAV" ->
    "Net asset value"; a report's row "NAV per Ordinary share (p)" then names the metric."""
    words = _WORD.findall(re.sub(r"\([^)]*\)", " ", search_text(question, company)))
    return {"".join(w[0] for w in run).upper(): " ".join(run)
            for n in ACRONYM_WORDS for i in range(len(words) - n + 1) if len(run := words[i:i + n]) == n}


def expand_acronyms(text: str, acr: dict[str, str]) -> str:
    """``text`` with each upper-case word that is a key of ``acr`` (:func:`acronyms`) followed by its words."""
    if not acr:
        return text
    return re.sub(r"\b[A-Z]{3,4}\b", lambda m: f"{m.group(0)} {acr[m.group(0)]}" if m.group(0) in acr else m.group(0),
                  text)


def _windows(line: str, spans: list[tuple[int, int]], before: int, after: int) -> list[str]:
    """Word windows around each span of the figure in a sentence line: a paragraph names many metrics,
    the words next to the figure name its own ("Net cash used in investing activities was $299.7
    million" under a "Cash Flows from ..." lead-in is not the operating cash flow)."""
    out = []
    for a, b in spans:
        left = line[:a].split()[-before:] if before else []
        right = line[b:].split()[:after] if after else []
        out.append(" ".join([*left, line[a:b], *right]))
    return out


def figure_lines(text: str, printed: str, title_lines: int = 0, window: tuple[int, int] = WINDOW) -> list[str]:
    """Lines printing the figure: a table row with its table's first row (and ``title_lines`` title lines
    above the table); a text line as word windows (``window`` = words before, after) around the figure."""
    lines = (text or "").splitlines()
    out = []
    for i, line in enumerate(lines):
        spans = nums.value_spans(line, printed)
        if not spans:
            continue
        if not line.lstrip().startswith("|"):
            out += _windows(line, spans, *window)
            continue
        start = i
        while start > 0 and lines[start - 1].lstrip().startswith("|"):
            start -= 1
        extra = [lines[start]]
        j = start - 1
        while j >= 0 and len(extra) <= title_lines:
            if lines[j].strip():
                extra.append(lines[j])
            j -= 1
        out.append("\n".join([line, *extra]))
    return out


def names_metric(text: str, printed: str, terms: set[str], title_lines: int = 0, min_share: float = 0.5,
                 window: tuple[int, int] = WINDOW) -> bool:
    """True when ``terms`` is empty or a line printing the figure (with its table context) holds at least
    ``min_share`` of the terms (at least one): "Year-end fleet average CO2 emissions" is not named by a
    "Fleet gross profit" row."""
    if not terms:
        return True
    need = max(1, math.ceil(min_share * len(terms) - 1e-9))
    return any(_matched(_stems(chunk), terms) >= need for chunk in figure_lines(text, printed, title_lines, window))


def _matched(stems: set[str], terms: set[str]) -> int:
    # Prefix either way: a short word's stem is the word itself ("flow" vs "flows" -> "flows").
    return sum(1 for t in terms if any(s.startswith(t) or t.startswith(s) for s in stems))
