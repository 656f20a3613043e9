"""The whole over its parts (stage 06, number questions asking for a total).

Contract: ``whole_first(cands, question, company) -> (cands, moved)``: when the question asks for a total
("Total revenue", "Total assets") and the best candidate is a table row, a larger value on a row that names
the metric as well (same currency, same kind of unit, the same period year named by both: an undated
column may be the prior year's) and scores within :data:`WHOLE_MARGIN` of
it goes first: a company's total is at least any part of it that a report prints under the same label
(a segment's "Total revenue", a quarter's, the parent entity's "Total assets"). ``moved`` is True when the
order changed; the moved candidate gets the note "the whole over its parts".
"""
from __future__ import annotations

from .figures import Candidate
from .labels import asks_total
from ..common.md_tables import column_year

WHOLE_MARGIN = 0.3  # score below the best within which a larger same-label value counts as the whole
FIT_TOLERANCE = 0.05  # label score below the best's that still names the metric as well ("Revenue" alias 0.95)
NOTE = "the whole over its parts"


def _year(c: Candidate) -> int | None:
    return column_year(c.period)


def _amount(c: Candidate) -> bool:
    """An amount of money or of a thing (not a percentage, a per-share figure or a bare count)."""
    return c.unit not in ("%", "count") and "per share" not in c.unit


def whole_first(cands: list[Candidate], question: str, company: str = "") -> tuple[list[Candidate], bool]:
    """See the module docstring; ``cands`` best first (as :func:`rag.answer.numbers.figures.dedupe` returns them)."""
    if not cands or not asks_total(question, company):
        return cands, False
    top = cands[0]
    if top.source != "table" or top.value <= 0 or not _amount(top) or _year(top) is None:
        return cands, False
    wholes = [c for c in cands[1:] if c.source == "table" and c.value > top.value
              and c.score >= top.score - WHOLE_MARGIN and c.fit >= top.fit - FIT_TOLERANCE
              and c.currency == top.currency and _amount(c) and _year(c) == _year(top)]
    if not wholes:
        return cands, False
    best = max(wholes, key=lambda c: (c.value, c.score))
    best.notes = [*best.notes, NOTE]
    return [best, *[c for c in cands if c is not best]], True
