"""How much a figure changed between two years, answered in code (stage 06, ``answer.text_change``): "How much has
the effective tax rate of American Express changed between FY2021 and FY2022?".

Why: asked for a free answer, the 1.5B reader quoted a rate of the wrong year or the statutory rate, or swapped
the years (data/fb-gen's dg23, tuning companies: 3 of 7). The number path's table candidates read a year's column
exactly; the change is arithmetic.

Contracts:
- ``change_ask(question, company) -> ChangeAsk | None``: an open question asking for a change (a change word:
  changed, increased, decreased, grew, declined...) between two named fiscal years, with the figure it asks about
  (``metric``: its first sentence's words less the company, the years, the change words and the question words,
  "the effective tax rate"). None otherwise, when no metric words are left, or when its first sentence asks which or
  who (a ranking, not one figure's change) or why (drove, drivers, reasons, causes, factors, explain: a cause).
- ``answer_change(cfg, question, pages, report_currency, company) -> dict | None``: both years' figures of the
  metric as the number path finds them (:func:`rag.answer.numbers.figures.build_candidates` for "What is the
  <metric>?" with each year as ``period_year``; a candidate scores at least ``answer.figure_min_score``), both from
  one page first (the first page in rank order that has both), else the best of each from any pages when they are
  in one unit. Where a year's figure is not printed and the metric is a formula of the lexicon (with
  ``answer.computed_figures``; :func:`rag.answer.computed.formulas.plain_formula`, "effective tax rate": income tax
  over income before taxes), both years are computed from their operands as a computed figure is
  (:func:`rag.answer.computed.computed.find_operand`). The answer states both figures (as printed, or computed:
  a share in percent to one decimal), which year is which and the change: in percentage points between two rates,
  else the difference and the change in percent. Cited: the figures' (or operands') pages. The
  :func:`rag.answer.fuse.answer_pages` result shape (``interpretation["change"]``); None when the question asks no
  change or a year's figure is missing (the reader answers then, the record says why).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...core.config import RunConfig
from ...core.questions import without_company
from ..common.context import CtxPage
from ..computed.computed import Missing, Operand, evaluate, operand_lookup, operand_pages, top_pages_and_year
from ..computed.formulas import Ask, lexicon_path, load_lexicon, plain_formula, question_years
from ..numbers.candidate import Candidate
from ..numbers.figures import build_candidates

CHANGE_WORDS = re.compile(r"\b(?:chang(?:e|ed|es|ing)|increas(?:e|ed|es|ing)|decreas(?:e|ed|es|ing)|gr[eo]wn?|grow(?:s|th)?|"
                      r"declin(?:e|ed|es|ing)|r[io]sen?|f[ae]ll(?:en)?|drop(?:ped)?|mov(?:e|ed))\b", re.I)
YEAR_WORDS = re.compile(r"\b(?:fiscal\s+(?:year\s+)?|FY\s?'?)?(?:19|20)?\d\d\b(?:\s+fiscal\s+(?:year|period))?", re.I)
_OTHER_ASK = re.compile(r"\b(?:which|who|why|drove|driv(?:e|en|er|ers|ing)|reasons?|caus(?:e|ed|es)|factors?|"
                        r"explain\w*)\b", re.I)  # in the first sentence: a ranking or a cause, not a change's size
FILLER_WORDS = re.compile(r"\b(?:how|much|by|what|was|were|is|are|has|have|had|did|does|do|the|a|an|its|their|in|of|for|"
                     r"from|to|between|and|over|during|period|year|years|fiscal|amount|value)\b|[?,.'’]", re.I)


@dataclass(frozen=True)
class ChangeAsk:
    metric: str  # "effective tax rate"
    years: tuple[int, int]  # (earlier, later)


def change_ask(question: str, company: str = "") -> ChangeAsk | None:
    """See module docstring."""
    first = question.split("?")[0]  # the ask itself; a template's closing sentence ("If ... explain why.") is not
    years = sorted(set(question_years(first)))
    if len(years) != 2 or not CHANGE_WORDS.search(first) or _OTHER_ASK.search(first):
        return None
    rest = without_company(first, company, possessive=True)
    rest = CHANGE_WORDS.sub(" ", YEAR_WORDS.sub(" ", rest))
    words = FILLER_WORDS.sub(" ", rest).split()
    return ChangeAsk(" ".join(words).lower(), (years[0], years[1])) if words else None


def _best(cfg: RunConfig, sub: str, pages: list[CtxPage], currency: str | None, company: str,
          year: int) -> Candidate | None:
    floor = cfg.answer.figure_min_score
    cands = [c for c in build_candidates(cfg, sub, pages, currency, company, period_year=year)
             if floor is None or c.score >= floor]
    return min(cands, key=lambda c: (-c.score, c.rank)) if cands else None


def _pair(cfg: RunConfig, ask: ChangeAsk, pages: list[CtxPage], currency: str | None,
          company: str) -> tuple[Candidate, Candidate] | str:
    sub = f"What is the {ask.metric}?"
    for page in pages:  # one page printing both years: one table, one unit
        a, b = (_best(cfg, sub, [page], currency, company, y) for y in ask.years)
        if a is not None and b is not None:
            return a, b
    a, b = (_best(cfg, sub, pages, currency, company, y) for y in ask.years)
    if a is None or b is None:
        missing = ask.years[0] if a is None else ask.years[1]
        return f"no row names '{ask.metric}' in a {missing} column scoring answer.figure_min_score"
    if (a.unit == "%") != (b.unit == "%") or a.factor != b.factor:
        return f"the years' figures are in different units ({a.unit}, {b.unit})"
    return a, b


@dataclass(frozen=True)
class Figure:
    """One year's figure as the answer states it."""
    value: float
    shown: str  # "17.8%", "35,355"
    percent: bool  # a rate: its change is in percentage points
    factor: int = 1  # the printed figure's scale (an amount's difference is shown in it)
    unit: str = ""
    decimals: int = 1


