"""What periods and document type a question names, and a filing's own period (read by
:mod:`rag.retrieve.filing`, which picks the filing).

Contract:
- ``question_periods(text) -> list[Period]``: every period the question names, in order: fiscal quarters
  ("Q2 of FY2024", "Q2 2023", "Q2'2023", "Q22023", "FY2023Q1", "second quarter of fiscal 2024"), fiscal years
  ("FY2018", "FY 2022", "FY21", "fiscal 2019", "fiscal year 2020", "2021 fiscal") marked ``strong``, bare years
  ("in 2022", "as of 2022") not strong, and dates ("May 26, 2023").
- ``question_doc_type(text) -> str | None``: a document type the question names ("10-K", "annual report" ->
  "10-K"; "10-Q", "quarterly report" -> "10-Q"; "8-K"; "earnings release"/"earnings report").
- ``parse_period(period) -> Period | None``: a subset.csv period ("2018", "2024Q2", "2023-05-05").
- ``month_date(match, first)``: the date of a ``MONTH_DATE`` match (also read by :mod:`rag.init_filing`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                         "nov", "dec"), 1)}
_ORD = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}
_YEAR = r"((?:19|20)\d{2}|'?\d{2})"
_FY = r"(?:fy|fiscal(?:\s+year)?)"
_QUARTER_RES = (
    re.compile(r"\b(?:" + _FY + r"\s*)?((?:19|20)\d{2})\s*[-']?\s*q([1-4])\b", re.I),  # FY2023Q1, 2023 Q1
    re.compile(r"\bq([1-4])\s*(?:of\s+)?(?:" + _FY + r"\s*)?'?\s*((?:19|20)\d{2}|\d{2})\b", re.I),  # Q2 of FY2024
    re.compile(r"\b(first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:fiscal\s+)?quarter\s+(?:of\s+)?(?:"
               + _FY + r"\s*)?'?((?:19|20)\d{2})\b", re.I),
)
_STRONG_YEAR = re.compile(r"\b" + _FY + r"\s*'?\s*((?:19|20)\d{2}|\d{2})\b(?!\s*-?\s*q[1-4])|\b((?:19|20)\d{2})\s+fiscal\b", re.I)
_BARE_YEAR = re.compile(r"(?<![\d$.,])((?:19|20)\d{2})(?![\d,%])")
# "May 26, 2023", "Sept. 3 2023": month, day, year groups (also read by rag.init_filing).
MONTH_DATE = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(\d{1,2}),?\s+((?:19|20)\d{2})"
_DATE = re.compile(r"\b" + MONTH_DATE + r"\b", re.I)
# "3 March 2023", "3rd of March, 2023" (day first) and "2023-03-03" (ISO): how an 8-K is often named.
_DATE_DMY = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
                       r"[a-z]*\.?,?\s+((?:19|20)\d{2})\b", re.I)
_DATE_ISO = re.compile(r"\b((?:19|20)\d{2})-(\d{2})-(\d{2})\b")
# "May 2023" (no day): an 8-K or release named by its month.
MONTH_YEAR = re.compile(r"(?<!\d\s)\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?,?\s+((?:19|20)\d{2})\b", re.I)
# Adjusted / non-GAAP figures are printed in the earnings release (its reconciliation tables), not the 10-Q.
NON_GAAP = re.compile(r"(?<![\w-])(?:adjusted|non-?\s?gaap)\b", re.I)
_DOC_TYPE_RES = (("10-Q", re.compile(r"\b10-?q\b|\bquarterly\s+(?:report|filing)\b", re.I)),
                 ("10-K", re.compile(r"\b10-?k\b|\bannual\s+(?:report|filing)\b", re.I)),
                 ("8-K", re.compile(r"\b8-?k\b", re.I)),
                 ("earnings release", re.compile(r"\bearnings\s+(?:release|report|announcement)\b|\bpress\s+release\b", re.I)))


@dataclass(frozen=True)
class Period:
    year: int  # fiscal year (of the quarter), or the date's year
    quarter: int = 0  # 1..4 for a fiscal quarter
    day: date | None = None  # a dated event
    strong: bool = True  # written as a fiscal period (FY2018, Q2 2023, a date), not a bare year
    text: str = ""

    @property
    def label(self) -> str:
        if self.day:
            return self.day.isoformat()
        return f"{self.year}Q{self.quarter}" if self.quarter else f"FY{self.year}"


def month_date(m: re.Match, first: int = 1) -> date | None:
    """The date of a MONTH_DATE match whose month group is ``first``; None for an impossible date."""
    try:
        return date(int(m.group(first + 2)), MONTHS[m.group(first).lower()[:3]], int(m.group(first + 1)))
    except ValueError:
        return None


def _year(s: str) -> int:
    s = s.lstrip("'")
    return int(s) if len(s) == 4 else 2000 + int(s)


def question_periods(text: str) -> list[Period]:
    """Every period named in ``text`` (see the module contract), in order of appearance."""
    found: list[tuple[int, int, Period]] = []  # (start, end, period)

    def free(s: int, e: int) -> bool:
        return not any(s < fe and fs < e for fs, fe, _ in found)

    for m in _DATE.finditer(text):
        d = month_date(m)
        if d is None:
            continue
        found.append((m.start(), m.end(), Period(year=d.year, day=d, text=m.group(0))))
    for rx, order in ((_DATE_DMY, "dmy"), (_DATE_ISO, "iso")):
        for m in rx.finditer(text):
            if not free(m.start(), m.end()):
                continue
            try:
                d = (date(int(m.group(3)), MONTHS[m.group(2).lower()[:3]], int(m.group(1))) if order == "dmy"
                     else date(int(m.group(1)), int(m.group(2)), int(m.group(3))))
            except ValueError:
                continue
            found.append((m.start(), m.end(), Period(year=d.year, day=d, text=m.group(0))))
    for i, rx in enumerate(_QUARTER_RES):
        for m in rx.finditer(text):
            if not free(m.start(), m.end()):
                continue
            a, b = m.group(1), m.group(2)
            if i == 0:
                year, q = _year(a), int(b)
            elif i == 1:
                year, q = _year(b), int(a)
            else:
                year, q = _year(b), _ORD[a.lower()]
            found.append((m.start(), m.end(), Period(year=year, quarter=q, text=m.group(0))))
    for m in _STRONG_YEAR.finditer(text):
        if free(m.start(), m.end()):
            found.append((m.start(), m.end(), Period(year=_year(m.group(1) or m.group(2)), text=m.group(0))))
    for m in _BARE_YEAR.finditer(text):
        if free(m.start(), m.end()):
            found.append((m.start(), m.end(), Period(year=int(m.group(1)), strong=False, text=m.group(0))))
    return [p for _, _, p in sorted(found, key=lambda f: f[0])]


def question_doc_type(text: str) -> str | None:
    """The document type the question names, or None."""
    for doc_type, rx in _DOC_TYPE_RES:
        if rx.search(text):
            return doc_type
    return None


def parse_period(period: str) -> Period | None:
    """A subset.csv period ("2018", "2024Q2", "2023-05-05") as a Period; None when empty."""
    if not period:
        return None
    if m := re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", period):
        return Period(year=int(m.group(1)), day=date(*map(int, m.groups())))
    if m := re.fullmatch(r"(\d{4})Q([1-4])", period):
        return Period(year=int(m.group(1)), quarter=int(m.group(2)))
    return Period(year=int(period)) if period.isdigit() else None
