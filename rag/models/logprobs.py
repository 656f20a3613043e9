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


def _value_alternatives(lps: list | None, field: str) -> list | None:
    """The alternatives of the token that starts JSON ``field``'s value (the first token after ``"field":``)."""
    if not lps:
        return None
    key = re.compile(r'"' + re.escape(field) + r'"\s*:\s*$')
    text = ""
    for token, alts in lps:
        if key.search(text):
            return alts
        text += token
    return None


def _mass(alts: list, words: list[str], norm=lambda w: w) -> list[float] | None:
    """exp(logprob) summed per word of ``words`` over the alternatives spelling it (``norm``: how a token is
    spelled), normalised over those words; None when none of them is among the alternatives."""
    mass = dict.fromkeys(words, 0.0)
    for alt, lp in alts:
        word = norm(alt.strip())
        if word in mass:
            mass[word] += math.exp(lp)
    total = sum(mass.values())
    return [mass[w] / total for w in words] if total > 0 else None


def field_p_true(lps: list | None, field: str = "final_answer") -> float | None:
    """P(true) of boolean ``field`` (module contract); None when it cannot be read."""
    alts = _value_alternatives(lps, field)
    p = _mass(alts, [_TRUE, _FALSE], str.lower) if alts is not None else None
    return None if p is None else p[0]


def field_choice_probs(lps: list | None, field: str, n: int) -> list[float] | None:
    """P(0..n) of the JSON integer ``field`` in a generated object, read at the token that starts its value:
    exp(logprob) of the alternatives spelling each digit 0..n (``n`` <= 9: one token each), normalised over
    them. None when the field is not found or no digit is among the alternatives."""
    if not 0 < n <= 9:
        return None
    alts = _value_alternatives(lps, field)
    return _mass(alts, [str(i) for i in range(n + 1)]) if alts is not None else None
