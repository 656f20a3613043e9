"""Computed figures (stage 06, number questions): ratios, margins, growth and averages computed in code.

Why: FinanceBench-style questions ask for figures a filing does not print ("FY2017 days payable
outstanding", "3 year average net profit margin", "2 year revenue CAGR"). A reader (or the table pick)
returns some printed number; the right answer is arithmetic over printed line items of one or more years.

Contracts:
- The lexicon and what a question asks (``load_lexicon``, ``recognise`` -> :class:`Ask`): :mod:`rag.answer.computed.formulas`
  (re-exported here).
- ``find_operand(cfg, lexicon, name, year, pages, ...) -> Operand`` or :class:`Missing`: the best candidate
  of the line item in that year's column (:func:`rag.answer.numbers.figures.build_candidates` with ``period_year``;
  figures in sentences (:mod:`rag.answer.numbers.prose`) only for the report's own year), the same score threshold
  (``answer.figure_min_score``) and the best-scoring pick as table candidates. A table row must match the
  operand's label patterns (or :data:`rag.answer.numbers.figures.LABEL_ALIASES` of its phrase); rows under a section
  or in a table its ``avoid`` patterns name are refused (a balance-sheet item's change in a cash-flow statement).
  A table figure whose scale nothing states takes the scale most of the report's tables among the pages state
  (3M's income statement lost its "(Millions)" line; its balance sheet states it), so a ratio's operands agree.
  For a number question naming statements ("relying on the details shown in the cash flow statement"), an operand
  printed on a statement page 05 added for them is read there (Amazon's MD&A prints capex net of proceeds).
- ``operand_lookup(cfg, lexicon, pages, ..., found) -> lookup``: ``lookup(name, year)`` for :func:`evaluate`, each
  operand found once and recorded in ``found``.
- ``evaluate(ask, lookup) -> float``: the expression (only + - * / **, numbers, operand names, prev / avg /
  start) evaluated in code, averaged over the span's years for an N-year average; ``lookup(name, year)``
  gives each operand's value or raises :class:`Missing`. ``present(ask, x) -> (value, unit)``: x100 for a
  share asked in percent, rounded as asked (money at the asked scale).
- ``answer_computed(cfg, question, pages, report_currency, company) -> dict | None``: None when no formula
  is recognised; else the ``rag.answer.fuse.answer_pages`` result shape with ``interpretation["computed"]``
  (formula, expression, year, every operand with value, printed figure, row label, page, period and the page
  line it was read from; result, rounded value) and, when an operand is missing, value N/A and
  ``computed["fallback"]`` saying which and why (the caller then answers as without computed figures: no
  number is ever made up). Operands in different currencies, or in another than the question asks ("(in AUD)")
  -> missing. Cited pages: the operands' pages.
"""
from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Any, Callable

from ...core.config import RunConfig
from ..common import printed as nums
from ..common.context import CtxPage
from ..numbers.figures import NA, Candidate, _norm_label, aliases_for, build_candidates, dedupe, parse_tables, report_year
from .formulas import METRIC, SPAN, Ask, Lexicon, lexicon_path, load_lexicon, recognise
from .formulas import Formula  # noqa: F401 - re-exported with the names above (tests build asks by hand)

FLOAT_DIGITS = 6  # 3.2 * 1e9 is 3200000000.0000005 in floats: money rounded at a scale is cut back to this
LINE_CHARS = 300  # an operand's source line in the debug record
PREFER_BONUS = 0.05  # a row label of the line asked among several that fit (as figures.TOTAL_BONUS)


# ---- operands ---------------------------------------------------------------------------------------------
class Missing(Exception):
    """An operand with no candidate in that year's column (or in another currency)."""

    def __init__(self, operand: str, year: int | None, why: str):
        super().__init__(f"{operand} {year}: {why}")
        self.operand, self.year, self.why = operand, year, why


