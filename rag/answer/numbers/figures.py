"""Figures from tables (stage 06, number questions): candidate figures read from the parsed tables of
the retrieved pages; the model only picks one of a short list (or N/A); the figure is converted in code.

Why: the 1.5B reader misses evidence that is in its context and picks different numbers from
differently ordered pages. A table row whose label names the metric, in the column of the latest
period, with the table's unit line, is most of an answer already; picking from five lines is easier
than reading three pages.

Contracts:
- Tables and their periods come from :mod:`rag.answer.common.md_tables` (``parse_tables``, ``column_year``,
  ``report_year``; re-exported here); a row's cell and a grid's unit from :mod:`rag.answer.numbers.grid_cells`; the
  text around a grid (period headers above or below it) from :mod:`rag.answer.numbers.grid_context`.
- Row labels naming the metric: :mod:`rag.answer.numbers.labels` (``label_score``, ``aliases_for``; re-exported here).
- ``build_candidates(cfg, question, pages, report_currency, company) -> list[Candidate]``: best first,
  at most ``answer.figure_max_candidates``, one per distinct value. Rules: the latest-period column
  (year = report year; an undated table's first value column, penalized); scale from the column
  header, else the row label, else the table's unit line (its "except per share" honoured); per-share
  and percentage questions never scaled; a percentage question takes only printed percentages (or a
  "%" column/label), any other question never takes them; a question naming a currency drops a table
  whose currency differs -> no candidate, so N/A. A table's currency: one its printed unit phrase names
  explicitly, else the clean stage's unit line (a dollar resolved from a bare "$" gives way to the dollar
  the retrieved pages say the report is presented in), else the pages' most common table currency,
  else the dataset's report currency.
- Steps of ``build_candidates``: what the question asks and each row's label fit and cell scale
  (:mod:`rag.answer.numbers.row_fit`), the grids with their units (``_unit_tables``), each grid's column
  (``_grid_column``), its rows' figures (``_grid_candidates``), one per value (:mod:`rag.answer.numbers.candidate`).
- The pick among them (the prompt, the model call, the answer) is :mod:`rag.answer.numbers.figure_pick`.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

from .candidate import Candidate, dedupe, format_candidates  # noqa: F401 - format_candidates re-exported
from ..common import printed as nums
from ...clean.units import stated_dollar
from ...core.config import RunConfig
from ..common.context import CtxPage
from ..common.md_tables import (  # noqa: F401 - parse_tables, column_year, report_year re-exported
    MdTable, _SIGNS, _columns, _is_amount, _is_nil, _label, _table_years, column_year, parse_tables, report_year)
from .grid_context import text_above, years_above, years_below  # noqa: F401 - years_below re-exported
from .grid_cells import _pick_cell, _table_unit, _value_slots, notes_width  # noqa: F401 - notes_width re-exported
from .row_fit import Asks, cell_scale, label_fit, label_refused, question_asks
from .labels import (  # noqa: F401 - label_score, aliases_for, LABEL_ALIASES re-exported
    ALIAS_SCORE, EXTRA_WORD_PENALTY, LABEL_ALIASES, LABEL_QUALIFIERS, MONEY_LABEL, PER_SHARE_LABEL, _norm_label,
    aliases_for, asks_total, distinct, label_qualifiers, label_score, named_row)

NA = "N/A"

# ---- scoring constants (not tuning knobs of a run: they define what a candidate is) ----------------
UNDATED_PENALTY = 0.2  # a table whose columns name no period: its first value column is only a guess
OLDER_PENALTY = 0.3  # the table's latest column is older than the report's period end
PARENT_ONLY_PENALTY = 0.05  # a parent-company-only ("condensed") statement: the consolidated figure is asked
TOTAL_BONUS = 0.05  # a "Total ..." row when the question asks for a total
RANK_PENALTY = 0.01  # per page rank: ties go to the better-retrieved page
TITLE_CHARS = 60  # table title shown in the pick list
LABEL_CHARS = 100
STATEMENT_BONUS = 0.05  # a row of the statement page 05 added for the question (rag.retrieve.statements)
ABOVE_LINES = 3  # text lines above a grid read as its context (what a titleless grid holds)
HEADING_WORDS = 12  # a line above a grid this short is a heading, not a paragraph

_PARENT_ONLY = re.compile(r"(?i)\b(?:condensed|parent company|parent only|company only|bank only|parent entity)\b"
                          r"|^(?:Table:\s*)?parent(?:\s+—|\s*$)")  # ASX notes: "Parent entity information", "Parent"


# ---- candidates from the tables: what the question asks, each grid's column, each row's figure -----------
def _unit_tables(cfg: RunConfig, pages: list[CtxPage], report_currency: str | None,
                 context_pages: list[CtxPage] | None) -> tuple[list[tuple[CtxPage, MdTable, nums.Scale, str | None]], int | None]:
    """The grids of ``pages`` as ``(page, grid, unit, currency)`` and the report year their periods give. A grid
    without a currency takes the pages' most common table currency (the clean stage resolved "$" per report),
    else the dataset's report currency (not always the report's own: a last resort)."""
    dollar = nums.resolve_dollar("$", report_currency) or "USD"
    tables = [(p, t) for p in pages for t in parse_tables(p.text, cfg.answer.unit_lookback_lines)]
    year = report_year([t for _, t in tables])
    stated = stated_dollar([p.text for p in (context_pages or pages)])
    table_units = _scale_from_above(tables, [_table_unit(t, dollar, stated) for _, t in tables])
    seen = Counter(c for _, c in table_units if c)
    fallback = seen.most_common(1)[0][0] if seen else (report_currency.upper() if report_currency else None)
    return [(p, t, unit, tcur or fallback) for (p, t), (unit, tcur) in zip(tables, table_units)], year


def _scale_from_above(tables: list[tuple[CtxPage, MdTable]], units: list[tuple[nums.Scale, str | None]]
                      ) -> list[tuple[nums.Scale, str | None]]:
    """A grid whose unit states no scale takes the scale of the grid above it on its page when that one states
    one in the same currency: a statement split in two grids ("LIABILITIES AND STOCKHOLDERS' EQUITY" under
    "(In Thousands)") keeps its scale. Count, percent and per-share rows ignore a table's scale anyway."""
    out: list[tuple[nums.Scale, str | None]] = []
    for i, ((p, _), (unit, cur)) in enumerate(zip(tables, units)):
        prev = out[-1] if i and tables[i - 1][0] is p else None
        if unit.factor is None and prev and prev[0].factor and (not cur or not prev[1] or cur == prev[1]):
            unit = replace(unit, factor=prev[0].factor, text=unit.text or prev[0].text)
        out.append((unit, cur))
    return out


