"""The figures a sentence prints (stage 06, number questions: :mod:`rag.answer.numbers.prose`'s candidates), and which
of them are no value: years, dates, references, parts of names, page numbers, runs of numbers, footnote markers.

Contracts:
- ``_Hit``: one printed figure: as printed, its value, percent or not, the scale factor its words give, its currency
  (a bare "$" resolved to the report's dollar), and where it stands in the sentence.
- ``_figures(sentence, dollar) -> [_Hit]``: every figure of ``sentence`` with its currency before it ("US$", "€",
  "USD ") and its percent sign, scale ("million", "bn", "k") and currency word after it.
- ``_is_year_or_date(sentence, hit) -> reason | None``: why the figure is no value (a year, a date, a reference such
  as note / page / phase / 401(k), part of a name or code, a page number, in a run of numbers, a footnote marker).
- ``_next_word(sentence, hit)``: the word right after the figure (lower case); ``_in_asked_name(sentence, hit,
  question)``: the figure and the capitalized word before it are printed together in the question (a product's
  name, "Microsoft 365").
The names keep their leading underscore: only :mod:`rag.answer.numbers.prose` uses them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..common import printed as nums
from .prose_period import YEAR

# A figure with its currency before and its scale / unit after: "US$406.1 million", "1,300 employees".
_FIGURE = re.compile(
    r"(?P<cur>US\$|A\$|AU\$|C\$|NZ\$|HK\$|S\$|R\$|[$€£¥₹]|\b(?:USD|EUR|GBP|AUD|CAD|CHF|JPY|NZD|HKD|SGD|SEK|NOK|DKK)\s?)?"
    r"(?P<num>(?<![\w.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d|,\d)|(?<![\w.,])\d+(?:\.\d+)?(?!\d|,\d))"
    r"(?P<pct>\s?%|\s?per\s?cent\b|\s?percent\b)?"
    r"(?:\s?(?P<scale>thousand|million|billion|bn|mn|mln|m|k)\b)?"
    r"(?:\s?(?P<cur2>USD|EUR|GBP|AUD|CAD|dollars|euros?|pounds))?")
_MONTH = re.compile(r"(?i)\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?$")
_MONTH_AFTER = re.compile(r"(?i)^\s*(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b")
_NUMBER_WORDS = (r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
                 r"sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:-\w+)?")
_NOTE_REF = re.compile(r"(?i)\b(?:note|notes|page|pages|section|item|part|phase|tier|level|schedule|figure|"
                       r"chapter|article|rule|form|no\.)\s*$")


@dataclass
class _Hit:
    printed: str
    value: float
    percent: bool
    factor: int
    currency: str | None
    start: int  # the number's digits
    end: int  # the end of the figure (scale / currency words included)
    first: int  # the start of the figure (its currency sign included)


def _figures(sentence: str, dollar: str) -> list[_Hit]:
    out = []
    for m in _FIGURE.finditer(sentence):
        p = nums.parse_printed(m.group("num"))
        if p is None:
            continue
        scale = (m.group("scale") or "").lower()
        factor = nums.SCALE_WORDS.get(scale, 1) if scale else 1
        cur = (m.group("cur") or "").strip() or (m.group("cur2") or "").strip()
        code = nums.currency_in(cur) if cur else None
        if cur and code is None and cur.lower().startswith("euro"):
            code = "EUR"
        if cur.lower() == "pounds":
            code = "GBP"
        out.append(_Hit(m.group(0).strip(), p.value, bool(m.group("pct")), factor,
                        nums.resolve_dollar(code, dollar) if code else None, m.start("num"), m.end(), m.start()))
    return out


def _in_asked_name(sentence: str, h: _Hit, question: str) -> bool:
    """The figure and the capitalized word before it are printed together in the question ("Microsoft 365
    Consumer subscribers"): a product's name, not a value."""
    m = re.search(r"([A-Z][\w&-]*)\s+$", sentence[:h.first])
    return bool(m) and re.search(rf"\b{re.escape(m.group(1))}\s+{re.escape(h.printed)}\b", question) is not None


def _next_word(sentence: str, h: _Hit) -> str:
    m = re.match(r"\s*([^\W\d_]+)", sentence[h.end:])
    return m.group(1).lower() if m else ""


def _is_year_or_date(sentence: str, h: _Hit) -> str | None:
    raw = sentence[h.start:h.end]
    if not h.currency and not h.percent and h.factor == 1 and YEAR.fullmatch(raw.strip()):
        return "a year"
    before = sentence[max(0, h.start - 12):h.start].rstrip()
    if _MONTH.search(before) or _MONTH_AFTER.match(sentence[h.end:]):
        return "a date"
    if _NOTE_REF.search(sentence[max(0, h.start - 10):h.start]) or re.match(r"\s?\(k\)", sentence[h.end:]):
        return "a reference (note, page, phase, 401(k)...)"
    if re.search(r"[A-Za-z]-\s?$", sentence[:h.first]) or re.match(r"-[A-Za-z]", sentence[h.end:]):
        return "part of a name or code ('COVID-19', '10-K')"
    if not sentence[h.end:].strip(" .") and re.search(r"[.!?:]\s*$", sentence[:h.first]):
        return "a page number (alone after the last sentence)"
    if re.match(r"\s+\(?-?[\d,.]+\)?(?:\s|$)", sentence[h.end:]) or re.search(r"(?:^|\s)\(?-?[\d,.]*\d\)?\s+$", sentence[:h.first]):
        return "in a run of numbers (a table printed as text)"
    if (h.value < 100 and re.search(r"\(\s*$", sentence[:h.first]) and re.match(r"\s*\)", sentence[h.end:])
            and not re.search(rf"(?i)\b{_NUMBER_WORDS}\s*\(\s*$", sentence[:h.first])):  # "eleven (11)": the figure
        return "a footnote marker"
    return None
