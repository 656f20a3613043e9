"""P(true) of a boolean question read from the model's token log-probabilities (stage 06, issue 28 item 5).

Contract:
- ``p_true_call(llm, cfg, question, context) -> dict``: one call with the boolean prompt's own messages
  (:func:`rag.answer.common.prompts.build_messages`, so a local server reuses the prompt it has just evaluated for
  the chain-of-thought call) and the grammar ``{"final_answer": boolean}``, asking for the top
  ``answer.boolean_top_logprobs`` alternatives per token. Returns ``p_true`` (float in [0, 1], or None when
  the backend returns no log-probabilities or the call failed), ``p_raw`` (the reply), ``p_usage`` and
  ``p_seconds``. Never raises for a model error: the chain-of-thought answer stands then.
- ``p_decides(cfg, p)``: whether P decides (so a part whose reasoning call failed or was skipped still has
  an answer); ``decide(cfg, p, cot_value) -> (value, how)``: with ``answer.boolean_decision == "logprob"`` and a ``p``:
  ``p >= answer.boolean_min_p_true`` ("logprob"); with ``"both"`` and a ``p``: the chain-of-thought value and
  ``p >= answer.boolean_min_p_true`` ("both"); else the chain-of-thought value ("cot").
"""
from __future__ import annotations

import time
from typing import Any

from ...core.config import RunConfig
from ...models.logprobs import field_p_true
from ..common.calls import BooleanDecision, prompts_dir
from ..common.prompts import build_messages


def p_true_call(llm: Any, cfg: RunConfig, question: str, context: str) -> dict[str, Any]:
    """P(true) from one decision call (module contract)."""
    from ...models.base import ModelError, StructuredOutputError

    messages = build_messages("boolean", context, question, prompts_dir(cfg))
    t0 = time.perf_counter()
    try:
        res = llm.complete(messages, schema=BooleanDecision, logprobs=True,
                           top_logprobs=cfg.answer.boolean_top_logprobs,
                           max_tokens=cfg.answer.boolean_decision_max_tokens)
    except (ModelError, StructuredOutputError) as e:
        return {"p_true": None, "p_raw": getattr(e, "raw", ""), "p_usage": {}, "p_error": str(e)[:300],
                "p_seconds": round(time.perf_counter() - t0, 3)}
    p = field_p_true(res.logprobs, "final_answer")
    return {"p_true": None if p is None else round(p, 6), "p_raw": res.raw, "p_usage": res.usage.as_dict(),
            "p_seconds": round(time.perf_counter() - t0, 3)}


def p_decides(cfg: RunConfig, p: float | None) -> bool:
    """Whether P(true) decides this part: ``answer.boolean_decision == "logprob"`` and a P was read."""
    return cfg.answer.boolean_decision == "logprob" and p is not None


def decide(cfg: RunConfig, p: float | None, cot_value: bool) -> tuple[bool, str]:
    """The boolean answer of one part and what decided it (module contract)."""
    if p_decides(cfg, p):
        return p >= cfg.answer.boolean_min_p_true, "logprob"
    if cfg.answer.boolean_decision == "both" and p is not None:
        return bool(cot_value) and p >= cfg.answer.boolean_min_p_true, "both"
    return bool(cot_value), "cot"