@dataclass
class Operand:
    name: str
    year: int
    cand: Candidate
    value: float
    runner_up: dict[str, Any] | None = None

    def row(self) -> dict[str, Any]:
        c = self.cand
        return {"operand": self.name, "year": self.year, "value": self.value, "printed": c.printed,
                "label": c.label, "period": c.period, "unit": c.unit, "currency": c.currency, "page": c.page,
                "sha1": c.sha1, "source": c.source, "title": c.title, "score": round(c.score, 3),
                "runner_up": self.runner_up}


def find_operand(cfg: RunConfig, lexicon: Lexicon, name: str, year: int, pages: list[CtxPage],
                 report_currency: str | None, company: str = "", page_year: int | None = None,
                 statements: frozenset[str] = frozenset()) -> Operand:
    """The best candidate of operand ``name`` in ``year``'s column of ``pages`` (module docstring); with
    ``statements`` (those the question names), only candidates printed on those statement pages when one is."""
    spec = lexicon.operands[name]
    sub = f"What is the {spec.phrase}?"
    cands = build_candidates(cfg, sub, pages, report_currency, company, period_year=year, extra_aliases=spec.labels)
    if cfg.answer.prose_candidates and year == page_year:  # sentences date figures to the report's year only
        from ..numbers.prose import prose_candidates

        cands = dedupe(cands + prose_candidates(cfg, sub, pages, report_currency, company)[0])
    # A table row must be the line item (one of its label patterns, or the phrase's own words): "Gross
    # profit" shares "profit" with net income and "Total current assets" the words of total assets.
    patterns = spec.labels + aliases_for(sub, company)
    cands = [c for c in cands if c.source != "table" or any(re.search(rx, _norm_label(c.label)) for rx in patterns)
             or _norm_label(c.label) in (spec.phrase, f"total {spec.phrase}")]
    if spec.avoid:  # a balance-sheet item read from a cash-flow statement's changes, say
        cands = [c for c in cands if not any(re.search(rx, n, re.I) for rx in spec.avoid for n in c.notes)]
    preferred = {id(c) for c in cands if any(re.search(rx, _norm_label(c.label)) for rx in spec.prefer)}
    for c in cands:
        if id(c) in preferred:
            c.score += PREFER_BONUS
    floor = cfg.answer.figure_min_score
    # A tie the bonus did not break goes to the preferred label too ("Net income/(loss)" scores as much as "Net
    # income/(loss) attributable to common shareholders" with it: Kraft Heinz).
    kept = sorted((c for c in cands if floor is None or c.score >= floor),
                  key=lambda c: (-round(c.score, 6), id(c) not in preferred, c.rank))
    if statements:  # "relying on the details shown in the cash flow statement": read it there when it prints it
        # of several named ("the balance sheet and the P&L statement"), the one printing this line item
        own = {spec.statement} & statements or statements
        on = {(p.sha1, p.page) for p in pages if p.statement in own}
        kept = [c for c in kept if (c.sha1, c.page) in on] or kept
    if not kept:
        best = max(cands, key=lambda c: c.score, default=None)
        why = (f"no row or sentence names '{spec.phrase}' in a {year} column" if best is None else
               f"best candidate '{best.label}' scores {best.score:.2f}, below answer.figure_min_score {floor}")
        raise Missing(name, year, why)
    best = kept[0]
    runner = ({"label": kept[1].label, "printed": kept[1].printed, "page": kept[1].page,
               "score": round(kept[1].score, 3)} if len(kept) > 1 else None)
    value = abs(float(best.value)) if spec.absolute else float(best.value)
    if best.source == "table" and best.factor == 1 and "scale not stated" in (best.unit or ""):
        scale = _report_scale(pages, best.sha1)  # a statement whose own unit line the parser lost
        if scale > 1:
            value *= scale
            best.factor, best.unit = scale, best.unit.replace("scale not stated", f"scale of its other tables: {scale:g}")
    return Operand(name, year, best, value, runner)


_TABLE_SCALE = re.compile(r"values in (thousands|millions|billions) of", re.I)  # the clean stage's unit line


