"""Which filing a PDF is: its document type and fiscal period, read from its first pages (for ``rag init``).

Contract:
- ``detect_filing(pages) -> FilingGuess``: ``pages`` are page texts (the first FILING_PAGES are read).
  ``doc_type``: "10-K" / "10-Q" / "8-K" from "FORM 10-K" on the cover, "earnings release" for "... Reports
  First Quarter 2023 Results", "annual report" for a report calling itself one, else "". ``period_end``: the
  date after "for the fiscal year ended", "for the quarterly period ended", "Date of Report (Date of earliest
  event reported)". ``period``: subset.csv's period ("2018" = the fiscal year ending in 2018, "2023Q1", an
  8-K's event date "2023-05-03"), "" when not found.
- ``assign_quarters(guesses) -> list[FilingGuess]``: one company's guesses with each 10-Q's fiscal quarter
  set from its period end and the company's fiscal year end (taken from its 10-K / annual report in the
  same folder, else December): Best Buy's quarter ended July 29, 2023 with a fiscal year ending late January
  is "2024Q2", as Best Buy names it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date

from .retrieve.periods import MONTH_DATE, month_date

FILING_PAGES = 3  # the cover page names the form and the period; a table of contents follows
_MONTH = MONTH_DATE
_FORM = re.compile(r"\bform\s+(10-?k|10-?q|8-?k|20-?f|40-?f)\b", re.I)
_YEAR_END = re.compile(r"(?:fiscal\s+)?year\s+ended\s*:?\s*" + _MONTH, re.I)
_QUARTER_END = re.compile(r"quarterly\s+period\s+ended\s*:?\s*" + _MONTH, re.I)
_EVENT = re.compile(r"date\s+of\s+report\s*\(date\s+of\s+earliest\s+event\s+reported\)\s*:?\s*" + _MONTH, re.I)
_RELEASE = re.compile(r"\breports?\s+(first|second|third|fourth|q[1-4])[-\s]+quarter\s+(?:(?:fiscal\s+)?((?:19|20)\d{2})\s+)?"
                      r"(?:financial\s+)?results\b", re.I)
_ANNUAL = re.compile(r"\bannual\s+report\b", re.I)
_ORD = {"first": 1, "second": 2, "third": 3, "fourth": 4, "q1": 1, "q2": 2, "q3": 3, "q4": 4}
_FORM_TYPES = {"10k": "10-K", "10q": "10-Q", "8k": "8-K", "20f": "annual report", "40f": "annual report"}


@dataclass(frozen=True)
class FilingGuess:
    doc_type: str = ""
    period: str = ""
    period_end: date | None = None
    evidence: str = ""  # the words it was read from, for the printed table


_date = month_date


def detect_filing(pages: list[str]) -> FilingGuess:
    """Document type and period of a filing from its first pages (see the module contract)."""
    text = " ".join(" ".join(p.split()) for p in pages[:FILING_PAGES])
    cover = " ".join(pages[0].split()) if pages else ""
    if m := _RELEASE.search(cover):  # a release quotes "our Form 10-Q" further down: its headline decides
        year = m.group(2) or next(iter(re.findall(r"\b((?:19|20)\d{2})\b", cover[m.end():m.end() + 200])), "")
        return FilingGuess("earnings release", f"{year}Q{_ORD[m.group(1).lower()]}" if year else "", None, m.group(0))
    form = _FORM.search(cover) or _FORM.search(text)
    doc_type = _FORM_TYPES[re.sub(r"[^0-9a-z]", "", form.group(1).lower())] if form else ""
    if doc_type == "8-K" and (m := _EVENT.search(text)) and (d := _date(m)):
        return FilingGuess("8-K", d.isoformat(), d, " ".join(m.group(0).split()))
    if doc_type in ("10-Q", "") and (m := _QUARTER_END.search(text)) and (d := _date(m)):
        # The fiscal quarter needs the company's year end: assign_quarters sets it.
        return FilingGuess("10-Q", "", d, m.group(0))
    if (m := _YEAR_END.search(text)) and (d := _date(m)):
        kind = doc_type or ("annual report" if _ANNUAL.search(text) else "")
        return FilingGuess(kind, str(d.year), d, m.group(0))
    if not doc_type and _ANNUAL.search(text):
        doc_type = "annual report"
    return FilingGuess(doc_type, "", None, form.group(0) if form else "")


def fiscal_quarter(period_end: date, year_end: tuple[int, int]) -> str:
    """"2024Q2": the fiscal quarter ending ``period_end`` for a fiscal year ending on (month, day) each year;
    the fiscal year is named by the calendar year it ends in."""
    months = (period_end.month - year_end[0]) % 12 + (period_end.day - year_end[1]) / 31
    quarter = max(1, min(4, round(months / 3)))
    fy = period_end.year + (1 if (period_end.month, period_end.day) > year_end else 0)
    return f"{fy}Q{quarter}"


def assign_quarters(guesses: list[FilingGuess]) -> list[FilingGuess]:
    """One company's guesses, 10-Q periods filled in (see the module contract)."""
    ends = [g.period_end for g in guesses if g.period_end and g.doc_type in ("10-K", "annual report")]
    year_end = (ends[-1].month, ends[-1].day) if ends else (12, 31)
    return [replace(g, period=fiscal_quarter(g.period_end, year_end))
            if g.doc_type == "10-Q" and g.period_end and not g.period else g for g in guesses]