@dataclass
class _Column:
    """The column of one grid its figures are read from: ``want`` (None: undated, the first value column), the
    years its header names (``dated``), the header texts (``cols``: read around the grid when the grid has
    none; ``printed``: as the grid prints them), the text lines above it, and the penalty with its notes."""
    want: int | None
    dated: list[tuple[int, int]]
    cols: list[str]
    printed: list[str]
    lines_above: list[str]
    penalty: float
    notes: list[str]


def _grid_column(p: CtxPage, t: MdTable, year: int | None, period_year: int | None,
                 above: tuple[str, list[tuple[int, int]], int] | None) -> tuple[_Column | None, Any]:
    """The column of grid ``t`` to read (None: the grid prints no wanted period) and the dated grid a next grid
    of the page may continue (``above``: page key, dated columns, width): a grid without a period header of the same
    width on the same page continues the last dated one (the parser split a statement at a text line such as
    "Adjustments to reconcile net earnings to net cash provided by")."""
    dated = _table_years(t)
    cols = printed_cols = _columns(t)  # ``cols`` may become the years read around the grid
    lines_above = text_above(p.text, t.order, ABOVE_LINES, joined=False)  # the text lines right above the grid
    if not dated:  # the period header the parser left above the grid
        dated = years_above(p.text, t.order, len(cols)) or years_below(p.text, t.order, len(cols))
        cols = [str(dict(dated).get(i, "")) for i in range(len(cols))] if dated else cols
    key = f"{p.sha1}:{p.page}"
    if dated:
        above = (key, dated, len(cols))
    elif above and above[0] == key and above[2] == len(cols):
        dated = above[1]  # the grid continues the dated one above it (a statement split by a text line)
        cols = [str(dict(dated).get(i, "")) for i in range(len(cols))]
    notes: list[str] = []
    penalty = 0.0
    if period_year is not None and dated:
        want = next((c for c, y in dated if y == period_year), None)
        if want is None:
            return None, above  # the table does not print that year
    elif period_year is not None and period_year != year:
        return None, above  # an undated table stands for the report's year only
    elif dated:
        latest = [c for c, y in dated if y == year] if year else []
        if not latest:
            newest = max(y for _, y in dated)
            if year and newest > year:
                return None, above  # only future periods (maturities, targets)
            latest = [c for c, y in dated if y == newest]
            if year:  # no report year (only grids dated from the lines above them): the newest column
                penalty += OLDER_PENALTY
                notes.append("older period")
        want = latest[0]
    else:  # undated (with period_year: the report's year)
        want = None
        ty = column_year(t.title)
        if not (ty and (year is None or ty == year)):
            penalty += UNDATED_PENALTY
            notes.append("undated")
    if _parent_only(t, lines_above):
        penalty += PARENT_ONLY_PENALTY
        notes.append("parent company only")
    return _Column(want, dated, cols, printed_cols, lines_above, penalty, notes), above


