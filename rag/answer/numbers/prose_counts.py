"""The counted thing named by the noun after a figure (stage 06, sentence candidates of count questions).

"a fleet of 19 Suezmax tankers" answers "Fleet size (vessels)" and "the Bank operated 16 full-service branch
offices" answers "Branch count", though the sentence never says "vessels" or "count": the noun after the
figure is one of the asked count topic's nouns (``retrieve.counts``, the file stage 05 uses for count pages).

Contracts:
- ``counted_noun(cfg, question, company, terms) -> (pattern, rest) | None``: ``pattern`` matches the start
  of the text after a figure when such a noun follows within ``retrieve.count_gap_words`` words; ``rest``:
  the metric ``terms`` the noun does not stand for (it stands for the words that asked the topic and
  :data:`COUNT_WORDS`). None when the question asks no count topic or the file cannot be read (stage 05
  reports that).
- ``noun_fit(fit, counted, after, fit_of) -> fit``: with the noun after the figure, the sentence names the
  metric when its window names every term of ``rest`` (``fit_of(rest)``; ``(1.0, 0)`` when none is left):
  the better of that and ``fit``. Without the noun, or when the window misses one: ``fit`` unchanged. A fit
  is (score, words between the figure and the metric).
"""
from __future__ import annotations

import re
from typing import Callable

from . import figure_check as metric
from ...core.config import RunConfig
from ...core.questions import search_text

COUNT_WORDS = ("count", "size", "number")  # metric words a counted noun stands for ("Branch count", "Fleet size")

Fit = tuple[float, int]


def counted_noun(cfg: RunConfig, question: str, company: str, terms: set[str]) -> tuple[re.Pattern, set[str]] | None:
    from ...retrieve.counts import counted_noun as nouns_after

    try:
        got = nouns_after(cfg, search_text(question, company))
    except Exception:  # noqa: BLE001 - a missing counts file only removes this help (stage 05 reports it)
        return None
    if got is None:
        return None
    rx, said = got
    return rx, terms - metric._stems(" ".join([*said, *COUNT_WORDS]))


def noun_fit(fit: Fit, counted: tuple[re.Pattern, set[str]], after: str,
             fit_of: Callable[[set[str]], Fit | None]) -> Fit:
    rx, rest = counted
    if not rx.match(after):
        return fit
    other = fit_of(rest) if rest else (1.0, 0)
    return (max(fit[0], other[0]), min(fit[1], other[1])) if other else fit
