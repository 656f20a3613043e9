"""One candidate figure of a number question (stage 06), the list the model picks from, and one candidate per value.

Contracts:
- :class:`Candidate`: a figure read from a table row (``source="table"``, :mod:`rag.answer.numbers.figures`) or a
  sentence (``"prose"``, :mod:`rag.answer.numbers.prose`): label, period, printed cell, final value (sign and scale
  applied), unit shown, currency, page, score; ``row()`` is its debug-record form.
- ``format_candidates(cands) -> str``: one numbered line per candidate (what the pick prompt lists).
- ``dedupe(found) -> [Candidate]``: one candidate per value, best score first (ties: better page rank); other
  rows printing the same value count as support (``SUPPORT_BONUS`` each, at most ``SUPPORT_MAX``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

SUPPORT_BONUS = 0.05  # per other table printing the same value for a matching row (capped below)
SUPPORT_MAX = 2


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
