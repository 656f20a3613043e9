"""Token log-probabilities of a chat completion, and the probability of a JSON boolean field read from them.

Contract:
- ``token_logprobs(resp) -> list | None``: an OpenAI-protocol chat completion's ``choices[0].logprobs`` as
  ``[(token, [(alternative, logprob), ...]), ...]`` (plain lists, JSON-cacheable); None when absent.
- ``field_choice_probs(lps, field, n)``: P(0..n) of a one-digit JSON integer ``field`` (a numbered choice).
- ``field_p_true(lps, field) -> float | None``: P(true) of the JSON boolean ``field`` in a generated object,
  read at the token that starts its value: exp(logprob) summed over the alternatives spelling ``true``
  against those spelling ``false`` ("true", " true", "True"...), normalised over the two. A grammar that
  allows only true/false makes the greedy answer exactly ``p >= 0.5`` (llama.cpp reports the model's own
  distribution before the grammar, so other tokens may lead the list: they are ignored). None when the field
  is not found or neither spelling is among the alternatives.

Log-probabilities are natural logs (OpenAI protocol). Decisions made from ``p`` move with a CPU build's
rounding only where p is near the threshold, unlike a sampled chain of reasoning (issue 28 item 5).
"""
from __future__ import annotations

import math
import re
from typing import Any

_TRUE, _FALSE = "true", "false"


def token_logprobs(resp: Any) -> list | None:
    """``[(token, [(alternative, logprob), ...]), ...]`` of the first choice, or None."""
    try:
        content = resp.choices[0].logprobs.content
    except (AttributeError, IndexError, TypeError):
        return None
    if not content:
        return None
    return [[t.token, [[a.token, float(a.logprob)] for a in (t.top_logprobs or [])] or [[t.token, float(t.logprob)]]]
            for t in content]


def field_p_true(lps: list | None, field: str = "final_answer") -> float | None:
    """P(true) of boolean ``field`` (module contract); None when it cannot be read."""
    if not lps:
        return None
    key = re.compile(r'"' + re.escape(field) + r'"\s*:\s*$')
    text = ""
    for token, alts in lps:
        if key.search(text):
            mass = {_TRUE: 0.0, _FALSE: 0.0}
            for alt, lp in alts:
                word = alt.strip().lower()
                if word in mass:
                    mass[word] += math.exp(lp)
            total = mass[_TRUE] + mass[_FALSE]
            return mass[_TRUE] / total if total > 0 else None
        text += token
    return None


def field_choice_probs(lps: list | None, field: str, n: int) -> list[float] | None:
    """P(0..n) of the JSON integer ``field`` in a generated object, read at the token that starts its value:
    exp(logprob) of the alternatives spelling each digit 0..n (``n`` <= 9: one token each), normalised over
    them. None when the field is not found or no digit is among the alternatives."""
    if not lps or not 0 < n <= 9:
        return None
    key = re.compile(r'"' + re.escape(field) + r'"\s*:\s*$')
    text = ""
    for token, alts in lps:
        if key.search(text):
            mass = [0.0] * (n + 1)
            for alt, lp in alts:
                word = alt.strip()
                if word.isdigit() and len(word) == 1 and int(word) <= n:
                    mass[int(word)] += math.exp(lp)
            total = sum(mass)
            return [m / total for m in mass] if total > 0 else None
        text += token
    return None