def _report_scale(pages: list[CtxPage], sha1: str) -> int:
    """The scale most of the report's tables among ``pages`` state ("values in millions of USD"), 1 when they
    state none: every statement of a filing is in one scale."""
    counts: dict[int, int] = {}
    for p in pages:
        if p.sha1 == sha1:
            for m in _TABLE_SCALE.finditer(p.text):
                f = nums.SCALE_WORDS[m.group(1).lower()]
                counts[f] = counts.get(f, 0) + 1
    return max(counts, key=lambda f: counts[f]) if counts else 1


def operand_lookup(cfg: RunConfig, lexicon: Lexicon, pages: list[CtxPage], report_currency: str | None,
                   company: str, page_year: int | None, found: dict[tuple[str, int], Operand],
                   statements: frozenset[str] = frozenset()) -> Callable[[str, int], float]:
    """``lookup(name, year) -> value`` for :func:`evaluate`: each operand found once (:func:`find_operand` over
    ``pages``) and kept in ``found`` (the caller's record of what was read); raises :class:`Missing`."""
    def lookup(name: str, y: int) -> float:
        if (name, y) not in found:
            found[name, y] = find_operand(cfg, lexicon, name, y, pages, report_currency, company, page_year,
                                          statements)
        return found[name, y].value

    return lookup


# ---- arithmetic -------------------------------------------------------------------------------------------
_OPS: dict[type, Callable[[float, float], float]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a ** b}


def evaluate(ask: Ask, lookup: Callable[[str, int], float], year: int) -> float:
    """The formula in ``year`` (the mean over the N years ending there for an N-year average)."""
    years = list(range(year - ask.average + 1, year + 1)) if ask.average else [year]
    return sum(_eval(ask.formula.tree.body, ask, lookup, y) for y in years) / len(years)


def _eval(node: ast.AST, ask: Ask, lookup: Callable[[str, int], float], year: int) -> float:
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.Name):
        if node.id == SPAN:
            return float(year - ask.start) if ask.start is not None else math.nan
        name = ask.metric if node.id == METRIC else node.id
        return lookup(name, year)  # type: ignore[arg-type]
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, ask, lookup, year)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, ask, lookup, year), _eval(node.right, ask, lookup, year)
        if isinstance(node.op, ast.Div) and b == 0:
            raise ZeroDivisionError("a divisor operand is 0")
        return _OPS[type(node.op)](a, b)
    if isinstance(node, ast.Call):
        fn, arg = node.func.id, node.args[0]  # type: ignore[attr-defined]
        if fn == "prev":
            return _eval(arg, ask, lookup, year - 1)
        if fn == "avg":
            return (_eval(arg, ask, lookup, year) + _eval(arg, ask, lookup, year - 1)) / 2
        if ask.start is None:
            raise ValueError("start() needs a span of years")
        return _eval(arg, ask, lookup, ask.start)
    raise ValueError(f"unsupported expression node {type(node).__name__}")


def present(ask: Ask, x: float, default_decimals: int) -> tuple[float, str]:
    """The result in the question's terms: x100 for a share asked in percent; rounded to the decimals the
    question asks (else ``default_decimals``); money at the asked scale ("USD millions")."""
    unit = ask.formula.unit
    if unit == "share" and ask.percent:
        x, unit = x * 100, "%"
    d = ask.decimals if ask.decimals is not None else default_decimals
    if unit == "money":
        if ask.scale and ask.decimals is not None:
            x = round(round(x / ask.scale, d) * ask.scale, FLOAT_DIGITS)
        return (int(x) if float(x).is_integer() else x), unit
    return round(x, d), unit


# ---- the answer -------------------------------------------------------------------------------------------
def _source_line(pages: list[CtxPage], c: Candidate) -> str:
    """The page line the operand was read from (its table row, or the sentence's line), at most LINE_CHARS."""
    page = next((p for p in pages if p.sha1 == c.sha1 and p.page == c.page), None)
    if page is None:
        return ""
    head = c.label.split(":")[-1].strip()[:40] if c.source == "table" else ""
    line = next((ln for ln in page.text.splitlines() if c.printed in ln and head in ln), "")
    return line.strip()[:LINE_CHARS]



