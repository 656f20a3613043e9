"""A yes/no page's "true" checked against its own reasoning (stage 06, ``answer.boolean_claim_check``): the reader's
note on the page (its step-by-step analysis and summary) is put back to it with the question, as a yes/no of its
own ("does this note say the asked event took place?"); P(true) is read from the log-probabilities, as for yes/no
pages, and a "true" stands only at ``answer.boolean_claim_min_p`` or above.

Why: on the catalogue's tuning half the False-gold questions answered True rested on notes such as "Page 1 shows
the signatures of the executive team" (executive changes), "the balance sheet for 2020 and 2021" (capital
structure) or "litigation ... has been common in the biopharmaceutical industry" (ongoing litigation): the page
was read, and the reader's own summary of it does not say the event happened. A short note is the question the
1.5B judges best (as one line against a metric: rag.answer.numbers.line_check).

Contracts:
- ``claim_version(pdir) -> str``: the prompt's version (``prompts/checks/claim.txt``), for 06's keys.
- ``claim_note(parsed) -> str``: the note checked: the reasoning call's ``step_by_step_analysis`` and
  ``reasoning_summary`` joined ("" when it has neither; :func:`rag.answer.common.prompts.reasoning_text`).
- ``claim_call(llm, cfg, question, parsed) -> dict``: ``claim_p`` (float in [0, 1]; the parsed answer as 1.0 / 0.0
  where the backend gives no log-probabilities; None when there is no note or the call failed), ``claim_note``,
  ``claim_usage``, ``claim_seconds`` and ``claim_error`` (when it failed). Never raises for a model error: the page's
  answer stands then.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ...core.config import RunConfig
from ..common.calls import prompts_dir
from ..common.prompts import reasoning_text
from ..common.yes_no_check import YesNoPrompt, yes_no_p

PROMPT = YesNoPrompt(Path("checks") / "claim.txt", "note")


def claim_version(pdir: Path) -> str:
    return PROMPT.version(pdir)


claim_note = reasoning_text  # the note checked (module docstring)


def claim_call(llm: Any, cfg: RunConfig, question: str, parsed: dict[str, Any] | None) -> dict[str, Any]:
    """See module docstring."""
    note = claim_note(parsed)
    if not note:
        return {"claim_p": None, "claim_note": "", "claim_usage": {}, "claim_seconds": 0.0}
    t0 = time.perf_counter()
    p, usage, err = yes_no_p(llm, PROMPT.messages(prompts_dir(cfg), note, question, "NOTE"))
    out = {"claim_p": p, "claim_note": note, "claim_usage": usage.as_dict() if usage else {},
           "claim_seconds": round(time.perf_counter() - t0, 3)}
    if err is not None:
        out["claim_error"] = err
    return out
