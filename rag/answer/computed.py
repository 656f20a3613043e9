"""Computed figures (stage 06, number questions): ratios, margins, growth and averages computed in code.

Why: FinanceBench-style questions ask for figures a filing does not print ("FY2017 days payable
outstanding", "3 year average net profit margin", "2 year revenue CAGR"). A reader (or the table pick)
returns some printed number; the right answer is arithmetic over printed line items of one or more years.

Contracts:
- The lexicon (``answer.formulas_file``, TOML, see its header): operands (a line item's words and row-label
  patterns) and formulas (question patterns, an expression over operands, an output unit). ``load_lexicon``
  raises ValueError naming the file and the entry for a bad one; ``lexicon_version`` hashes it (06 keys).
- ``recognise(question, lexicon) -> Ask | None``: the first formula whose pattern matches, the question's
  fiscal year (the latest year it names; None: the pages' report year), the span (an N-year average, a CAGR
  or a change between two named years), percent asked ("%", "percent"), decimals asked ("round ... to two
  decimal places") and the money scale asked ("USD millions"). None: no formula, or one needing a metric
  (growth, CAGR) whose metric the question does not name.
- ``find_operand(cfg, lexicon, name, year, pages, ...) -> Operand`` or :class:`Missing`: the best candidate
  of the line item in that year's column (:func:`rag.answer.figures.build_candidates` with ``period_year``;
  figures in sentences (:mod:`rag.answer.prose`) only for the report's own year), the same score threshold
  (``answer.figure_min_score``) and the best-scoring pick as table candidates. A table row must match the
  operand's label patterns (or :data:`rag.answer.figures.LABEL_ALIASES` of its phrase); rows under a section
  or in a table its ``avoid`` patterns name are refused (a balance-sheet item's change in a cash-flow statement).
- ``evaluate(ask, lookup) -> float``: the expression (only + - * / **, numbers, operand names, prev / avg /
  start) evaluated in code, averaged over the span's years for an N-year average; ``lookup(name, year)``
  gives each operand's value or raises :class:`Missing`. ``present(ask, x) -> (value, unit)``: x100 for a
  share asked in percent, rounded as asked (money at the asked scale).
- ``answer_computed(cfg, question, pages, report_currency, company) -> dict | None``: None when no formula
  is recognised; else the ``rag.answer.fuse.answer_pages`` result shape with ``interpretation["computed"]``
  (formula, expression, year, every operand with value, printed figure, row label, page, period and the page
  line it was read from; result, rounded value) and, when an operand is missing, value N/A and
  ``computed["fallback"]`` saying which and why (the caller then answers as without computed figures: no
  number is ever made up). Operands in different currencies -> missing. Cited pages: the operands' pages.
"""
from __future__ import annotations

import ast
import hashlib
import math
import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from ..core.config import RunConfig, project_path
from .context import CtxPage
from .figures import NA, Candidate, _norm_label, aliases_for, build_candidates, dedupe, parse_tables, report_year

UNITS = ("share", "ratio", "times", "days", "money")
FUNCTIONS = ("prev", "avg", "start")
METRIC = "metric"  # the expression's name for the operand the question names (growth, CAGR)
SPAN = "years"  # the expression's name for the span's length in years
FLOAT_DIGITS = 6  # 3.2 * 1e9 is 3200000000.0000005 in floats: money rounded at a scale is cut back to this
LINE_CHARS = 300  # an operand's source line in the debug record
PREFER_BONUS = 0.05  # a row label of the line asked among several that fit (as figures.TOTAL_BONUS)
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                 "nine": 9, "ten": 10}
_N = r"(\d{1,2}|" + "|".join(_NUMBER_WORDS) + r")"
# An N-year average: "3 year average", "three-year average", "average ... over the last 3 years".
AVERAGE_PATTERNS = (re.compile(_N + r"[- ]years?(?: \w+)? average", re.I),
                    re.compile(r"\baverage\b.{0,60}?\b(?:over|of) (?:the )?(?:last |past )?" + _N
                               + r" (?:fiscal )?years", re.I))
