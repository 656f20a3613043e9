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
- The pick among them (the prompt, the model call, the answer) is :mod:`rag.answer.numbers.figure_pick`.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from . import figure_check
from ..common import printed as nums
from ...clean import units
from ...clean.units import stated_dollar
from ...core.config import RunConfig
from ..common.context import CtxPage
from ..common.md_tables import (  # noqa: F401 - parse_tables, column_year, report_year re-exported
    MdTable, _SIGNS, _columns, _is_amount, _is_nil, _label, _table_years, column_year, parse_tables, report_year)
from .grid_context import text_above, years_above, years_below  # noqa: F401 - years_below re-exported
from .grid_cells import _pick_cell, _table_unit, _value_slots, notes_width  # noqa: F401 - notes_width re-exported
from .labels import (  # noqa: F401 - label_score, aliases_for, LABEL_ALIASES re-exported
    ALIAS_SCORE, EXTRA_WORD_PENALTY, LABEL_ALIASES, LABEL_QUALIFIERS, MONEY_LABEL, PER_SHARE_LABEL, _norm_label,
    aliases_for, asks_total, distinct, label_qualifiers, label_score, named_row)

NA = "N/A"

# ---- scoring constants (not tuning knobs of a run: they define what a candidate is) ----------------
UNDATED_PENALTY = 0.2  # a table whose columns name no period: its first value column is only a guess
OLDER_PENALTY = 0.3  # the table's latest column is older than the report's period end
NO_SCALE_PENALTY = 0.1  # an amount whose table states no scale (often a missed "in thousands")
PARENT_ONLY_PENALTY = 0.05  # a parent-company-only ("condensed") statement: the consolidated figure is asked
NON_ALIAS_MIN = 0.9  # least score of a label outside LABEL_ALIASES when the metric has aliases
TOTAL_BONUS = 0.05  # a "Total ..." row when the question asks for a total
SUPPORT_BONUS = 0.05  # per other table printing the same value for a matching row (capped below)
SUPPORT_MAX = 2
RANK_PENALTY = 0.01  # per page rank: ties go to the better-retrieved page
TITLE_CHARS = 60  # table title shown in the pick list
LABEL_CHARS = 100
STATEMENT_BONUS = 0.05  # a row of the statement page 05 added for the question (rag.retrieve.statements)
ABOVE_LINES = 3  # text lines above a grid read as its context (what a titleless grid holds)
HEADING_WORDS = 12  # a line above a grid this short is a heading, not a paragraph

_TOTAL_ROW = re.compile(r"(?:grand |group |consolidated )?total")  # a bare total row of a breakdown
_PARENT_ONLY = re.compile(r"(?i)\b(?:condensed|parent company|parent only|company only|bank only|parent entity)\b"
                          r"|^(?:Table:\s*)?parent(?:\s+—|\s*$)")  # ASX notes: "Parent entity information", "Parent"
# Row labels that only qualify their section ("Basic and diluted" under "Loss per share:"); any other row
# under a section is a component of it ("Net income" under "Cash flows from operating activities:").
_QUALIFIER = re.compile(r"(?:(?:basic|diluted|and|total|continuing|discontinued|operations|operating|activities|"
                        r"group|consolidated)\s?)+")