def top_pages_and_year(cfg: RunConfig, pages: list[CtxPage]) -> tuple[list[CtxPage], int | None]:
    """The top ``answer.computed_pages`` pages and the report year their dated tables print (or None)."""
    top = pages[: cfg.answer.computed_pages]
    return top, report_year([t for p in top for t in parse_tables(p.text, cfg.answer.unit_lookback_lines)])


def operand_pages(found: dict[tuple[str, int], Operand], top: list[CtxPage]) -> list[CtxPage]:
    """The pages the operands were read from, in the order found, each once (the answer's citations)."""
    cited: list[CtxPage] = []
    for o in found.values():
        p = next((p for p in top if p.sha1 == o.cand.sha1 and p.page == o.cand.page), None)
        if p is not None and p not in cited:
            cited.append(p)
    return cited


def answer_computed(cfg: RunConfig, question: str, pages: list[CtxPage], report_currency: str | None,
                    company: str = "") -> dict[str, Any] | None:
    """A computed figure from the top ``answer.computed_pages`` pages, or None (module docstring)."""
    lexicon = load_lexicon(lexicon_path(cfg))
    ask = recognise(question, lexicon)
    if ask is None:
        return None
    top, page_year = top_pages_and_year(cfg, pages)
    year = ask.year or page_year
    info: dict[str, Any] = {**ask.row(), "year": year, "pages_searched": [p.page for p in top], "operands": []}
    found: dict[tuple[str, int], Operand] = {}
    from ...retrieve.statements import asked_statements

    lookup = operand_lookup(cfg, lexicon, top, report_currency, company, page_year, found,
                            frozenset(asked_statements(cfg, question)))
    value: Any = NA
    try:
        if year is None:
            raise Missing("year", None, "the question names no fiscal year and no page prints a dated table")
        result = evaluate(ask, lookup, year)
        currencies = {o.cand.currency for o in found.values() if o.cand.currency and o.cand.unit != "%"}
        if len(currencies) > 1:
            raise Missing("currency", year, f"operands in several currencies: {', '.join(sorted(currencies))}")
        asked, cur = nums.question_currency(question), nums.resolve_dollar(next(iter(currencies), None),
                                                                          report_currency) or report_currency
        if asked and cur and cur.upper() != asked:  # as for a printed figure (rag.answer.interpret)
            raise Missing("currency", year, f"asked {asked}, figures in {cur}")
        if isinstance(result, complex) or math.isnan(result) or math.isinf(result):
            raise Missing("result", year, f"the arithmetic gives no real number ({result})")
        value, unit = present(ask, result, cfg.answer.computed_decimals)
        info.update(result=result, value=value, value_unit=unit)
    except Missing as e:
        info["fallback"] = f"operand {e.operand} ({e.year}) missing: {e.why}"
    except ZeroDivisionError as e:
        info["fallback"] = str(e)
    info["operands"] = [{**o.row(), "line": _source_line(top, o.cand)} for o in found.values()]
    cited = operand_pages(found, top) if value != NA else []
    interp = {"source": "computed", "computed": info, "value_pages": [p.page for p in cited]}
    if value == NA:
        interp["na_reason"] = info["fallback"]
    return {"value": value, "cited": cited, "calls": [], "interpretation": interp, "answering_part": cited or None}


def computed_reason(computed: dict[str, Any], value: Any) -> str:
    """One sentence saying how a computed answer was reached (``interpretation["computed"]`` of
    :func:`answer_computed` or rag.answer.booleans.computed_bool): the formula, each operand as printed with its year,
    row label and 1-based page, and the result; "" when nothing was computed."""
    ops = computed.get("operands") or []
    if not ops:
        return ""
    what = computed.get("formula") or computed.get("expression") or "the figure"
    parts = "; ".join(f"{o.get('operand')} {o.get('year')} = {o.get('printed')} {o.get('unit') or ''}".rstrip()
                      + f" ({o.get('label')}, page {o.get('page')})" for o in ops)
    shown = {True: "yes", False: "no"}.get(value, value) if isinstance(value, bool) else value
    return f"Computed in code: {what} from {parts} -> {shown}."
