"""Question text helpers shared by stages 05 (search queries) and 06 (the metric check).

Contract:
- ``search_text(question_text, company="") -> str``: answer-format boilerplate of ERC questions ("If
  data is not available, return 'N/A'", "according to the annual report"…) and the company's name
  removed; never empty (the question itself when nothing is left).
- ``without_company(text, company, possessive=False) -> str``: the company's name (any case) blanked out, with
  ``possessive`` its "'s" / "’s" / "'" too: the question's own words the answerers in code read around it.
- ``asking_part(question_text) -> str``: the part that asks: in the text before the first "?", from its last
  "what is" / "what was" on; the question unchanged when it has no such clause ("Which of the companies ...",
  "How much ..."). FinanceBench wraps its question in instructions ("Assume that you are a public equities
  analyst. Answer the following question by ... the balance sheet: what is the year end FY2022 net PPNE for
  General Mills? Answer in USD billions."), whose words name no metric; ERC's templates are one sentence asking.
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


def without_company(text: str, company: str, possessive: bool = False) -> str:
    """See module docstring."""
    if not company.strip():
        return text
    return re.sub(re.escape(company.strip()) + (r"(?:'s|’s|')?" if possessive else ""), " ", text, flags=re.I)


_WHAT_IS = re.compile(r"\bwhat\s+(?:is|was|are|were)\s+(?P<m>[^?]+)", re.I)


def asking_part(question_text: str) -> str:
    """See module docstring."""
    # the last: "... the balance sheet: what is the year end FY2022 net PPNE"
    asks = list(_WHAT_IS.finditer(question_text.split("?", 1)[0]))
    return asks[-1].group("m").strip() if asks else question_text
