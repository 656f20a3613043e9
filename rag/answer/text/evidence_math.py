"""Figures an open (text) answer states that no row prints: changes, differences, shares, per-share values and
the largest / smallest of the picked rows, computed in code from the evidence rows (rag.answer.text.text_evidence).

Why: the 1.5B reader computing in prose got a share or a per-share value wrong, and read "the largest" off the
wrong row. Here each fact is one sentence with its operands as printed, their period columns and the result;
the writer copies it.

Contracts:
- ``row_values(line) -> {year: Value}``: a table row's values by the year its column header names
  (:func:`rag.answer.common.md_tables.column_year`); cells holding several figures ("20.8 % $ 10.12") or none are skipped,
  and a row with a figure under an empty header (a period spanning several columns) gives none.
- ``computed_facts(question, lines) -> [str]``: what the question asks of the picked lines, by its words:
  a change (CHANGE words: between the two years it names, else the two latest columns; percent rows in
  percentage points, amounts with the change in percent), a share (SHARE words: each amount as a percent of the
  largest one, the total), a per-share value (PER_SHARE words: an amount over a row of shares), the largest or
  smallest row (MOST / LEAST words, among rows of the same unit). Empty when it asks none of these.
- ``formula_fact(cfg, question, pages, report_currency, company) -> str | None``: a computed figure of
  :mod:`rag.answer.computed.computed` (prompts/figures/formulas.toml: margins, ratios, effective tax rate...) when the
  question names one and its operands are found, as :func:`rag.answer.computed.computed.computed_reason` says it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .evidence_lines import Line
from ..computed.formulas import question_years
from ..common.md_tables import column_year
from ..common.printed import parse_printed

CHANGE = re.compile(r"\b(chang|increas|decreas|grow|growth|grew|declin|drop|fell|fall|rose|rise|differ|compar"
                    r"|between|improv|trend|shrunk|shrink)", re.I)
SHARE = re.compile(r"\b(share of|percentage of|percent of|% of|proportion|portion|accounted for|contribut|mix)\b",
                   re.I)
PER_SHARE = re.compile(r"\bper (?:common |diluted |basic )?share\b", re.I)
SHARES_ROW = re.compile(r"\bshares\b|\bshare count\b", re.I)
MOST = re.compile(r"\b(most|largest|highest|biggest|greatest|best)\b", re.I)
LEAST = re.compile(r"\b(least|lowest|smallest|worst|weakest)\b", re.I)
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


@dataclass(frozen=True)
class Value:
    value: float
    printed: str
    percent: bool
    decimals: int


def row_values(line: Line) -> dict[int, Value]:
    """See module docstring."""
    out: dict[int, Value] = {}
    if line.kind != "row":
        return out
    if any(not h.strip() and _NUMBER.search(c) for h, c in zip(line.columns, line.cells)):
        # A figure under no header: the period spans a group of columns ("2022" over net sales | % of total |
        # operating income, 3M's segment table) and which figure is the year's amount is unknown.
        return out
    for head, cell in zip(line.columns, line.cells):
        year = column_year(head)
        if year is None or year in out or len(_NUMBER.findall(cell)) != 1:
            continue
        p = parse_printed(cell)
        if p is None:
            continue
        digits = _NUMBER.search(cell).group(0)  # type: ignore[union-attr]
        dec = len(digits.split(".")[1]) if "." in digits else 0
        out[year] = Value(p.value, cell.strip(), p.percent or "%" in cell, dec)
    return out


def _fmt(x: float, decimals: int) -> str:
    return f"{x:,.{decimals}f}"


def _years(question: str, vals: dict[int, Value]) -> tuple[int, int] | None:
    """(earlier, later) year of a change: the two the question names when the row has both, else its latest two."""
    asked = sorted({y for y in question_years(question) if y in vals})
    if len(asked) >= 2:
        return asked[0], asked[-1]
    have = sorted(vals)
    if asked and len(have) >= 2:  # one named year: it and the year before it on the row
        later = asked[0]
        earlier = max((y for y in have if y < later), default=None)
        return (earlier, later) if earlier is not None else None
    return (have[-2], have[-1]) if len(have) >= 2 else None


def _change(line: Line, vals: dict[int, Value], question: str) -> str | None:
    ys = _years(question, vals)
    if ys is None:
        return None
    a, b = vals[ys[0]], vals[ys[1]]
    d = max(a.decimals, b.decimals)
    head = f"{line.label}: {a.printed} in {ys[0]} -> {b.printed} in {ys[1]}"
    if a.percent or b.percent:
        return f"{head}, a change of {b.value - a.value:+.{d}f} percentage points (page {line.page.page})"
    pct = f" ({(b.value - a.value) / abs(a.value) * 100:+.1f}%)" if a.value else ""
    return f"{head}, a change of {'+' if b.value >= a.value else '-'}{_fmt(abs(b.value - a.value), d)}{pct} " \
           f"(page {line.page.page})"


def _year_of(question: str, rows: list[tuple[Line, dict[int, Value]]]) -> int | None:
    """The year the question names that the rows print, else the latest year all of them print."""
    common = set.intersection(*(set(v) for _, v in rows)) if rows else set()
    asked = [y for y in question_years(question) if y in common]
    return asked[-1] if asked else (max(common) if common else None)


def computed_facts(question: str, lines: list[Line]) -> list[str]:
    """See module docstring."""
    rows = [(ln, v) for ln in lines if (v := row_values(ln))]
    facts: list[str] = []
    if CHANGE.search(question):
        facts += [f for ln, v in rows if (f := _change(ln, v, question))]
    amounts = [(ln, v) for ln, v in rows if not any(x.percent for x in v.values())]
    if SHARE.search(question) and len(amounts) >= 2 and (y := _year_of(question, amounts)) is not None:
        total_ln, total_v = max(amounts, key=lambda r: abs(r[1][y].value))
        for ln, v in amounts:
            if ln is not total_ln and total_v[y].value:
                facts.append(f"{ln.label} is {v[y].value / total_v[y].value * 100:.1f}% of {total_ln.label} in {y} "
                             f"({v[y].printed} / {total_v[y].printed}, page {ln.page.page})")
    if PER_SHARE.search(question):
        shares = [(ln, v) for ln, v in amounts if SHARES_ROW.search(ln.label)]
        others = [(ln, v) for ln, v in amounts if not SHARES_ROW.search(ln.label)]
        if shares and others and (y := _year_of(question, [shares[0], others[0]])) is not None and shares[0][1][y].value:
            (ln, v), (sl, sv) = others[0], shares[0]
            facts.append(f"{ln.label} per share in {y}: {v[y].value / sv[y].value:.2f} ({v[y].printed} / "
                         f"{sv[y].printed} {sl.label}, same unit assumed; page {ln.page.page})")
    wants_min = bool(LEAST.search(question)) and not MOST.search(question)
    if (MOST.search(question) or wants_min) and len(rows) >= 2:
        pct = [r for r in rows if any(x.percent for x in r[1].values())]
        group = pct if len(pct) * 2 > len(rows) else amounts
        y = _year_of(question, group)
        if len(group) >= 2 and y is not None:
            pick = (min if wants_min else max)(group, key=lambda r: r[1][y].value)
            word = "smallest" if wants_min else "largest"
            facts.append(f"{word} of the lines {', '.join(str(ln.n) for ln, _ in group)} in {y}: {pick[0].label} "
                         f"({pick[1][y].printed}, page {pick[0].page.page})")
    return facts


def formula_fact(cfg: Any, question: str, pages: list, report_currency: str | None, company: str = "") -> str | None:
    """See module docstring."""
    from ..computed import answer_computed, computed_reason

    res = answer_computed(cfg, question, pages, report_currency, company)
    if res is None or res["value"] in (None, "N/A"):
        return None
    comp = res["interpretation"]["computed"]
    unit = "%" if comp.get("value_unit") == "%" else ""
    return computed_reason(comp, f"{res['value']}{unit}").removeprefix("Computed in code: ")
