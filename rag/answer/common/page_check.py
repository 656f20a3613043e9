"""Pages read in the order of the reader's own judgement (stage 06, ``answer.page_choice``): each of the first
``answer.page_choice_pages`` retrieved pages is put to the reader alone as a yes/no ("does this page state what an
answer needs?") and P(true) is read from the log-probabilities of its answer, as for yes/no pages; the pages are then
read in that order.

Why: an open (text) answer reads the two or three pages that fit one call and stops at the first answer; on
FinanceBench's tuning half the evidence page of 4 of 11 open questions was ranked 6th to 9th by retrieval, so it
was never read (RESULTS.md, "FinanceBench: open answers read in the order of the reader's P(the page answers)").
The reader's own P ranks pages by meaning, not by shared words.

Contracts:
- ``page_check_version(pdir) -> str``: the prompt's version (``prompts/checks/page_answers.txt``), for 06's keys.
- ``choose_pages(llm, cfg, question, pages, counter) -> (pages, call)``: the first ``answer.page_choice_pages`` of
  ``pages`` (rank order) sorted by P(true) descending (ties keep rank order), then the rest as they were; each
  page shown cut to ``PAGE_TOKENS`` tokens (``counter``). ``call`` is a record for 06's debug file: ``kind``
  ``"page_choice"``, ``prompt_version``, ``p_pages`` (``[{"page": 1-based page, "rank", "p_true"}]`` in the
  original order), summed ``usage``, ``error`` and ``seconds``. A page whose call fails or gives no
  log-probabilities gets its parsed answer as 1.0 / 0.0 (else 0.0). Never raises for a model error.
  Pages keep their sha1, page number and rank, so citations map back as before.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ...core.config import RunConfig
from .calls import prompts_dir
from .context import Counter, CtxPage, _truncate
from .yes_no_check import YesNoPrompt, yes_no_ps

PROMPT = YesNoPrompt(Path("checks") / "page_answers.txt", "page")
PAGE_TOKENS = 900  # a page's head: the packed answer calls hold 2-3 pages in 2,600 tokens


def page_check_version(pdir: Path) -> str:
    return PROMPT.version(pdir, PAGE_TOKENS)


def choose_pages(llm: Any, cfg: RunConfig, question: str, pages: list[CtxPage],
                 counter: Counter) -> tuple[list[CtxPage], dict[str, Any]]:
    """See module docstring."""
    pdir = prompts_dir(cfg)
    judged = pages[: cfg.answer.page_choice_pages]
    t0 = time.perf_counter()
    ps, usage, errors = yes_no_ps(llm, [PROMPT.messages(pdir, _truncate(p.text, PAGE_TOKENS, counter), question,
                                                        "PAGE") for p in judged])
    order = sorted(range(len(judged)), key=lambda i: (-ps[i], i))
    call = {"kind": "page_choice", "prompt_version": page_check_version(pdir),
            "p_pages": [{"page": p.page, "rank": p.rank, "p_true": pr} for p, pr in zip(judged, ps)],
            "usage": usage.as_dict() if usage else {},
            "error": "; ".join(f"page {judged[i].page}: {err[:200]}" for i, err in errors) or None,
            "seconds": round(time.perf_counter() - t0, 3)}
    return [judged[i] for i in order] + list(pages[len(judged):]), call
