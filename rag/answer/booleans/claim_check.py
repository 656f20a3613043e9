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
  ``reasoning_summary`` joined ("" when it has neither).
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
from ..common.calls import BooleanDecision, one_shot_messages, prompt_sections, prompts_dir, sections_version

CLAIM_FILE = Path("checks") / "claim.txt"
TOP_LOGPROBS = 10
MAX_TOKENS = 24  # '{"final_answer": true}' is ~7 tokens
_SECTIONS = ("system", "note", "question", "answer")


def _parts(pdir: Path) -> dict[str, str]:
    return prompt_sections(pdir / CLAIM_FILE, _SECTIONS)


def claim_version(pdir: Path) -> str:
    return sections_version(_parts(pdir))


def claim_note(parsed: dict[str, Any] | None) -> str:
    """See module docstring."""
    parsed = parsed or {}
    return " ".join(str(parsed.get(k) or "").strip() for k in ("step_by_step_analysis", "reasoning_summary")).strip()


def claim_call(llm: Any, cfg: RunConfig, question: str, parsed: dict[str, Any] | None) -> dict[str, Any]:
    """See module docstring."""
    from ...models.base import ModelError, StructuredOutputError
    from ...models.logprobs import field_p_true

    note = claim_note(parsed)
    if not note:
        return {"claim_p": None, "claim_note": "", "claim_usage": {}, "claim_seconds": 0.0}
    messages = one_shot_messages(_parts(prompts_dir(cfg)), "note", note, question, "NOTE")
    t0 = time.perf_counter()
    try:
        res = llm.complete(messages, schema=BooleanDecision, logprobs=True, top_logprobs=TOP_LOGPROBS,
                           max_tokens=MAX_TOKENS)
    except (ModelError, StructuredOutputError) as e:
        return {"claim_p": None, "claim_note": note, "claim_usage": {}, "claim_error": str(e)[:300],
                "claim_seconds": round(time.perf_counter() - t0, 3)}
    p = field_p_true(res.logprobs, "final_answer")
    if p is None:  # no log-probabilities (some backends): the parsed answer, taken as certain
        p = 1.0 if isinstance(res.value, BooleanDecision) and res.value.final_answer else 0.0
    return {"claim_p": round(p, 6), "claim_note": note, "claim_usage": res.usage.as_dict(),
            "claim_seconds": round(time.perf_counter() - t0, 3)}
