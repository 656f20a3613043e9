"""Figures an open (text) answer states, checked against what its pages print (stage 06).

Why: the 1.5B reader writes figures no page prints: a gross margin for a card issuer that reports none, the
prompt example's own percentages, a "largest liability" with an amount from nowhere (RESULTS.md, "FinanceBench:
an open answer's sentences keep only figures its pages print"). A sentence stating such a figure is dropped; the
rest of the answer stands.

Contracts:
- ``figures(text) -> set[str]``: the figures of ``text`` as digits without thousands separators ("1,824" ->
  "1824"; "FY2021" holds none: a figure starts a word).
- ``supported(sentence, sources, derived=False) -> bool``: every figure of ``sentence`` is printed in one of
  ``sources``. With ``derived`` a figure also passes when, rounded to its own decimals, it is a printed figure in
  thousands, millions or billions ("$1.8 billion" for a printed 1,824 in millions), or the difference of two
  other figures of the sentence that pass, or their change in percent ("from 24.6% to 21.6% (-3.0 points)").
- ``grounded(text, sources) -> (kept, dropped)``: the sentences of ``text`` (split as
  :func:`rag.answer.text.text_kind.text_value` splits them) whose figures are ``supported(..., derived=True)``,
  and the others, in order.
"""
from __future__ import annotations

import re
from itertools import permutations

from .text_kind import _SENTENCE_END

_FIGURE = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
_RESCALES = (1e3, 1e6, 1e9)


def figures(text: str) -> set[str]:
    """See module docstring."""
    return {m.group(0).replace(",", "").rstrip(".") for m in _FIGURE.finditer(text)}


def _decimals(f: str) -> int:
    return len(f.split(".", 1)[1]) if "." in f else 0


def _same(x: float, f: str) -> bool:
    return round(abs(x), _decimals(f)) == float(f)


def _derived(f: str, printed: set[str], passed: list[str]) -> bool:
    if any(_same(float(p) / s, f) for p in printed for s in _RESCALES if _decimals(f) or float(p) >= s):
        return True
    for a, b in permutations((float(x) for x in passed), 2):
        if _same(a - b, f) or (b and _same((a - b) / b * 100, f)):
            return True
    return False


def _printed(sources: list[str]) -> set[str]:
    return set().union(*(figures(s) for s in sources)) if sources else set()


def _supported(sentence: str, printed: set[str], derived: bool) -> bool:
    found = figures(sentence)
    passed = [f for f in found if f in printed]
    if not derived:
        return len(passed) == len(found)
    return all(f in printed or _derived(f, printed, [x for x in passed if x != f]) for f in found)


def supported(sentence: str, sources: list[str], derived: bool = False) -> bool:
    """See module docstring."""
    return _supported(sentence, _printed(sources), derived)


def grounded(text: str, sources: list[str]) -> tuple[list[str], list[str]]:
    """See module docstring (the sources' figures read once for all sentences)."""
    printed = _printed(sources)
    kept: list[str] = []
    dropped: list[str] = []
    for s in _SENTENCE_END.split(text):
        (kept if _supported(s, printed, derived=True) else dropped).append(s)
    return kept, dropped