def _grid_candidates(cfg: RunConfig, asks: Asks, p: CtxPage, t: MdTable, col: _Column, unit: nums.Scale, cur: str | None,
                     year: int | None, period_year: int | None, any_label: bool) -> list[Candidate]:
    """The candidates of one grid's rows: label fit, label checks, the column's cell, percent and scale rules."""
    out: list[Candidate] = []
    want, dated, cols = col.want, col.dated, col.cols
    head = cols[want] if want is not None and want < len(cols) else ""
    note_width = 0 if dated else notes_width(t)
    # what a titleless grid holds, for rows naming the question's programme or product (once per grid)
    context = f"{t.title} {' '.join(col.lines_above)}" if asks.named else ""
    # a breakdown whose value column names the metric: its total row is the metric's figure
    header_fit = (label_score(" ".join(col.printed[1:]), asks.terms, asks.aliases, asks.quals)
                  if len(col.printed) == 2 else 0.0)
    section = ""  # the last row with a label and no value ("Loss per share:", "Revenue:")
    for r in t.rows:
        label = _label(r)
        if label and not _value_slots(r):
            section = label.rstrip(" :")
            continue
        fitted = label_fit(asks, label, section, header_fit, context)
        if fitted is None:
            continue
        score, label = fitted
        fit = score  # how well the label names the metric, before any bonus or penalty
        if label_refused(cfg, asks, label, score, any_label):
            continue
        if asks.total and _norm_label(label).startswith("total"):
            score += TOTAL_BONUS  # "Total deposits" over the "Deposits" rows of its parts
        got = _pick_cell(r, want, dated, note_width)
        if got is None or _is_nil(got[0]):
            continue
        cell, c = got
        printed = _SIGNS.sub("", cell).strip()
        parsed = nums.parse_printed(cell)
        if parsed is None:
            continue
        col_head = cols[c] if c is not None and c < len(cols) else head
        is_pct = parsed.percent or "%" in col_head or "%" in label or "percent" in label.lower()
        if asks.pct != is_pct:
            continue  # a percentage question takes printed percentages only, and only it does
        factor, shown, lost = cell_scale(asks, label, col_head, unit, cur, is_pct)
        if lost:
            score -= lost
        value = parsed.value * factor
        period = col_head or (str(year) if year and not col.notes else "")
        out.append(Candidate(label=label[:LABEL_CHARS], period=period,
                             printed=printed, value=int(value) if float(value).is_integer() else value,
                             factor=factor, unit=shown, currency=cur, sha1=p.sha1, page=p.page, rank=p.rank,
                             title=_title(t.title),
                             score=score - col.penalty - RANK_PENALTY * p.rank + _statement_bonus(p), fit=fit,
                             notes=list(col.notes) + _where(period_year, section, t.title)))
    return out


