"""A table row as a number question reads it (stage 06, :func:`rag.answer.numbers.figures.build_candidates`): what
the question asks, how well a row's label names the metric, and the scale of the row's cell.

Contracts:
- ``question_asks(question, company, extra_aliases) -> Asks``: the metric's words (:mod:`rag.answer.numbers.figure_check`,
  :mod:`rag.answer.numbers.labels`), a programme's or product's name, and the unit rules (currency, percent, per
  share, a count, a total), read once per question.
- ``label_fit(asks, label, section, header_fit, context) -> (score, label) | None``: the label's score (a bare total
  row under a header naming the metric takes the header's; a qualifier row is joined to its section); None when the
  question names a code the row does not. ``label_refused(cfg, asks, label, score, any_label)``: below
  ``answer.figure_min_label_score`` (or ``NON_ALIAS_MIN`` for a metric with aliases), or no per-share / a money
  label where a per-share figure / a count is asked.
- ``cell_scale(asks, label, col_head, unit, cur, is_pct) -> (factor, unit shown, score lost)``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from . import figure_check
from ..common import printed as nums
from ...clean import units
from ...core.config import RunConfig
from .labels import MONEY_LABEL, PER_SHARE_LABEL, _norm_label, aliases_for, asks_total, distinct, label_qualifiers
from .labels import label_score, named_row

NO_SCALE_PENALTY = 0.1  # an amount whose table states no scale (often a missed "in thousands")
NON_ALIAS_MIN = 0.9  # least score of a label outside LABEL_ALIASES when the metric has aliases
_TOTAL_ROW = re.compile(r"(?:grand |group |consolidated )?total")  # a bare total row of a breakdown
# Row labels that only qualify their section ("Basic and diluted" under "Loss per share:"); any other row
# under a section is a component of it ("Net income" under "Cash flows from operating activities:").
_QUALIFIER = re.compile(r"(?:(?:basic|diluted|and|total|continuing|discontinued|operations|operating|activities|"
                        r"group|consolidated)\s?)+")



@dataclass
class Asks:
    """What a number question asks, read once: the metric's words (``terms``, ``aliases``, ``quals``, ``acr``,
    ``named`` / ``codes``: a programme's or product's name) and the unit rules (currency, percent, per share,
    a count, a total)."""
    terms: set[str]
    aliases: tuple[str, ...]
    quals: frozenset[str]
    acr: dict[str, str]
    named: list[str]
    codes: list[str]
    currency: str | None
    pct: bool
    per_share: bool
    counting: bool
    total: bool


def question_asks(question: str, company: str, extra_aliases: tuple[str, ...]) -> Asks:
    named = [w for w in figure_check.named_words(question, company) if distinct(w)]
    return Asks(terms=figure_check.metric_terms(question, company),
                 aliases=aliases_for(question, company) + tuple(extra_aliases),
                 quals=label_qualifiers(question, company), acr=figure_check.acronyms(question, company),
                 named=named, codes=[w for w in named if any(c.isdigit() for c in w)],
                 currency=nums.question_currency(question), pct=nums.asks_percent(question),
                 per_share=nums.asks_per_share(question),
                 counting="number of" in question.lower() or bool(re.search(r"\b(?:employees|headcount|staff)\b",
                                                                            question, re.I)),
                 total=asks_total(question, company))


def label_fit(asks: Asks, label: str, section: str, header_fit: float, context: str) -> tuple[float, str] | None:
    """How well a row's label names the metric, and the label shown (a qualifier row joined to its section);
    None when the question names a code ("VP-102") the row does not."""
    score = label_score(figure_check.expand_acronyms(label, asks.acr), asks.terms, asks.aliases, asks.quals)
    if header_fit and _TOTAL_ROW.fullmatch(_norm_label(label)):
        score = max(score, header_fit)  # "| Total | 77,642 |" under "Number of employees (Persons)"
    if asks.named:  # a programme's or product's row: "| CDX-585 | 9,793 |" under "amount ... each research program"
        fits, names = named_row(label, asks.named, asks.terms, context)
        if asks.codes and not names:
            return None  # the question names a code: the company's total is not its figure
        score = max(score, fits)
    if section and _QUALIFIER.fullmatch(_norm_label(label)):  # "Basic and diluted" under "Loss per share:"
        joined = f"{section}: {label}"
        if (js := label_score(joined, asks.terms, asks.aliases, asks.quals)) > score:
            score, label = js, joined
    return score, label


def label_refused(cfg: RunConfig, asks: Asks, label: str, score: float, any_label: bool) -> bool:
    """The row's label does not name the metric closely enough, or names no per-share figure / money where a
    per-share figure / a count is asked."""
    if not any_label and (score < cfg.answer.figure_min_label_score or (asks.aliases and score < NON_ALIAS_MIN)):
        return True  # a metric with report wordings (LABEL_ALIASES): other labels must name it closely
    if asks.per_share and not PER_SHARE_LABEL.search(label):
        return True  # "Purchase of Ordinary shares" is no per-share figure
    return bool(asks.counting and MONEY_LABEL.search(label))  # "Employer contributions": money, a count is asked


def cell_scale(asks: Asks, label: str, col_head: str, unit: nums.Scale, cur: str | None,
                is_pct: bool) -> tuple[int, str, float]:
    """``(factor, unit shown, score lost)`` of a cell: never scaled for a percentage or per-share figure; a
    count unscaled unless its column or label states a scale; else the column header's scale, the row label's,
    the grid's unit line (its "except per share" honoured), and ``NO_SCALE_PENALTY`` when none states one."""
    lab_scale = units.find_scale(label)
    col_scale = units.find_scale(col_head)
    if asks.pct or asks.per_share or is_pct:
        return 1, "%" if is_pct else f"{cur or ''} per share".strip(), 0.0
    if asks.counting and not (col_scale or lab_scale):
        return 1, "count", 0.0
    exempt = "per share" in label.lower() and "per share" in unit.exceptions
    stated = col_scale[0] if col_scale else lab_scale[0] if lab_scale else unit.factor
    factor = 1 if exempt else (stated or 1)
    scale_name = units.SCALE_NAMES.get(factor, str(factor))
    if not (stated or exempt):
        return factor, f"{cur}, scale not stated" if cur else "scale not stated", NO_SCALE_PENALTY
    return factor, f"{scale_name} of {cur}" if cur else scale_name, 0.0