_SPAN_YEARS = re.compile(_N + r"[- ]years?\b", re.I)  # "2 year total revenue CAGR"
_YEARS = re.compile(r"(?i)\b(?:FY|fiscal(?: year)?)\s*'?\s*(\d{4}|\d{2})\b|(?<![\d$.,])((?:19|20)\d{2})(?![\d,%])")
_DECIMALS = re.compile(r"(?i)\bround\w*\b(?:\s+\w+){0,4}?\s+to\s+(?:the\s+)?(?:nearest\s+)?" + _N + r"\s+decimal")
_PERCENT = re.compile(r"%|\bpercent", re.I)
_SCALES = {"thousand": 1e3, "thousands": 1e3, "million": 1e6, "millions": 1e6, "billion": 1e9, "billions": 1e9}
_MONEY_SCALE = re.compile(r"(?i)\b(?:in\s+)?(?:units\s+of\s+)?(?:[A-Z]{3}\s+)?(thousands?|millions?|billions?)\b")


# ---- the lexicon ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OperandSpec:
    name: str
    phrase: str
    labels: tuple[str, ...] = ()
    prefer: tuple[str, ...] = ()
    asked: tuple[str, ...] = ()
    absolute: bool = False
    avoid: tuple[str, ...] = ()  # patterns on a candidate's section / table-title notes


@dataclass(frozen=True)
class Formula:
    name: str
    match: tuple[str, ...]
    expr: str
    unit: str
    tree: Any = field(compare=False, repr=False, default=None)


@dataclass(frozen=True)
class Lexicon:
    operands: dict[str, OperandSpec]
    formulas: tuple[Formula, ...]
    version: str


def _check_expr(tree: ast.AST, names: set[str], where: str) -> None:
    """Only numbers, known operand names, + - * / **, unary minus and prev/avg/start(name-expression)."""
    for node in ast.walk(tree):
        ok = isinstance(node, (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Call, ast.Load,
                               ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.USub, ast.UAdd))
        if not ok:
            raise ValueError(f"{where}: {type(node).__name__} is not allowed in an expression")
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)):
            raise ValueError(f"{where}: constant {node.value!r} is not a number")
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS
                                               and len(node.args) == 1 and not node.keywords):
            raise ValueError(f"{where}: only {', '.join(FUNCTIONS)} of one argument may be called")
        if isinstance(node, ast.Name) and node.id not in names | set(FUNCTIONS) | {METRIC, SPAN}:
            raise ValueError(f"{where}: unknown operand {node.id!r}")


@lru_cache(maxsize=8)
def _load(path: str, mtime: float) -> Lexicon:
    p = Path(path)
    raw = p.read_bytes()
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{p}: not valid TOML ({e})") from None
    operands: dict[str, OperandSpec] = {}
    for name, o in (data.get("operands") or {}).items():
        if not isinstance(o, dict) or not o.get("phrase"):
            raise ValueError(f"{p}: operand {name!r} needs a phrase")
        for rx in [*o.get("labels", []), *o.get("prefer", []), *o.get("asked", []), *o.get("avoid", [])]:
            try:
                re.compile(rx)
            except re.error as e:
                raise ValueError(f"{p}: operand {name!r}: bad pattern {rx!r} ({e})") from None
        operands[name] = OperandSpec(name, o["phrase"], tuple(o.get("labels", [])), tuple(o.get("prefer", [])),
                                     tuple(o.get("asked", [])) or (re.escape(o["phrase"]),), bool(o.get("abs", False)),
                                     tuple(o.get("avoid", [])))
    formulas = []
    for i, f in enumerate(data.get("formula") or []):
        where = f"{p}: formula {f.get('name') or i + 1}"
        if not f.get("name") or not f.get("match") or not f.get("expr"):
            raise ValueError(f"{where}: needs name, match and expr")
        if f.get("unit") not in UNITS:
            raise ValueError(f"{where}: unit {f.get('unit')!r} is not one of {', '.join(UNITS)}")
        for rx in f["match"]:
            try:
                re.compile(rx)
            except re.error as e:
                raise ValueError(f"{where}: bad pattern {rx!r} ({e})") from None
        try:
            tree = ast.parse(f["expr"], mode="eval")
        except SyntaxError as e:
            raise ValueError(f"{where}: expression {f['expr']!r} does not parse ({e.msg})") from None
        _check_expr(tree, set(operands), where)
        formulas.append(Formula(f["name"], tuple(f["match"]), f["expr"], f["unit"], tree))
    return Lexicon(operands, tuple(formulas), hashlib.sha256(raw).hexdigest()[:12])