def build_candidates(cfg: RunConfig, question: str, pages: list[CtxPage], report_currency: str | None,
                     company: str = "", context_pages: list[CtxPage] | None = None, period_year: int | None = None,
                     extra_aliases: tuple[str, ...] = (), any_label: bool = False) -> list[Candidate]:
    """Candidate figures of the question's metric from the tables of ``pages`` (module docstring);
    ``context_pages`` (default ``pages``) are searched for the dollar the report is presented in.
    ``period_year`` (computed figures, :mod:`rag.answer.computed.computed`): the column of that year instead of the
    latest one; a table without it is skipped, and a table whose header names no year takes the years of
    the dated table above it on its page when their columns line up (a balance sheet split in two grids).
    ``extra_aliases``: more row-label patterns of the metric (as :data:`LABEL_ALIASES`). ``any_label``: every row
    with a figure in the period's column is a candidate, whatever its label says (the label checks are left to
    :mod:`rag.answer.numbers.metric_choice`, which matches labels by meaning); the unit, period and currency rules hold.

    Steps: what the question asks (:func:`question_asks`), the grids with their units and currencies
    (:func:`_unit_tables`), each grid's column (:func:`_grid_column`), its rows' figures (:func:`_grid_candidates`),
    then one candidate per value, best first, at most ``answer.figure_max_candidates`` (:func:`dedupe`)."""
    asks = question_asks(question, company, extra_aliases)
    tables, year = _unit_tables(cfg, pages, report_currency, context_pages)
    found: list[Candidate] = []
    above: tuple[str, list[tuple[int, int]], int] | None = None  # (page key, dated columns, width) of a dated table
    for p, t, unit, cur in tables:
        col, above = _grid_column(p, t, year, period_year, above)
        if asks.currency and cur and cur != asks.currency:
            continue  # the table (or the report) is in another currency: never convert
        if col is None:
            continue
        want = col.want
        if not asks.pct and "%" in (col.cols[want] if want is not None and want < len(col.cols) else ""):
            continue
        found += _grid_candidates(cfg, asks, p, t, col, unit, cur, year, period_year, any_label)
    return dedupe(found)[: cfg.answer.figure_max_candidates]


def _parent_only(t: MdTable, lines_above: list[str]) -> bool:
    """The grid is the parent entity's alone: its title says so, or a heading-like line right above it
    (``lines_above``) does ("Note 28. Parent entity information"; a paragraph mentioning the parent entity does not
    count)."""
    if _PARENT_ONLY.search(t.title):
        return True
    return any(len(ln.split()) <= HEADING_WORDS and _PARENT_ONLY.search(ln.lstrip("# ")) for ln in lines_above)


def _statement_bonus(p: CtxPage) -> float:
    """A row of a primary statement page that 05 added for the question (not a note or summary quoting it)."""
    return STATEMENT_BONUS if p.statement and not p.statement.startswith("count:") else 0.0


def _where(period_year: int | None, section: str, title: str) -> list[str]:
    """Computed figures' operands (``period_year`` set): the row's section and its table's whole title line
    as notes, so a balance-sheet item can refuse a cash-flow statement's "Changes in ..." row."""
    if period_year is None:
        return []
    return ([f"section: {section}"] if section else []) + ([f"table: {title}"] if title else [])


def _title(line: str) -> str:
    s = re.sub(r"^Table:\s*", "", line or "")
    s = re.split(r"\s+—\s+values in|\s+\(as printed", s)[0].strip()
    return s if len(s) <= TITLE_CHARS else s[: TITLE_CHARS - 1].rstrip() + "…"