# ---- candidates -------------------------------------------------------------------------------------------
@dataclass
class Candidate:
    label: str  # row label as printed
    period: str  # column header ("" when undated)
    printed: str  # the cell as printed
    value: float  # final value: sign applied, scale applied
    factor: int
    unit: str  # what the model sees: "thousands of USD", "%", "USD per share"…
    currency: str | None
    sha1: str
    page: int
    rank: int  # page rank in the context
    title: str = ""
    score: float = 0.0
    support: int = 1  # tables printing this value on a matching row
    notes: list[str] = field(default_factory=list)
    source: str = "table"  # "table" (a row of a parsed table) or "prose" (a sentence, rag.answer.numbers.prose)
    fit: float = 0.0  # a table row's label score alone (rag.answer.numbers.labels.label_score); 0 for a sentence

    def row(self) -> dict[str, Any]:
        return {"label": self.label, "period": self.period, "printed": self.printed, "value": self.value,
                "factor": self.factor, "unit": self.unit, "currency": self.currency, "sha1": self.sha1,
                "page": self.page, "rank": self.rank, "title": self.title, "score": round(self.score, 3),
                "support": self.support, "notes": self.notes, "source": self.source}


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
    :mod:`rag.answer.numbers.metric_choice`, which matches labels by meaning); the unit, period and currency rules hold."""
    a = cfg.answer
    terms = figure_check.metric_terms(question, company)
    aliases = aliases_for(question, company) + tuple(extra_aliases)
    quals = label_qualifiers(question, company)
    acr = figure_check.acronyms(question, company)
    named = [w for w in figure_check.named_words(question, company) if distinct(w)]
    codes = [w for w in named if any(c.isdigit() for c in w)]
    asked = nums.question_currency(question)
    pct, per_share = nums.asks_percent(question), nums.asks_per_share(question)
    counting = "number of" in question.lower() or bool(re.search(r"\b(?:employees|headcount|staff)\b", question, re.I))
    dollar = nums.resolve_dollar("$", report_currency) or "USD"
    wants_total = asks_total(question, company)
    tables = [(p, t) for p in pages for t in parse_tables(p.text, a.unit_lookback_lines)]
    year = report_year([t for _, t in tables])
    stated = stated_dollar([p.text for p in (context_pages or pages)])
    table_units = [_table_unit(t, dollar, stated) for _, t in tables]
    # A table without a currency: the pages' most common table currency (the clean stage resolved "$"
    # per report), else the dataset's report currency (not always the report's own: a last resort).
    seen = Counter(c for _, c in table_units if c)
    fallback = seen.most_common(1)[0][0] if seen else (report_currency.upper() if report_currency else None)
    found: list[Candidate] = []
    above: tuple[str, list[tuple[int, int]], int] | None = None  # (page key, dated columns, width) of a dated table
    for (p, t), (unit, tcur) in zip(tables, table_units):
        cur = tcur or fallback
        dated = _table_years(t)
        cols = printed_cols = _columns(t)  # ``cols`` may become the years read around the grid
        lines_above = text_above(p.text, t.order, ABOVE_LINES, joined=False)  # the text lines right above the grid
        if not dated:  # the period header the parser left above the grid
            dated = years_above(p.text, t.order, len(cols)) or years_below(p.text, t.order, len(cols))
            cols = [str(dict(dated).get(i, "")) for i in range(len(cols))] if dated else cols
        if period_year is not None:
            key = f"{p.sha1}:{p.page}"
            if dated:
                above = (key, dated, len(cols))
            elif above and above[0] == key and above[2] == len(cols):
                dated = above[1]  # the grid continues the dated one above it (its header row lost)
                cols = [str(dict(dated).get(i, "")) for i in range(len(cols))]
        if asked and cur and cur != asked:
            continue  # the table (or the report) is in another currency: never convert
        notes: list[str] = []
        penalty = 0.0
        if period_year is not None and dated:
            want = next((c for c, y in dated if y == period_year), None)
            if want is None:
                continue  # the table does not print that year
        elif period_year is not None and period_year != year:
            continue  # an undated table stands for the report's year only
        elif dated:
            latest = [c for c, y in dated if y == year] if year else []
            if not latest:
                newest = max(y for _, y in dated)
                if year and newest > year:
                    continue  # only future periods (maturities, targets)
                latest = [c for c, y in dated if y == newest]
                if year:  # no report year (only grids dated from the lines above them): the newest column
                    penalty += OLDER_PENALTY
                    notes.append("older period")
            want: int | None = latest[0]
        else:  # undated (with period_year: the report's year)
            want = None
            ty = column_year(t.title)
            if not (ty and (year is None or ty == year)):
                penalty += UNDATED_PENALTY
                notes.append("undated")
        if _parent_only(t, lines_above):
            penalty += PARENT_ONLY_PENALTY
            notes.append("parent company only")
        head = cols[want] if want is not None and want < len(cols) else ""
        if not pct and "%" in head:
            continue
        note_width = 0 if dated else notes_width(t)
        # what a titleless grid holds, for rows naming the question's programme or product (once per grid)
        context = f"{t.title} {' '.join(lines_above)}" if named else ""
        # a breakdown whose value column names the metric: its total row is the metric's figure
        header_fit = label_score(" ".join(printed_cols[1:]), terms, aliases, quals) if len(printed_cols) == 2 else 0.0
        section = ""  # the last row with a label and no value ("Loss per share:", "Revenue:")
        for r in t.rows:
            label = _label(r)
            if label and not _value_slots(r):
                section = label.rstrip(" :")
                continue
            score = label_score(figure_check.expand_acronyms(label, acr), terms, aliases, quals)
            if header_fit and _TOTAL_ROW.fullmatch(_norm_label(label)):
                score = max(score, header_fit)  # "| Total | 77,642 |" under "Number of employees (Persons)"
            if named:  # a programme's or product's row: "| CDX-585 | 9,793 |" under "amount ... each research program"
                fits, names = named_row(label, named, terms, context)
                if codes and not names:
                    continue  # the question names a code ("VP-102"): the company's total is not its figure
                score = max(score, fits)
            if section and _QUALIFIER.fullmatch(_norm_label(label)):  # "Basic and diluted" under "Loss per share:"
                joined = f"{section}: {label}"
                if (js := label_score(joined, terms, aliases, quals)) > score:
                    score, label = js, joined
            fit = score  # how well the label names the metric, before any bonus or penalty
            if not any_label and (score < a.figure_min_label_score or (aliases and score < NON_ALIAS_MIN)):
                continue  # a metric with report wordings (LABEL_ALIASES): other labels must name it closely
            if per_share and not PER_SHARE_LABEL.search(label):
                continue  # "Purchase of Ordinary shares" is no per-share figure
            if counting and MONEY_LABEL.search(label):
                continue  # "Employer contributions", "Total employment expenses": money, a count is asked
            if wants_total and _norm_label(label).startswith("total"):
                score += TOTAL_BONUS  # "Total deposits" over the "Deposits" rows of its parts
            got = _pick_cell(r, want, dated, note_width)
            if got is None or _is_nil(got[0]):
                continue
            cell, col = got
            printed = _SIGNS.sub("", cell).strip()
            parsed = nums.parse_printed(cell)
            if parsed is None:
                continue
            col_head = cols[col] if col is not None and col < len(cols) else head
            is_pct = parsed.percent or "%" in col_head or "%" in label or "percent" in label.lower()
            if pct != is_pct:
                continue  # a percentage question takes printed percentages only, and only it does
            lab_scale = units.find_scale(label)
            col_scale = units.find_scale(col_head)
            if pct or per_share or is_pct:
                factor, shown = 1, "%" if is_pct else f"{cur or ''} per share".strip()
            elif counting and not (col_scale or lab_scale):
                factor, shown = 1, "count"
            else:
                exempt = "per share" in label.lower() and "per share" in unit.exceptions
                stated = col_scale[0] if col_scale else lab_scale[0] if lab_scale else unit.factor
                factor = 1 if exempt else (stated or 1)
                scale_name = units.SCALE_NAMES.get(factor, str(factor))
                shown = f"{scale_name} of {cur}" if cur else scale_name
                if not (stated or exempt):
                    shown = f"{cur}, scale not stated" if cur else "scale not stated"
                    score -= NO_SCALE_PENALTY
            value = parsed.value * factor
            period = col_head or (str(year) if year and not notes else "")
            found.append(Candidate(label=label[:LABEL_CHARS], period=period,
                                   printed=printed, value=int(value) if float(value).is_integer() else value,
                                   factor=factor, unit=shown, currency=cur, sha1=p.sha1, page=p.page, rank=p.rank,
                                   title=_title(t.title),
                                   score=score - penalty - RANK_PENALTY * p.rank + _statement_bonus(p), fit=fit,
                                   notes=list(notes) + _where(period_year, section, t.title)))
    return dedupe(found)[: a.figure_max_candidates]


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


def format_candidates(cands: list[Candidate]) -> str:
    """One line per candidate: number, row label (a sentence's words in quotes), period, unit, printed value
    (and its table, or "[sentence]")."""
    out = []
    for i, c in enumerate(cands, 1):
        if c.source == "prose":  # the words around the figure stand for the row label
            out.append(f'{i}. "{c.label}" | {c.period or "period not stated"} | {c.unit} | {c.printed} [sentence]')
            continue
        where = f" [table: {c.title}]" if c.title else ""
        out.append(f"{i}. {c.label} | {c.period or 'period not stated'} | {c.unit or 'unit not stated'} | "
                   f"{c.printed}{where}")
    return "\n".join(out)


def dedupe(found: list[Candidate]) -> list[Candidate]:
    """One candidate per value (the best-scoring row keeps it; other tables count as support)."""
    order = sorted(found, key=lambda c: (-c.score, c.rank))
    out: list[Candidate] = []
    for c in order:
        same = next((o for o in out if math.isclose(o.value, c.value, rel_tol=1e-9, abs_tol=1e-12)), None)
        if same is None:
            out.append(c)
        else:
            same.support += 1
    for c in out:
        c.score += SUPPORT_BONUS * min(SUPPORT_MAX, c.support - 1)
    return sorted(out, key=lambda c: (-c.score, c.rank))