def load_lexicon(path: Path | str) -> Lexicon:
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"formula lexicon {p} is missing")
    return _load(str(p.resolve()), p.stat().st_mtime)


def lexicon_path(cfg: RunConfig) -> Path:
    return project_path(cfg.answer.formulas_file)


def lexicon_version(cfg: RunConfig) -> str:
    return load_lexicon(lexicon_path(cfg)).version


# ---- the question -----------------------------------------------------------------------------------------
@dataclass
class Ask:
    formula: Formula
    year: int | None  # the question's fiscal year (None: the pages' report year)
    start: int | None = None  # first year of a span (CAGR, a change between two named years)
    average: int = 0  # N of an N-year average (0: none)
    metric: str | None = None  # the operand the question names (growth, CAGR)
    percent: bool = False
    decimals: int | None = None
    scale: float | None = None  # money asked in thousands / millions / billions

    def row(self) -> dict[str, Any]:
        return {"formula": self.formula.name, "expression": self.formula.expr, "unit": self.formula.unit,
                "year": self.year, "start": self.start, "average_years": self.average, "metric": self.metric,
                "percent": self.percent, "decimals": self.decimals, "scale": self.scale}


def _num(s: str) -> int:
    return int(s) if s.isdigit() else _NUMBER_WORDS[s.lower()]


def question_years(question: str) -> list[int]:
    """The fiscal years a question names ("FY2018", "FY 2018", "fiscal 2019", "FY18", "in 2022"), in order."""
    out = []
    for m in _YEARS.finditer(question):
        y = m.group(1) or m.group(2)
        out.append(int(y) if len(y) == 4 else 2000 + int(y))
    return out


def recognise(question: str, lexicon: Lexicon) -> Ask | None:
    """The formula the question asks for, with its years, rounding and unit (module docstring)."""
    formula = next((f for f in lexicon.formulas if any(re.search(rx, question, re.I) for rx in f.match)), None)
    if formula is None:
        return None
    names = {n.id for n in ast.walk(formula.tree) if isinstance(n, ast.Name)}
    metric = None
    if METRIC in names:  # the operand named closest after the formula's words, else anywhere
        hits = [(m.start(), o.name) for o in lexicon.operands.values() for rx in o.asked
                for m in re.finditer(rx, question, re.I)]
        if not hits:
            return None
        metric = min(hits)[1]
    years = question_years(question)
    year = max(years) if years else None
    average = 0
    for rx in AVERAGE_PATTERNS:
        if m := rx.search(question):
            average = _num(m.group(1))
            break
    start = None
    if SPAN in names or "start" in formula.expr:
        if len(set(years)) >= 2:
            start = min(years)
        elif year is not None and (m := _SPAN_YEARS.search(question)):
            start = year - _num(m.group(1))
        else:
            return None  # a CAGR with no span: nothing to compute over
    d = _DECIMALS.search(question)
    sm = _MONEY_SCALE.search(question) if formula.unit == "money" else None
    return Ask(formula, year, start, average, metric, bool(_PERCENT.search(question)),
               _num(d.group(1)) if d else None, _SCALES[sm.group(1).lower()] if sm else None)


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
                 report_currency: str | None, company: str = "", page_year: int | None = None) -> Operand:
    """The best candidate of operand ``name`` in ``year``'s column of ``pages`` (module docstring)."""
    spec = lexicon.operands[name]
    sub = f"What is the {spec.phrase}?"
    cands = build_candidates(cfg, sub, pages, report_currency, company, period_year=year, extra_aliases=spec.labels)
    if cfg.answer.prose_candidates and year == page_year:  # sentences date figures to the report's year only
        from .prose import prose_candidates

        cands = dedupe(cands + prose_candidates(cfg, sub, pages, report_currency, company)[0])
    # A table row must be the line item (one of its label patterns, or the phrase's own words): "Gross
    # profit" shares "profit" with net income and "Total current assets" the words of total assets.
    patterns = spec.labels + aliases_for(sub, company)
    cands = [c for c in cands if c.source != "table" or any(re.search(rx, _norm_label(c.label)) for rx in patterns)
             or _norm_label(c.label) in (spec.phrase, f"total {spec.phrase}")]
    if spec.avoid:  # a balance-sheet item read from a cash-flow statement's changes, say
        cands = [c for c in cands if not any(re.search(rx, n, re.I) for rx in spec.avoid for n in c.notes)]
    for c in cands:
        if any(re.search(rx, _norm_label(c.label)) for rx in spec.prefer):
            c.score += PREFER_BONUS
    floor = cfg.answer.figure_min_score
    kept = sorted((c for c in cands if floor is None or c.score >= floor), key=lambda c: (-c.score, c.rank))
    if not kept:
        best = max(cands, key=lambda c: c.score, default=None)
        why = (f"no row or sentence names '{spec.phrase}' in a {year} column" if best is None else
               f"best candidate '{best.label}' scores {best.score:.2f}, below answer.figure_min_score {floor}")
        raise Missing(name, year, why)
    best = kept[0]
    runner = ({"label": kept[1].label, "printed": kept[1].printed, "page": kept[1].page,
               "score": round(kept[1].score, 3)} if len(kept) > 1 else None)
    value = abs(float(best.value)) if spec.absolute else float(best.value)
    return Operand(name, year, best, value, runner)


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



