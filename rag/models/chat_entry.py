"""One chat call as the LLM disk cache keeps it, and the error a failed call ends in (rag.models.llm sends the calls).

Contracts:
- ``encode_entry(text, prompt_tokens, completion_tokens, logprobs) -> bytes``: JSON ``{"text", "prompt_tokens",
  "completion_tokens"[, "logprobs"]}`` (``logprobs`` only when the call asked for them).
- ``check_entry(value)``: raises ValueError naming what is wrong with an entry read back (the cache drops the row
  and the call is sent again); ``decode_entry(value) -> (text, Usage, logprobs | None)``: a hit's usage says
  ``cached`` and costs nothing.
- ``final_error(e, where, server, llm_cfg, sent) -> Exception``: what a call that will not be retried raises:
  ``ModelUnavailable`` for a refused API key or an unreachable server (with the local server's log tail),
  ``ModelError`` with ``status_code`` for any other HTTP status, else ``e`` itself.
"""
from __future__ import annotations

import json
from typing import Any

from .base import ModelError, ModelUnavailable, Usage


def encode_entry(text: str, prompt_tokens: int, completion_tokens: int, logprobs: list | None) -> bytes:
    entry: dict[str, Any] = {"text": text, "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
    if logprobs is not None:
        entry["logprobs"] = logprobs
    return json.dumps(entry).encode()


def check_entry(value: bytes) -> None:
    """See module docstring."""
    d = json.loads(value)  # JSONDecodeError and UnicodeDecodeError are ValueErrors
    if not isinstance(d, dict) or not isinstance(d.get("text"), str):
        raise ValueError("no text")
    if not all(isinstance(d.get(k), int) and d[k] >= 0 for k in ("prompt_tokens", "completion_tokens")):
        raise ValueError("no token counts")
    if not isinstance(d.get("logprobs", []), (list, type(None))):
        raise ValueError("logprobs is not a list")


def decode_entry(value: bytes) -> tuple[str, Usage, list | None]:
    """See module docstring (``value`` has passed :func:`check_entry`)."""
    d = json.loads(value)
    return d["text"], Usage(d["prompt_tokens"], d["completion_tokens"], 0, True, 0.0, 0.0), d.get("logprobs")


def final_error(e: Exception, where: str, server, llm_cfg, sent: int) -> Exception:
    """See module docstring; ``where`` names the backend and model, ``server`` is the local one or None."""
    import openai

    if isinstance(e, openai.AuthenticationError):
        return ModelUnavailable(f"{where}: the API key in ${llm_cfg.api_key_env} was refused (401)")
    if isinstance(e, (openai.APITimeoutError, openai.APIConnectionError)):
        url = server.base_url if server else (llm_cfg.base_url or "api.openai.com")
        tail = ("\nserver log:\n" + server.log_tail()) if server else ""
        return ModelUnavailable(f"{where}: server at {url} unreachable after {sent} attempts ({e}); "
                                f"is it running?{tail}")
    if isinstance(e, openai.APIStatusError):
        err = ModelError(f"{where}: HTTP {e.status_code} after {sent} attempts: {str(e)[:1000]}")
        err.status_code = e.status_code  # type: ignore[attr-defined]
        return err
    return e
