"""Yes/no questions settled by computed figures (stage 06, boolean questions, ``answer.computed_figures``).

Why: FinanceBench-style yes/no questions are often arithmetic in disguise: "Does American Water Works have
positive working capital based on FY2022 data?", "Has Microsoft increased its debt on balance sheet between
FY2023 and the FY2022 period?", "Did Pfizer grow its PPNE between FY20 and FY21?". A small model reading
a balance sheet says "yes" to nearly all of them (fb-dev: 12 of 13 answered True, 0 of 6 False-gold right);
the answer is a comparison of printed line items, which code does exactly.

Contracts:
- ``recognise_bool(question, lexicon) -> BoolAsk | None``: one of two shapes, else None (the model answers):
  * ``sign``: the question says "positive" or "negative" and names a formula of the lexicon (or an operand)
    with no growth/span in it; the figure of the question's (latest) fiscal year, or the pages' report year;
  * ``change``: the question says which way ("increase", "grow", "rise", "higher", "improve" / "decrease",
    "decline", "drop", "fall", "reduce", "lower", "deteriorate", "worsen": the first such word), names two
    different fiscal years (or one: that year and the one before it, "an improving margin profile as of 2022"),
    and names a formula (no growth/span in it) or else an operand (the first the question names); the figure of
    the later year is compared with the earlier one's;
  * ``steady``: the question asks whether a formula's figure is consistent, stable or steady (or fluctuates) and
    says by how much ("not fluctuating more than roughly 2% each year"); the figure of the question's (latest)
    fiscal year and the two before it (what an income statement prints): steady when no year moves more than that
    from the one before (in percentage points for a share, else in percent of the earlier figure).
- ``answer_computed_bool(cfg, question, pages, report_currency, company) -> dict | None``: None when no shape
  is recognised; else the ``rag.answer.fuse.answer_pages`` result shape. The value is True / False only when
  every figure was found (operands as :func:`rag.answer.computed.computed.find_operand` finds them: the asked year's
  column, same checks and score threshold; for a change, both years from one page first, the first page in
  rank order that gives every figure; else any pages, refused when the years' figures come from different pages
  and differ :data:`SCALE_GAP`-fold); an exactly unchanged figure is no increase and no decrease. When a
  figure is missing the value is N/A with ``interpretation["computed"]["fallback"]`` saying which, and the
  caller asks the model as before (no answer is made up). Cited pages: the operands' pages.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ...core.config import RunConfig
from ..computed.computed import Missing, Operand, evaluate, operand_lookup, operand_pages, top_pages_and_year
from ..common.context import CtxPage
from ..numbers.figures import NA
from ..computed.formulas import Ask, Formula, Lexicon, lexicon_path, load_lexicon, plain_formula, question_years

UP = (r"\b(?:increas(?:e|ed|es|ing)|grow(?:s|n|ing|th)?|grew|r(?:i|o)se[ns]?|risen|rising|higher|"
      r"improv(?:e|ed|es|ing|ement))\b")
DOWN = (r"\b(?:decreas(?:e|ed|es|ing)|declin(?:e|ed|es|ing)|drop(?:s|ped|ping)?|f(?:a|e)ll(?:s|en|ing)?|"
        r"reduc(?:e|ed|es|ing|tion)|lower|deteriorat(?:e|ed|es|ing|ion)|worsen(?:s|ed|ing)?)\b")
_DIRECTION = re.compile(f"(?i)(?P<up>{UP})|(?P<down>{DOWN})")
_SIGN = re.compile(r"(?i)\b(positive|negative)\b")
_STEADY = re.compile(r"(?i)\b(?:(?P<steady>consistent|stable|steady)|(?P<moves>fluctuat|volatil))\w*")
_BAND = re.compile(r"(?i)\b(?:more than|over|within|by)\s+(?:roughly|about|around|approximately|~)?\s*"
                   r"(?P<band>\d+(?:\.\d+)?)\s*(?:%|percent(?:age points?)?|pp)")
STEADY_YEARS = 3  # the years an income statement prints: the asked one and the two before it
# Two years' figures read from different pages that differ this many times over are taken to be in different
# units (a page whose "in millions" was not read), not a real change: no answer from them.
SCALE_GAP = 100.0


@dataclass
class BoolAsk:
    shape: str  # "sign" | "change" | "steady"
    want: str  # sign: "positive" | "negative"; change: "up" | "down"; steady: "steady" | "moves"
    years: tuple[int | None, ...]  # sign: (year,); change: (earlier, later); steady: (latest,), filled in later
    formula: Formula | None = None  # the figure: a formula of the lexicon, else ...
    operand: str | None = None  # ... one operand
    band: float | None = None  # steady: the most a year may move (percentage points for a share, else percent)

    def row(self) -> dict[str, Any]:
        return {"shape": self.shape, "want": self.want, "years": list(self.years),
                "formula": self.formula.name if self.formula else None, "expression":
                self.formula.expr if self.formula else self.operand, **({"band": self.band} if self.band else {})}


def _first_operand(question: str, lexicon: Lexicon) -> str | None:
    hits = [(m.start(), o.name) for o in lexicon.operands.values() for rx in o.asked
            for m in re.finditer(rx, question, re.I)]
    return min(hits)[1] if hits else None


def recognise_bool(question: str, lexicon: Lexicon) -> BoolAsk | None:
    """What a yes/no question asks in figures (module docstring), or None."""
    formula = plain_formula(question, lexicon)
    operand = None if formula else _first_operand(question, lexicon)
    if formula is None and operand is None:
        return None
    years = question_years(question)
    if m := _SIGN.search(question):
        return BoolAsk("sign", m.group(1).lower(), (max(years) if years else None,), formula, operand)
    steady, band = _STEADY.search(question), _BAND.search(question)
    if steady and band and formula is not None:
        return BoolAsk("steady", "steady" if steady.group("steady") else "moves", (max(years) if years else None,),
                       formula, None, float(band.group("band")))
    d = _DIRECTION.search(question)
    distinct = sorted(set(years))
    if len(distinct) == 1:  # "an improving operating margin profile as of 2022": that year against the one before
        distinct = [distinct[0] - 1, distinct[0]]
    if d is None or len(distinct) != 2:
        return None
    return BoolAsk("change", "up" if d.group("up") else "down", (distinct[0], distinct[1]), formula, operand)


def _move(before: float, after: float, ask: BoolAsk) -> float:
    """How far a year moved from the one before: percentage points for a share, else percent of the earlier."""
    if ask.formula is not None and ask.formula.unit == "share":
        return abs(after - before) * 100
    return abs(after - before) / abs(before) * 100 if before else math.inf


def answer_computed_bool(cfg: RunConfig, question: str, pages: list[CtxPage], report_currency: str | None,
                         company: str = "") -> dict[str, Any] | None:
    """True / False from computed figures of the top ``answer.computed_pages`` pages, or None (module docstring)."""
    lexicon = load_lexicon(lexicon_path(cfg))
    ask = recognise_bool(question, lexicon)
    if ask is None:
        return None
    top, page_year = top_pages_and_year(cfg, pages)
    years = tuple(y if y is not None else page_year for y in ask.years)
    if ask.shape == "steady" and years[0] is not None:
        years = tuple(range(years[0] - STEADY_YEARS + 1, years[0] + 1))
    info: dict[str, Any] = {**ask.row(), "years": list(years), "pages_searched": [p.page for p in top]}
    found: dict[tuple[str, int], Operand] = {}  # the operands of the last look-up (the debug record's)

    def figures_in(within: list[CtxPage]) -> list[float]:
        """Every year's figure from ``within`` alone; fills a fresh ``found``."""
        found.clear()
        lookup = operand_lookup(cfg, lexicon, within, report_currency, company, page_year, found)
        if ask.formula is not None:
            return [evaluate(Ask(ask.formula, y), lookup, y) for y in years]  # type: ignore[arg-type]
        return [lookup(ask.operand, y) for y in years]  # type: ignore[arg-type]

    value: Any = NA
    try:
        if any(y is None for y in years):
            raise Missing("year", None, "the question names no fiscal year and no page prints a dated table")
        figures = None
        if ask.shape in ("change", "steady"):  # every year from one table first: one page states them in one unit
            for page in top:
                try:
                    figures = figures_in([page])
                    break
                except (Missing, ZeroDivisionError):
                    continue
        if figures is None:
            figures = figures_in(top)
            pages_used = {(o.cand.sha1, o.cand.page) for o in found.values()}
            low, high = min(map(abs, figures)), max(map(abs, figures))
            if ask.shape != "sign" and len(pages_used) > 1 and low > 0 and high / low >= SCALE_GAP:
                raise Missing("scale", years[-1], f"the years' figures come from different pages and differ "
                              f"{high / low:.0f}-fold: {figures}")
        if any(math.isnan(x) or math.isinf(x) for x in figures):
            raise Missing("result", years[-1], f"the arithmetic gives no real number ({figures})")
        currencies = {o.cand.currency for o in found.values() if o.cand.currency and o.cand.unit != "%"}
        if len(currencies) > 1:
            raise Missing("currency", years[-1], f"operands in several currencies: {', '.join(sorted(currencies))}")
        if ask.shape == "sign":
            value = figures[0] > 0 if ask.want == "positive" else figures[0] < 0
        elif ask.shape == "steady":
            moves = [_move(a, b, ask) for a, b in zip(figures, figures[1:])]
            info["moves"] = [round(m, 4) for m in moves]
            value = (max(moves) <= ask.band) == (ask.want == "steady")
        else:
            change = figures[1] - figures[0]
            value = change > 0 if ask.want == "up" else change < 0
        info.update(figures=figures, value=value)
    except Missing as e:
        info["fallback"] = f"operand {e.operand} ({e.year}) missing: {e.why}"
    except ZeroDivisionError as e:
        info["fallback"] = str(e)
    info["operands"] = [o.row() for o in found.values()]
    cited = operand_pages(found, top) if value != NA else []
    interp: dict[str, Any] = {"source": "computed", "computed": info, "value_pages": [p.page for p in cited]}
    if value == NA:
        interp["na_reason"] = info["fallback"]
    return {"value": value, "cited": cited, "calls": [], "interpretation": interp, "answering_part": cited or None}