def _printed(c: Candidate) -> Figure:
    return Figure(c.value, _shown(c), c.unit == "%", c.factor, "" if c.unit == "%" else c.unit, _decimals(c.printed))


def _computed(cfg: RunConfig, question: str, ask: ChangeAsk, pages: list[CtxPage], currency: str | None,
              company: str) -> tuple[list[Figure], list[CtxPage], dict[str, Any]] | str:
    """Both years' figures of the lexicon's formula for the metric, computed from their operands."""
    lexicon = load_lexicon(lexicon_path(cfg))
    formula = plain_formula(question, lexicon)
    if formula is None:
        return "no formula of the lexicon names it"
    top, page_year = top_pages_and_year(cfg, pages)
    found: dict[tuple[str, int], Operand] = {}
    lookup = operand_lookup(cfg, lexicon, top, currency, company, page_year, found)
    try:
        values = [evaluate(Ask(formula, y), lookup, y) for y in ask.years]
    except Missing as e:
        return f"{formula.name}: operand {e.operand} ({e.year}) missing: {e.why}"
    except ZeroDivisionError as e:
        return f"{formula.name}: {e}"
    share = formula.unit == "share"
    figures = [Figure(round(v * 100, 1), f"{v * 100:.1f}%", True) if share else Figure(v, f"{v:,.2f}", False, decimals=2)
               for v in values]
    return figures, operand_pages(found, top), {"formula": formula.name, "expression": formula.expr,
                                                "operands": [o.row() for o in found.values()]}


def change_words(a: Figure, b: Figure, ask: ChangeAsk) -> str:
    """The sentence stating both years' figures, which year is which and the change."""
    (y0, y1), diff = ask.years, b.value - a.value
    way = "rose" if diff > 0 else "fell" if diff < 0 else "was unchanged"
    start = f"The {ask.metric} {way} from {a.shown} in FY{y0} to {b.shown} in FY{y1}"
    if diff == 0:
        return start.replace(" from ", " at ", 1).split(" to ")[0] + f" and FY{y1}."
    kind = "an increase" if diff > 0 else "a decrease"
    if a.percent:
        return f"{start}, {kind} of {abs(diff):.1f} percentage points."
    pct = f" ({abs(diff) / abs(a.value) * 100:.1f}%)" if a.value else ""
    unit = f" (in {a.unit})" if a.unit else ""
    return f"{start}{unit}, {kind} of {abs(diff) / a.factor:,.{a.decimals}f}{pct}."


def _shown(c: Candidate) -> str:
    """The figure as printed, its space before a percent sign dropped ("17.8 %" -> "17.8%")."""
    return re.sub(r"\s+%", "%", c.printed.strip())


def _decimals(printed: str) -> int:
    m = re.search(r"\.(\d+)", printed)
    return len(m.group(1)) if m else 0


def year_figures(cfg: RunConfig, question: str, ask: ChangeAsk, pages: list[CtxPage], report_currency: str | None,
                 company: str = "", computed_first: bool = False
                 ) -> tuple[list[Figure] | None, list[CtxPage], dict[str, Any]]:
    """Both years' figures of ``ask.metric`` (printed, else computed from the lexicon's formula with
    ``answer.computed_figures``; with ``computed_first`` the formula is tried first), the pages they cite and what
    the record says of them; ``None`` figures (and why, in the record) when a year's figure is missing. What
    :func:`answer_change` and the drivers' answer state."""
    info: dict[str, Any] = {"metric": ask.metric, "years": list(ask.years)}
    if computed_first and cfg.answer.computed_figures:
        computed = _computed(cfg, question, ask, pages, report_currency, company)
        if not isinstance(computed, str):
            figures, cited, info["computed"] = computed
            return figures, cited, info
        info["computed"] = computed
    found = _pair(cfg, ask, pages, report_currency, company)
    if not isinstance(found, str):
        a, b = found
        info["figures"] = [a.row(), b.row()]
        return [_printed(a), _printed(b)], [p for p in pages if any(p.sha1 == c.sha1 and p.page == c.page
                                                                      for c in (a, b))], info
    info["missing"] = found
    if not cfg.answer.computed_figures or computed_first:
        return None, [], info
    computed = _computed(cfg, question, ask, pages, report_currency, company)
    if isinstance(computed, str):
        info["computed"] = computed
        return None, [], info
    figures, cited, info["computed"] = computed
    info["printed_missing"] = info.pop("missing")
    return figures, cited, info


def answer_change(cfg: RunConfig, question: str, pages: list[CtxPage], report_currency: str | None,
                  company: str = "") -> dict[str, Any] | None:
    """See module docstring."""
    ask = change_ask(question, company)
    if ask is None:
        return None
    figures, cited, info = year_figures(cfg, question, ask, pages, report_currency, company)
    if figures is None:
        return {"value": None, "calls": [], "interpretation": {"change": info}}
    return {"value": change_words(figures[0], figures[1], ask), "cited": cited, "calls": [],
            "interpretation": {"change": info}, "answering_part": cited}
