"""The ``text`` answer kind: a short free-text answer (at most MAX_SENTENCES sentences) with cited pages,
through the same chain-of-thought schema as the other kinds (step_by_step_analysis, reasoning_summary,
relevant_pages, final_answer).

Contract:
- ``TextAnswer`` (defined with the other schemas in rag.answer.common.prompts): the schema the model fills.
- ``text_value(raw) -> str``: the model's answer trimmed to MAX_SENTENCES sentences (cut in code, so a
  long-winded small model still yields a short answer), "N/A" when empty or N/A.
Hooks: rag.answer.common.prompts (SCHEMAS, PROMPT_KINDS), rag.answer.interpret.part_value, the submission's kinds;
prompts/kinds|schema|examples/text.txt hold the words.
"""
from __future__ import annotations

import re

from ..common.prompts import NA, TextAnswer  # noqa: F401 - TextAnswer re-exported for callers of this module

MAX_SENTENCES = 3
# A sentence ends at . ! ? followed by space and a capital/digit; "U.S." or "2.5%" do not end one.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"(])(?<!\b[A-Z]\.\s)")


def text_value(raw: object) -> str:
    """At most MAX_SENTENCES sentences of the model's answer, or "N/A"."""
    text = " ".join(str(raw or "").split())
    if not text or text.upper().rstrip(".") in (NA, "NA"):
        return NA
    sentences = _SENTENCE_END.split(text)
    return " ".join(sentences[:MAX_SENTENCES])