def answer_computed(cfg: RunConfig, question: str, pages: list[CtxPage], report_currency: str | None,
                    company: str = "") -> dict[str, Any] | None:
    """A computed figure from the top ``answer.computed_pages`` pages, or None (module docstring)."""
    lexicon = load_lexicon(lexicon_path(cfg))
    ask = recognise(question, lexicon)
    if ask is None:
        return None
    top = pages[: cfg.answer.computed_pages]
    page_year = report_year([t for p in top for t in parse_tables(p.text, cfg.answer.unit_lookback_lines)])
    year = ask.year or page_year
    info: dict[str, Any] = {**ask.row(), "year": year, "pages_searched": [p.page for p in top], "operands": []}
    found: dict[tuple[str, int], Operand] = {}

    def lookup(name: str, y: int) -> float:
        if (name, y) not in found:
            found[name, y] = find_operand(cfg, lexicon, name, y, top, report_currency, company, page_year)
        return found[name, y].value

    value: Any = NA
    try:
        if year is None:
            raise Missing("year", None, "the question names no fiscal year and no page prints a dated table")
        result = evaluate(ask, lookup, year)
        currencies = {o.cand.currency for o in found.values() if o.cand.currency and o.cand.unit != "%"}
        if len(currencies) > 1:
            raise Missing("currency", year, f"operands in several currencies: {', '.join(sorted(currencies))}")
        if isinstance(result, complex) or math.isnan(result) or math.isinf(result):
            raise Missing("result", year, f"the arithmetic gives no real number ({result})")
        value, unit = present(ask, result, cfg.answer.computed_decimals)
        info.update(result=result, value=value, value_unit=unit)
    except Missing as e:
        info["fallback"] = f"operand {e.operand} ({e.year}) missing: {e.why}"
    except ZeroDivisionError as e:
        info["fallback"] = str(e)
    info["operands"] = [{**o.row(), "line": _source_line(top, o.cand)} for o in found.values()]
    cited = []
    for o in found.values():
        p = next((p for p in top if p.sha1 == o.cand.sha1 and p.page == o.cand.page), None)
        if p is not None and p not in cited:
            cited.append(p)
    if value == NA:
        cited = []
    interp = {"source": "computed", "computed": info, "value_pages": [p.page for p in cited]}
    if value == NA:
        interp["na_reason"] = info["fallback"]
    return {"value": value, "cited": cited, "calls": [], "interpretation": interp, "answering_part": cited or None}
