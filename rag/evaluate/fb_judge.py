"""How FinanceBench judges one answer (:mod:`rag.evaluate.financebench` scores a run with it and re-exports it).

Contract:
- ``judge_number(value, gold, unit, decimals) -> bool``: the answer in the question's unit ("USD millions":
  the pipeline's value in USD / 1e6; "percent": the value or the value x 100 when given as a share) is
  right when it rounds to the gold at the gold's decimals, or is within NUMBER_REL_TOL of it. The sign is
  not judged (ERC rule; reports print outflows as "(1,577)").
- ``judge_yes_no(value, gold) -> bool``: polarity only (``polarity``): True/False, or a text starting with yes/no.
- ``verdict(value, meta, gold, text_verdict=None) -> str``: "correct" | "incorrect" | "refusal" (N/A, no
  answer) | "unjudged" (a text answer with no judge verdict and no hand verdict).
"""
from __future__ import annotations

import math
import re
from typing import Any, Mapping

from .fb_verdicts import VERDICTS
from .scoring import is_na, to_number

NUMBER_REL_TOL = 0.01  # as ERC: within 1% of gold also counts (a rounding step the gold does not show)
_SCALE = {"USD billions": 1e9, "USD millions": 1e6, "USD thousands": 1e3}
_YES = re.compile(r"^\s*(yes|true)\b", re.I)
_NO = re.compile(r"^\s*(no|false)\b", re.I)


def _close(x: float, gold: float, decimals: int) -> bool:
    return round(abs(x), decimals) == round(abs(gold), decimals) or \
        abs(abs(x) - abs(gold)) <= NUMBER_REL_TOL * abs(gold)


def judge_number(value: Any, gold: str, unit: str, decimals: int) -> bool:
    """Whether ``value`` (the pipeline's number, in currency units or as printed) is the gold in its unit."""
    x, g = to_number(value), to_number(gold)
    if x is None or g is None or (isinstance(x, float) and math.isnan(x)):
        return False
    candidates = [x]
    if unit in _SCALE:
        candidates.append(x / _SCALE[unit])  # the pipeline's value in USD -> the asked unit
    if unit == "percent":
        candidates.append(x * 100)  # a share 0.308 for 30.8%
    return any(_close(c, g, decimals) for c in candidates)


def polarity(value: Any) -> bool | None:
    """True / False of a boolean or a text starting with yes/no/true/false; None otherwise."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        if _YES.match(value):
            return True
        if _NO.match(value):
            return False
    return None


def judge_yes_no(value: Any, gold: str) -> bool:
    p = polarity(value)
    return p is not None and p == (gold.strip().lower() == "true")


def verdict(value: Any, meta: Mapping[str, Any], gold: str, text_verdict: str | None = None) -> str:
    """correct / incorrect / refusal / unjudged for one answer (see the module contract)."""
    if value is None or is_na(value) or (isinstance(value, str) and not value.strip()):
        return "refusal"
    form = meta.get("form")
    if form == "number":
        return "correct" if judge_number(value, gold, meta.get("unit", ""), int(meta.get("decimals", 2))) else "incorrect"
    if form == "yes/no":
        return "correct" if judge_yes_no(value, gold) else "incorrect"
    return text_verdict if text_verdict in VERDICTS else "unjudged"
