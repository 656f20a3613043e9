"""One yes/no check put to the reader with a one-shot prompt file, and its P(true) from the log-probabilities
(stage 06): the shape shared by one line against a metric (rag.answer.numbers.line_check), a page against a question
(rag.answer.common.page_check) and a yes/no page's note against its question (rag.answer.booleans.claim_check).

Contracts:
- ``YesNoPrompt(file, body)``: a prompt file under ``answer.prompts_dir`` with the sections ``system``, ``<body>``
  (the worked example's text), ``question`` and ``answer``; ``.parts(pdir)`` reads them (errors name the file),
  ``.version(pdir, *code)`` is their hash with any code constant beside them (06's keys),
  ``.messages(pdir, text, question, header)``: system, the worked example, then ``HEADER:\\n<text>`` and the question.
- ``yes_no_p(llm, messages) -> (p, usage, error)``: one call with the grammar ``{"final_answer": boolean}``
  (:class:`rag.answer.common.calls.BooleanDecision`), asking for :data:`TOP_LOGPROBS` alternatives per token;
  ``p`` is P(true) of the value token (:func:`rag.models.logprobs.field_p_true`), or the parsed answer as 1.0 / 0.0
  where the backend gives no log-probabilities; ``(None, None, message)`` when the call failed. Never raises for
  a model error.
- ``yes_no_ps(llm, messages_list) -> (ps, usage, errors)``: :func:`yes_no_p` for each messages list in order; ``ps``
  has 0.0 where a call failed, ``usage`` is the calls' summed :class:`rag.models.Usage` (None when none answered),
  ``errors`` the ``(index, message)`` of the failed calls.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .calls import BooleanDecision, one_shot_messages, prompt_sections, sections_version

TOP_LOGPROBS = 10
MAX_TOKENS = 24  # '{"final_answer": true}' is ~7 tokens


@dataclass(frozen=True)
class YesNoPrompt:
    file: Path  # relative to the prompts folder
    body: str  # the section holding the worked example's text

    def parts(self, pdir: Path) -> dict[str, str]:
        return prompt_sections(pdir / self.file, ("system", self.body, "question", "answer"))

    def version(self, pdir: Path, *code: object) -> str:
        return sections_version(self.parts(pdir), *code)

    def messages(self, pdir: Path, text: str, question: str, header: str) -> list[dict[str, str]]:
        return one_shot_messages(self.parts(pdir), self.body, text, question, header)


def yes_no_p(llm: Any, messages: list[dict[str, str]]) -> tuple[float | None, Any, str | None]:
    """See module docstring."""
    from ...models.base import ModelError, StructuredOutputError
    from ...models.logprobs import field_p_true

    try:
        res = llm.complete(messages, schema=BooleanDecision, logprobs=True, top_logprobs=TOP_LOGPROBS,
                           max_tokens=MAX_TOKENS)
    except (ModelError, StructuredOutputError) as e:
        return None, None, str(e)[:300]
    p = field_p_true(res.logprobs, "final_answer")
    if p is None:  # no log-probabilities (some backends): the parsed answer, taken as certain
        p = 1.0 if isinstance(res.value, BooleanDecision) and res.value.final_answer else 0.0
    return round(p, 6), res.usage, None


def yes_no_ps(llm: Any, messages_list: list[list[dict[str, str]]]) -> tuple[list[float], Any, list[tuple[int, str]]]:
    """See module docstring."""
    ps: list[float] = []
    usage = None
    errors: list[tuple[int, str]] = []
    for i, messages in enumerate(messages_list):
        p, u, err = yes_no_p(llm, messages)
        if err is not None:
            errors.append((i, err))
        ps.append(0.0 if p is None else p)
        if u is not None:
            usage = u if usage is None else usage + u
    return ps, usage, errors
