"""Search queries of stage 05: the question as search text, its optional LLM and lexicon expansions.

Contract:
- ``search_text``: the question cleanup, from the neutral :mod:`rag.core.questions` (06 uses it too).
- ``expand_query(cfg, question_text, llm=None) -> (QueryExpansion, Usage)``: at most
  ``retrieve.expansion_keywords`` keywords and ``retrieve.expansion_paraphrases`` paraphrases from
  ``rag.models.get_llm(cfg)``, cached per question and llm+retrieve config until ``clear_expansions()``
  (``Usage(cached=True)`` for a cached one).
- ``match_lexicon(cfg, query) -> list[Topic]``: the topics of the lexicon file ``retrieve.lexicon``
  whose ``when`` pattern matches ``query`` (file order; ``[]`` when ``retrieve.lexicon_expansion`` is
  off); ``lexicon_terms``/``lexicon_topics`` give their deduplicated terms / names. ``lexicon_hash(cfg)`` is the file's content hash (currency
  key). A missing or malformed file raises :class:`LexiconError` naming the file and the problem.
- ``build_search(cfg, question_text, company="", llm=None, usage=None) -> dict``: the search as run
  (``query``, ``dense_queries``, ``bm25_query``, ``lexicon_topics``), see its docstring.
"""
from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..core.config import RunConfig, project_path
from ..core.questions import search_text  # noqa: F401 - re-exported: rag.retrieve.query.search_text
from ..core.topic_file import read_topics
from ..models.base import Usage

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
        from ..models import get_llm

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


# ---- lexicon expansion (no model: a vocabulary file) -----------------------------------------------
class LexiconError(ValueError):
    """The lexicon file is missing or malformed; the message names the file."""


class Topic(BaseModel):
    """One lexicon topic: when any ``when`` regex matches the query, ``terms`` join the search."""

    name: str
    when: list[re.Pattern]
    terms: list[str]


def lexicon_path(cfg: RunConfig) -> Path:
    return project_path(cfg.retrieve.lexicon)


def _lexicon(cfg: RunConfig) -> tuple[tuple[Topic, ...], str]:
    """(topics, content hash) of the configured lexicon (rag.core.topic_file: read each call, parsed
    once per content, so an edit is seen at once)."""
    topics, digest = read_topics(lexicon_path(cfg), "retrieve.lexicon", ("when", "terms"), ("when",), LexiconError)
    return tuple(Topic(**t) for t in topics), digest


def lexicon_hash(cfg: RunConfig) -> str:
    """Content hash of the lexicon file ("" when lexicon expansion is off)."""
    return _lexicon(cfg)[1] if cfg.retrieve.lexicon_expansion else ""


def match_lexicon(cfg: RunConfig, query: str) -> list[Topic]:
    """The lexicon topics whose ``when`` matches ``query`` (file order; [] when the lexicon is off)."""
    if not cfg.retrieve.lexicon_expansion:
        return []
    return [t for t in _lexicon(cfg)[0] if any(w.search(query) for w in t.when)]


def lexicon_topics(cfg: RunConfig, query: str) -> list[str]:
    """Names of the lexicon topics whose ``when`` matches ``query`` (file order)."""
    return [t.name for t in match_lexicon(cfg, query)]


def topic_terms(topics: list[Topic]) -> list[str]:
    """The topics' terms, deduplicated, in order."""
    return list(dict.fromkeys(x for t in topics for x in t.terms))


def lexicon_terms(cfg: RunConfig, query: str) -> list[str]:
    """Report vocabulary for ``query``: terms of every matching topic, deduplicated, file order."""
    return topic_terms(match_lexicon(cfg, query))


# ---- the search as run ---------------------------------------------------------------------------
def build_search(cfg: RunConfig, question_text: str, company: str = "", llm=None,
                 usage: list[Usage] | None = None) -> dict[str, Any]:
    """The queries stage 05 runs for one question in one report.

    ``query``: the question, cleaned (:func:`search_text`) when ``retrieve.query_cleanup``;
    ``dense_queries``: the query, the LLM's paraphrases (``query_expansion``) and query + lexicon terms
    (``lexicon_dense``); ``bm25_query``: the query with expansion keywords/paraphrases and lexicon terms;
    ``lexicon_topics``: names of the matching topics. Expansion usage is appended to ``usage``.
    """
    query = search_text(question_text, company) if cfg.retrieve.query_cleanup else question_text
    queries, bm25_query = [query], query
    if cfg.retrieve.query_expansion:
        exp, u = expand_query(cfg, question_text, llm)
        if usage is not None:
            usage.append(u)
        queries += exp.paraphrases
        bm25_query = " ".join([query, *exp.keywords, *exp.paraphrases])
    topics = match_lexicon(cfg, query)
    terms = topic_terms(topics)
    if terms:
        bm25_query = " ".join([bm25_query, *terms])
        if cfg.retrieve.lexicon_dense:
            queries.append(" ".join([query, *terms]))
    return {"query": query, "dense_queries": queries, "bm25_query": bm25_query,
            "lexicon_topics": [t.name for t in topics]}
