"""Pick the filing(s) of one company a question means, from the periods and document type it names.

Contract:
- What a question names (``question_periods``, ``question_doc_type``, ``NON_GAAP``) and a filing's own period:
  :mod:`rag.retrieve.periods`.
- ``choose_filings(text, filings) -> FilingChoice``: ``filings`` are one company's reports (objects with
  ``sha1``, ``period``, ``doc_type``: rag.core.dataset.Report). Returns the chosen sha1s (primary first)
  and a one-line ``why``. Rules, in order:
  1. no filing carries a period -> all of them (why says so: nothing to choose by);
  2. a date -> the 8-K / earnings release dated on it or within DATE_WINDOW_DAYS after it; else its year;
  3. the latest quarter named -> the 10-Q (or release) of that fiscal quarter (Q4 -> the annual filing);
  4. the latest fiscal year named (bare years only when no fiscal year is written) -> the annual filing of
     that year, else the earliest later annual filing that still prints it as a comparative year
     (ANNUAL_COVERS years back), else the closest annual filing;
  5. no period -> the latest annual filing (of the named document type when one is named: "the 8-K" ->
     the latest 8-K); an adjusted / non-GAAP figure (NON_GAAP) with no type named -> the latest earnings
     release, when the company has one.
  Dates are written "May 26, 2023", "3 March 2023" or "2023-03-03"; a named 8-K / release with a month and
  no day ("the 8-K from May 2023") -> the latest one dated in that month. Rule 3 picks the 10-Q of a quarter over
  its earnings release, except for an adjusted / non-GAAP figure (the release prints those).
  The no-period rule was checked on fb-dev's tuning half (data/splits.json): its one no-period question
  (Best Buy's gross margins) is in the latest 10-K; "the latest filing of any kind" would pick a 10-Q.
  A named period the primary filing does not cover (a 10-K covers ANNUAL_COVERS years, a 10-Q its fiscal
  year and the previous year end) adds that period's own filing as a second one, when present.
- ``prints_periods(filing, text) -> bool``: the filing prints every period the question names.
- ``only_filing_of_period(text, filings) -> FilingChoice | None``: for a question that names no company,
  the one filing of the whole dataset whose own period is a fiscal quarter (Q1-Q3) or date the question
  names ("between FY 2023 and Q2 of FY2024" in a folder with one Q2 FY2024 10-Q). None when no such period
  is named, or two filings have it (then nothing tells the companies apart). Fiscal years never count: every
  company has one.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Sequence

from .periods import MONTH_YEAR, MONTHS, NON_GAAP, Period, parse_period, question_doc_type, question_periods

ANNUAL_TYPES = ("10-K", "annual report")
EVENT_TYPES = ("8-K", "earnings release")
ANNUAL_COVERS = 2  # a 10-K's income and cash-flow statements print the year and the two before it
QUARTER_COVERS = 1  # a 10-Q's balance sheet prints the previous fiscal year end
DATE_WINDOW_DAYS = 45  # an 8-K is filed within days of its event; a release within weeks of its quarter


@dataclass(frozen=True)
class FilingChoice:
    sha1s: tuple[str, ...]  # primary first
    why: str


def _is_annual(f) -> bool:
    p = parse_period(f.period)
    return f.doc_type in ANNUAL_TYPES or (not f.doc_type and p is not None and not p.quarter and not p.day)


def _covers(f, p: Period) -> bool:
    """Whether filing ``f`` prints period ``p`` (its own period or a comparative one)."""
    fp = parse_period(f.period)
    if fp is None:
        return False
    if _is_annual(f):
        return not p.day and (p.quarter == 0 or p.quarter == 4 or p.year < fp.year) and fp.year - ANNUAL_COVERS <= p.year <= fp.year
    if fp.quarter:
        return (p.year, p.quarter) == (fp.year, fp.quarter) or (not p.quarter and not p.day and fp.year - QUARTER_COVERS <= p.year <= fp.year)
    return bool(fp.day and p.day and 0 <= (fp.day - p.day).days <= DATE_WINDOW_DAYS)


def _label(f) -> str:
    return " ".join(x for x in (f.doc_type or "filing", f.period) if x)


def _annual_for_year(annual: list, year: int) -> tuple[object | None, str]:
    exact = [f for f in annual if parse_period(f.period).year == year]
    if exact:
        return exact[-1], "its annual filing"
    later = sorted((f for f in annual if year < parse_period(f.period).year <= year + ANNUAL_COVERS),
                   key=lambda f: parse_period(f.period).year)
    if later:
        return later[0], f"no filing of that year; the earliest later annual filing prints it as a comparative year"
    if annual:
        f = min(annual, key=lambda f: (abs(parse_period(f.period).year - year), -parse_period(f.period).year))
        return f, "no filing covers that year; the closest annual filing"
    return None, ""


def _filing_for(p: Period, pool: list, annual: list, release_first: bool = False) -> tuple[object | None, str]:
    """The filing of period ``p``: its own quarter's filing, else its annual filing (or a later one printing
    it), else any filing printing it (a 10-Q of that fiscal year)."""
    if p.quarter and p.quarter != 4:
        hits = [f for f in pool if (parse_period(f.period).year, parse_period(f.period).quarter) == (p.year, p.quarter)]
        # The 10-Q before the release; an adjusted / non-GAAP figure: the release (rag.retrieve.periods.NON_GAAP).
        hits.sort(key=lambda f: f.doc_type != ("earnings release" if release_first else "10-Q"))
        if hits:
            return hits[0], "the filing of that quarter" + (" (adjusted / non-GAAP: its earnings release)"
                                                           if release_first and hits[0].doc_type == "earnings release" else "")
    exact = [f for f in annual if parse_period(f.period).year == p.year]
    later = [f for f in annual if p.year < parse_period(f.period).year <= p.year + ANNUAL_COVERS]
    if exact or later:
        return _annual_for_year(annual, p.year)
    covering = [f for f in pool if _covers(f, p)]
    if covering:
        return covering[-1], "the latest filing printing it"
    return _annual_for_year(annual, p.year)


def prints_periods(f, text: str) -> bool:
    """Whether filing ``f`` prints every fiscal period the question names (bare years count only when no fiscal
    period is written); True when it names none."""
    periods = question_periods(text)
    periods = [p for p in periods if p.strong] or periods
    return all(_covers(f, p) for p in periods)


def only_filing_of_period(text: str, filings: Sequence) -> FilingChoice | None:
    """The one filing whose own quarter or date the question names (see the module contract), else None."""
    own = []
    for p in question_periods(text):
        if not (p.day or p.quarter in (1, 2, 3)):
            continue
        hits = [f for f in filings if (fp := parse_period(getattr(f, "period", "") or "")) is not None
                and (fp.quarter or fp.day) and _covers(f, p)]
        own += [(p, f) for f in hits if all(f is not g for _, g in own)]
    if len(own) != 1:
        return None
    p, f = own[0]
    which = " ".join(x for x in (getattr(f, "company", ""), _label(f)) if x)
    return FilingChoice((f.sha1,), f"no company named: {p.label} ({p.text!r}) is the own period of one filing only"
                                   f" ({which})")


def choose_filings(text: str, filings: Sequence) -> FilingChoice:
    """The filing(s) ``text`` means among one company's ``filings`` (see the module contract)."""
    filings = list(filings)
    dated = [f for f in filings if parse_period(f.period) is not None]
    if len(filings) <= 1 or not dated:
        why = "one filing" if len(filings) <= 1 else "the filings carry no period: all of them are searched"
        return FilingChoice(tuple(f.sha1 for f in filings), why)
    dated.sort(key=lambda f: (parse_period(f.period).year, parse_period(f.period).quarter or 5,
                              parse_period(f.period).day or date.min))
    want_type = question_doc_type(text)
    typed = [f for f in dated if f.doc_type == want_type] if want_type else []
    pool = typed or dated
    # A named type that is not annual (8-K, 10-Q, release) keeps to its own filings, even with no period.
    annual = [f for f in pool if _is_annual(f)] or ([] if typed else [f for f in dated if _is_annual(f)])
    releases = [f for f in pool if f.doc_type == "earnings release"]
    release_first = bool(releases) and not want_type and bool(NON_GAAP.search(text))
    periods = question_periods(text)
    # Periods no filing prints (a future year: "expect to pay in 2024") say nothing about which to read.
    named = [p for p in periods if any(_covers(f, p) for f in dated)] or [p for p in periods if p.strong] or periods
    primary, why = None, ""
    for p in sorted((p for p in named if p.day), key=lambda p: p.day, reverse=True):
        hits = [f for f in pool if parse_period(f.period).day and _covers(f, p)]
        if hits:
            primary = min(hits, key=lambda f: parse_period(f.period).day)
            why = f"the question's date {p.day.isoformat()} -> {_label(primary)}"
            break
    if primary is None and typed and want_type in EVENT_TYPES and (m := MONTH_YEAR.search(text)):
        # "the 8-K from May 2023": the event filings dated in that month (the latest of them)
        month = (int(m.group(2)), MONTHS[m.group(1).lower()[:3]])
        hits = [f for f in typed if (d := parse_period(f.period).day) and (d.year, d.month) == month]
        if hits:  # the month names the filing itself: no second filing for its year
            return FilingChoice((hits[-1].sha1,), f"the question's month {m.group(0)!r} -> {_label(hits[-1])}")
    if primary is None and named:
        latest = max(named, key=lambda p: (p.year, p.quarter or (4 if p.day else 5)))
        primary, how = _filing_for(latest, pool, annual, release_first)
        if primary is not None:
            why = f"{latest.label} named ({latest.text!r}) -> {_label(primary)} ({how})"
    if primary is None and release_first:  # "adjusted EPS", no period: the latest earnings release
        primary = releases[-1]
        why = f"no period named, an adjusted / non-GAAP figure: the latest earnings release ({_label(primary)})"
    if primary is None:
        candidates = annual or pool
        primary = candidates[-1]
        why = (f"no period named: the latest {'annual ' if annual else ''}filing{f' of type {want_type}' if typed else ''}"
               f" ({_label(primary)})")
    chosen = [primary]
    for p in named:
        if _covers(primary, p) or any(_covers(f, p) for f in chosen):
            continue
        own = [f for f in dated if f not in chosen and _covers(f, p)]
        if own:
            chosen.append(own[-1])
            why += f"; {p.label} is not in it -> also {_label(own[-1])}"
    return FilingChoice(tuple(f.sha1 for f in chosen), why)
