"""What one chat-completion request carries for a model (rag.models.llm sends it): the price per token, the
reasoning models' parameters, the response format of a structured call.

Contract:
- ``is_reasoning_model(model, setting="auto")`` / ``reasoning_params(params, effort)``: o1/o3/o4/gpt-5 take
  ``max_completion_tokens`` and no sampling params.
- ``price(model, prompt_tokens, completion_tokens) -> USD`` from :data:`PRICES` (models not listed cost 0).
- ``request_format(messages, schema, mode, backend) -> (messages, response_format | None)``: a pydantic
  ``schema`` as OpenAI strict json_schema, llama.cpp's json_object + grammar schema, or schema-in-prompt.
- :data:`CLIENT_PARAMS`: params the openai client takes as keywords (the rest go in ``extra_body``).
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from .jsonx import with_schema_prompt

# USD per 1M tokens (input, output); models not listed (local ones) cost 0.
PRICES = {
    "gpt-4o-2024-08-06": (2.50, 10.00), "gpt-4o": (2.50, 10.00), "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00), "gpt-4.1-mini": (0.40, 1.60), "gpt-4.1-nano": (0.10, 0.40),
    "o3-mini": (1.10, 4.40),
}
# Chat-completion params the openai client takes as keywords; anything else goes in extra_body.
CLIENT_PARAMS = {"frequency_penalty", "logit_bias", "logprobs", "max_tokens", "max_completion_tokens", "n",
                 "presence_penalty", "reasoning_effort", "response_format", "seed", "stop", "temperature",
                 "top_logprobs", "top_p", "user"}
# Model-name prefixes of reasoning models (llm.reasoning = "auto"): o1, o3, o4-mini, gpt-5 ... ("gpt-5-chat"
# is a plain chat model and keeps temperature).
_REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")
# Sampling params reasoning models reject with HTTP 400.
_REASONING_DROP = {"temperature", "top_p", "presence_penalty", "frequency_penalty", "logprobs", "top_logprobs",
                   "logit_bias"}


def is_reasoning_model(model: str, setting: str = "auto") -> bool:
    """True when calls to ``model`` must use the reasoning-model parameters (see ``reasoning_params``)."""
    if setting != "auto":
        return setting == "on"
    name = model.rsplit("/", 1)[-1].lower()  # "openai/o3-mini" on a router
    return name.startswith(_REASONING_PREFIXES) and "chat" not in name


def reasoning_params(params: dict[str, Any], effort: str | None) -> dict[str, Any]:
    """Chat params rewritten for a reasoning model: ``max_tokens`` -> ``max_completion_tokens`` (the cap
    then covers hidden reasoning tokens too), sampling params dropped, ``reasoning_effort`` when set."""
    out = {k: v for k, v in params.items() if k not in _REASONING_DROP}
    if "max_tokens" in out:
        cap = out.pop("max_tokens")
        out.setdefault("max_completion_tokens", cap)
    if effort is not None:
        out.setdefault("reasoning_effort", effort)
    return out


def price(model: str, prompt: int, completion: int) -> float:
    """USD of one call (:data:`PRICES`; 0 for a model not listed)."""
    p_in, p_out = PRICES.get(model, (0.0, 0.0))
    return (prompt * p_in + completion * p_out) / 1e6


def _strict_schema(schema: type[BaseModel]) -> dict[str, Any]:
    try:  # OpenAI's strict mode needs additionalProperties=false and every field required
        from openai.lib._pydantic import to_strict_json_schema

        return to_strict_json_schema(schema)
    except Exception:  # noqa: BLE001 - private helper; fall back to the plain schema
        return schema.model_json_schema()


def request_format(messages: list[dict[str, str]], schema: type[BaseModel] | None, mode: str,
                   backend: str) -> tuple[list, dict | None]:
    """The messages and ``response_format`` of a call for ``schema`` in structured ``mode`` (json_schema,
    json_object or prompt; ``llm.structured`` resolved) on ``backend``."""
    if schema is None:
        return messages, None
    js = schema.model_json_schema()
    if mode == "json_schema":
        return messages, {"type": "json_schema",
                          "json_schema": {"name": schema.__name__, "schema": _strict_schema(schema), "strict": True}}
    if mode == "json_object" and backend == "llama_cpp":
        return messages, {"type": "json_object", "schema": js}  # llama.cpp turns the schema into a grammar
    if mode == "json_object":
        return with_schema_prompt(messages, js), {"type": "json_object"}
    return with_schema_prompt(messages, js), None
