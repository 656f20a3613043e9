"""Search queries of stage 05: the question as search text, and its optional LLM expansion.

Contract:
- ``search_text(question_text, company="") -> str``: answer-format boilerplate of ERC questions ("If
  data is not available, return 'N/A'", "according to the annual report"…) and the company's name
  removed; never empty (the question itself when nothing is left).
- ``expand_query(cfg, question_text, llm=None) -> (QueryExpansion, Usage)``: at most
  ``retrieve.expansion_keywords`` keywords and ``retrieve.expansion_paraphrases`` paraphrases from
  ``rag.models.get_llm(cfg)``, cached per question and llm+retrieve config until ``clear_expansions()``
  (``Usage(cached=True)`` for a cached one).
"""
from __future__ import annotations

import re
import threading

from pydantic import BaseModel, Field

from .config import RunConfig
from .models.base import Usage

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


# ---- query expansion -----------------------------------------------------------------------------
class QueryExpansion(BaseModel):
    """LLM output schema for query expansion."""

    keywords: list[str] = Field(default_factory=list)
    paraphrases: list[str] = Field(default_factory=list)


# One process may retrieve the same question many times (benchmarks, ablations): expand it once.
_LOCK = threading.Lock()
_EXPANSIONS: dict[tuple, QueryExpansion] = {}


def clear_expansions() -> None:
    """Forget cached expansions."""
    with _LOCK:
        _EXPANSIONS.clear()


EXPANSION_SYSTEM = ("You write search queries for an annual report. Return JSON with 'keywords' (financial "
                    "terms and synonyms a matching page would contain) and 'paraphrases' (the question "
                    "reworded).")


def expand_query(cfg: RunConfig, question_text: str, llm=None) -> tuple[QueryExpansion, Usage]:
    """Keywords + paraphrases for ``question_text`` (cached per question and llm config)."""
    key = (question_text, cfg.section_hash("llm", "retrieve"))
    with _LOCK:
        if key in _EXPANSIONS:
            return _EXPANSIONS[key], Usage(cached=True)
    if llm is None:
        from .models import get_llm

        llm = get_llm(cfg)
    r = cfg.retrieve
    res = llm.complete([{"role": "system", "content": EXPANSION_SYSTEM},
                        {"role": "user", "content": f"Question: {question_text}\nAt most {r.expansion_keywords} "
                                                    f"keywords and {r.expansion_paraphrases} paraphrases."}],
                       schema=QueryExpansion)
    exp = QueryExpansion(keywords=res.value.keywords[:r.expansion_keywords],
                         paraphrases=res.value.paraphrases[:r.expansion_paraphrases])
    with _LOCK:
        _EXPANSIONS[key] = exp
    return exp, res.usage
