"""Numbers matched by meaning, line by line (stage 06, ``answer.metric_choice_by = "lines"``): each of the lines
closest in meaning to the asked metric is put to the reader alone, as a yes/no question, and P(true) is read from
the log-probabilities of its answer, as for yes/no pages.

Why: asked to choose one of nine numbered lines, the 1.5B answered "none" with P 0.3-0.9 even where the gold line
was shown (RESULTS.md, "Values asked in the generator's words"); a single line and a yes/no is the question it
answers best, and P(true) per line ranks the lines by the reader's own judgement.

Contracts:
- ``check_lines(llm, cfg, question, shown) -> dict``: one call per line of ``shown`` (the prompt
  ``prompts/figures/line_check.txt``: system, a worked example, then the line and the question; the answer's
  grammar ``{"final_answer": boolean}``, the yes/no pages' own
  :class:`rag.answer.common.calls.BooleanDecision`, through :mod:`rag.answer.common.yes_no_check`); returns a
  call record whose ``probs`` has the shape :func:`rag.answer.numbers.metric_choice.decide` reads:
  ``[1 - max p, p_1, ..., p_k]`` (p_i = P(true) of line i; a line whose call failed or gave no log-probabilities:
  its parsed answer as 1.0 / 0.0, else 0.0), ``p_lines``, summed ``usage`` and ``seconds``. Never raises for a model error.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ...core.config import RunConfig
from ..common.calls import prompts_dir
from ..common.yes_no_check import YesNoPrompt, yes_no_ps
from .figures import Candidate, format_candidates

PROMPT = YesNoPrompt(Path("figures") / "line_check.txt", "line")


def line_check_version(pdir: Path) -> str:
    return PROMPT.version(pdir)


def line_messages(question: str, c: Candidate, pdir: Path) -> list[dict[str, str]]:
    """The one-line prompt: the line without its list number, then the question."""
    line = format_candidates([c]).split(". ", 1)[1]
    return PROMPT.messages(pdir, line, question, "LINE")


def check_lines(llm: Any, cfg: RunConfig, question: str, shown: list[Candidate]) -> dict[str, Any]:
    """See module docstring."""
    pdir = prompts_dir(cfg)
    t0 = time.perf_counter()
    asked = [line_messages(question, c, pdir) for c in shown]
    ps, usage, errors = yes_no_ps(llm, asked)  # usage: rag.models.Usage, summed over the lines' calls
    chars = sum(len(m["content"]) for messages in asked for m in messages)
    last = asked[-1] if asked else []
    probs = [round(1 - max(ps), 6) if ps else 1.0, *ps]
    return {"kind": "metric_lines", "prompt_version": line_check_version(pdir), "messages_chars": chars,
            "raw": "", "parsed": None, "usage": usage.as_dict() if usage else {}, "model": "",
            "error": "; ".join(err[:200] for _, err in errors) or None, "probs": probs, "p_lines": ps,
            "seconds": round(time.perf_counter() - t0, 3), "messages": last}
