"""Computed figures, part one: the formula lexicon and what a question asks (rag.answer.computed.computed computes).

Contracts:
- The lexicon (``answer.formulas_file``, TOML, see its header): operands (a line item's words and row-label
  patterns) and formulas (question patterns, an expression over operands, an output unit). ``load_lexicon``
  raises ValueError naming the file and the entry for a bad one; ``lexicon_version`` hashes it (06 keys).
- ``recognise(question, lexicon) -> Ask | None``: the first formula whose pattern matches, the question's
  fiscal year (the latest year it names; None: the pages' report year), the span (an N-year average, a CAGR
  or a change between two named years), percent asked ("%", "percent"), decimals asked ("round ... to two
  decimal places") and the money scale asked ("USD millions"). None: no formula, or one needing a metric
  (growth, CAGR) whose metric the question does not name. ``plain_formula(question, lexicon)``: its formula when
  that is a figure of one year (no growth, no span), else None.
"""
from __future__ import annotations

import ast
import hashlib
import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ...core.config import RunConfig, project_path

UNITS = ("share", "ratio", "times", "days", "money")
FUNCTIONS = ("prev", "avg", "start")
METRIC = "metric"  # the expression's name for the operand the question names (growth, CAGR)
SPAN = "years"  # the expression's name for the span's length in years
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
STATEMENTS = ("", "balance_sheet", "income_statement", "cash_flow_statement")  # prompts/search/statements.toml
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
    statement: str = ""  # the statement printing the line ("income_statement"), "" when several may


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
        if o.get("statement", "") not in STATEMENTS:
            raise ValueError(f"{p}: operand {name!r}: statement {o['statement']!r} is not one of "
                             f"{', '.join(STATEMENTS[1:])}")
        operands[name] = OperandSpec(name, o["phrase"], tuple(o.get("labels", [])), tuple(o.get("prefer", [])),
                                     tuple(o.get("asked", [])) or (re.escape(o["phrase"]),), bool(o.get("abs", False)),
                                     tuple(o.get("avoid", [])), o.get("statement", ""))
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


def plain_formula(question: str, lexicon: Lexicon) -> Formula | None:
    """The question's formula when it is a figure of one year (no growth over a named metric, no span): what a
    yes/no or a change between two years compares across years."""
    ask = recognise(question, lexicon)
    if ask is None:
        return None
    names = {n.id for n in ast.walk(ask.formula.tree) if isinstance(n, ast.Name)}
    if METRIC in names or SPAN in names or "start" in ask.formula.expr:
        return None
    return ask.formula
