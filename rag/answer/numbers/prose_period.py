"""Where and when a figure in prose is (stage 06, rag.answer.numbers.prose): a page's sentences outside its tables,
the year a sentence dates a figure to, the report's period-end year, and the dollar a bare "$" means.

Contract: ``page_sentences(text, figures_only=True)``: the sentences (with a digit), Markdown table rows and "Table:" lines left out;
``year_of(sentence, a, b)``: the period year of the figure at ``sentence[a:b]`` (the year the words right
after it name, else the last one before it, else the first after it; None); ``page_year(pages)``: the
tables' ``report_year``, else the latest period-end year the sentences name; ``report_dollar(pages,
report_currency)``: the stated presentation dollar, else the tables' unit lines' dollar, else the report
currency's ("USD" when it is no dollar).
"""
from __future__ import annotations

import re
from collections import Counter

from ..common import printed as nums
from ..common.context import CtxPage
from ...clean.units import stated_dollar
from .figures import parse_tables, report_year

_SENTENCE = re.compile(r"(?<=[.;!?])\s+(?=[A-Z(\"'“])")
YEAR = re.compile(r"(?<![\w.,$€£])((?:19|20)\d\d)(?!\d|[.,]\d|\s?%)")


def page_sentences(text: str, figures_only: bool = True) -> list[str]:
    """The page's sentences outside tables (Markdown rows and the clean stage's "Table:" lines skipped); with
    ``figures_only`` those printing a digit."""
    out: list[str] = []
    para: list[str] = []
    for line in (text or "").splitlines():
        s = line.strip()
        if not s or s.startswith("|") or s.startswith("Table:"):
            if para:
                out += _SENTENCE.split(" ".join(para))
                para = []
            continue
        para.append(s.lstrip("#-*• ").strip())
    if para:
        out += _SENTENCE.split(" ".join(para))
    return [s for s in out if not figures_only or any(c.isdigit() for c in s)]


_YEAR_AFTER = re.compile(r"^[^.;\d]{0,30}?\b(?:in|for|during|at|as of|as at|of|by|ended|ending)\b[^.;\d]{0,25}?"
                         r"(?<![\w.,$€£])((?:19|20)\d\d)(?!\d|[.,]\d|\s?%)")


def year_of(sentence: str, a: int, b: int) -> int | None:
    """The period year of the figure at ``sentence[a:b]``: a year the words right after it name with no other
    number between ("$339.3 million in 2022", "1,300 employees as of December 31, 2022"), else the last year
    printed before it, else the first after it; None when the sentence names none."""
    m = _YEAR_AFTER.match(sentence[b:])
    if m:
        return int(m.group(1))
    left = [int(y.group(1)) for y in YEAR.finditer(sentence[:a])]
    if left:
        return left[-1]
    right = YEAR.search(sentence[b:])
    return int(right.group(1)) if right else None


_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_PERIOD_END = re.compile(
    r"(?i)(?:\b(?:as (?:of|at)|years? ended|period ended|fiscal(?: year)?|FY|ended|ending|end of)\s+"
    rf"(?:(?:{_MONTHS})\s+\d{{1,2}},?\s+|\d{{1,2}}\s+(?:{_MONTHS}),?\s+)?|\b\d{{1,2}}\s+(?:{_MONTHS})\s+|"
    rf"\b(?:{_MONTHS})\s+\d{{1,2}},\s+)((?:19|20)\d\d)\b")


def page_year(pages: list[CtxPage]) -> int | None:
    """The report's period end year: the tables' (rag.answer.common.md_tables.report_year), else the latest year the
    pages' sentences name as a period end ("As of December 31, 2022", "year ended 30 June 2022"); None
    when neither (then only a later year in the figure's own sentence dates it as older)."""
    y = report_year([t for p in pages for t in parse_tables(p.text)])
    if y:
        return y
    # the most named period end (ties: the later): the latest would be a maturity or a plan's end date
    seen = Counter(int(m.group(1)) for p in pages for s in page_sentences(p.text) for m in _PERIOD_END.finditer(s))
    return max(seen, key=lambda y: (seen[y], y)) if seen else None


_UNIT_DOLLAR = re.compile(r"(?m)^Table:.*?\bvalues in (?:\w+ of )?([A-Z]{3})\b")


def report_dollar(pages: list[CtxPage], report_currency: str | None) -> str:
    """The dollar a bare "$" means in this report: the one the pages say the report is presented in
    ("presented in Australian dollars"), else the most common dollar of the clean stage's table unit lines
    (it resolved "$" per report), else the dataset's report currency (USD when it is no dollar)."""
    stated = stated_dollar([p.text for p in pages])
    if stated:
        return stated
    seen = Counter(c for p in pages for c in _UNIT_DOLLAR.findall(p.text or "") if c in nums.DOLLAR_CODES)
    return seen.most_common(1)[0][0] if seen else nums.resolve_dollar("$", report_currency) or "USD"
