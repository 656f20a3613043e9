"""Question text helpers shared by stages 05 (search queries) and 06 (the metric check).

Contract:
- ``search_text(question_text, company="") -> str``: answer-format boilerplate of ERC questions ("If
  data is not available, return 'N/A'", "according to the annual report"…) and the company's name
  removed; never empty (the question itself when nothing is left).
"""
from __future__ import annotations

import re

# Answer-format boilerplate of ERC questions: it says how to answer, not what to look for.
_BOILERPLATE = [re.compile(p, re.I) for p in (
    r"\bif (?:data|there|the company|no )[^?!]*?(?:[.?!](?=\s|$)|$)",
    r"\(within the last period or at the end of the last period\)",
    r"\b(?:according to|listed in|mentioned in|in) (?:the|its|their) annual reports?\b",
    r"\b(?:according to|listed in|in) annual reports?\b",
    r"\bat the end of the period(?: listed)?\b",
    r"\bwithin the last period\b",
)]


def search_text(question_text: str, company: str = "") -> str:
    """The question as a search query: boilerplate and the company's name removed (see config)."""
    t = question_text
    for rx in _BOILERPLATE:
        t = rx.sub(" ", t)
    if company:
        for v in sorted({company, re.sub(r"^the\s+", "", company, flags=re.I)}, key=len, reverse=True):
            t = re.sub(r"(?<!\w)" + r"\s*".join(map(re.escape, v.split())) + r"(?:'s)?(?!\w)", " ", t, flags=re.I)
    t = re.sub(r"\s+([,.?!])", r"\1", re.sub(r"\s+", " ", t)).strip(" ,")
    return t or question_text
