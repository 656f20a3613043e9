"""The filing's own sentences quoted as an open answer (stage 06: :mod:`.drivers`, :mod:`.events`).

Contracts:
- ``sentence_key(text) -> str``: a sentence lower-cased, its spaces collapsed: the same sentence printed twice
  (a page repeated, a summary restated) is quoted once.
- ``quoted(sentences, cited=()) -> (value, pages)``: the sentences joined, each followed by its page ("... (page
  54)", 1-based as :class:`rag.answer.common.context.CtxPage` numbers them), and the pages to cite: ``cited``
  first, then each sentence's page once, in order.
"""
from __future__ import annotations

from collections.abc import Sequence

from ..common.context import CtxPage


def sentence_key(text: str) -> str:
    """See module docstring."""
    return " ".join(text.lower().split())


def quoted(sentences: Sequence[tuple[str, CtxPage]], cited: Sequence[CtxPage] = ()) -> tuple[str, list[CtxPage]]:
    """See module docstring."""
    pages = list(cited)
    for _, page in sentences:
        if page not in pages:
            pages.append(page)
    return " ".join(f"{s} (page {p.page})" for s, p in sentences), pages
