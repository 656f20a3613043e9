"""Tolerant JSON extraction from model text, and the prompts that carry a schema.

Contract:
- ``extract_json(text)`` returns the first JSON object/array found in ``text`` and tolerates what small
  models emit around it: code fences, prose before/after, ``<think>`` blocks, raw control characters inside
  strings, trailing commas, Python literals (True/False/None) outside strings; an object that is still
  invalid is read by ``json_repair`` as a whole (bare keys, single quotes), never from a bracket inside
  it; last, ``json_repair`` from the first brace (output cut at max_tokens). Raises ``ValueError`` with
  the reason when no JSON value can be recovered (a repair call comes next).
- ``parse_structured(text, schema)`` = ``schema.model_validate(extract_json(text))``; raises ``ValueError``
  (pydantic's ``ValidationError`` is one) when it does not fit.
- ``schema_instruction(schema_json)`` / ``repair_messages(...)``: the schema-in-prompt text and the
  reparser prompt (one repair call with the schema and the bad output, as the ERC winner did).
"""
from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.S)
_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}


def _scan(text: str, start: int = 0):
    """Yield ``(index, char, where)`` for ``text[start:]``, where = "out" (outside JSON strings), "open"
    (a string's opening quote) or "in" (inside a string, closing quote included); escapes respected.
    The one string-state machine of this module: bracket matching and literal fixes must agree on it."""
    in_str, esc = False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_str:
            yield i, ch, "in"
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
            yield i, ch, "open"
        else:
            yield i, ch, "out"


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the bracket closing ``text[start]`` (strings and escapes respected), or None."""
    stack = []
    pairs = {"{": "}", "[": "]"}
    for i, ch, where in _scan(text, start):
        if where != "out":
            continue
        if ch in pairs:
            stack.append(pairs[ch])
        elif ch in "}]":
            if not stack or stack.pop() != ch:
                return None
            if not stack:
                return i + 1
    return None


def _outside_strings(text: str, fn) -> str:
    """Apply ``fn`` to the parts of ``text`` that are not inside JSON string literals."""
    out, buf = [], []
    for _, ch, where in _scan(text):
        if where == "out":
            buf.append(ch)
            continue
        if where == "open":
            out.append(fn("".join(buf)))
            buf = []
        out.append(ch)
    out.append(fn("".join(buf)))
    return "".join(out)


def _fix(candidate: str) -> str:
    def outside(s: str) -> str:
        s = _TRAILING_COMMA.sub(r"\1", s)
        return re.sub(r"\b(True|False|None)\b", lambda m: _PY_LITERALS[m.group(1)], s)

    fixed = _outside_strings(candidate, outside)
    return _TRAILING_COMMA.sub(r"\1", fixed)  # a comma left before a closer after the literal pass


def _loads(candidate: str) -> Any:
    try:
        return json.loads(candidate, strict=False)  # strict=False: raw control chars inside strings
    except json.JSONDecodeError:
        return json.loads(_fix(candidate), strict=False)


def extract_json(text: str) -> Any:
    """First JSON object or array in ``text`` (see module docstring); ``ValueError`` when none."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("empty model output: no JSON found")
    text = _THINK.sub("", text).replace("\ufeff", "")
    sources = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    last_err: Exception | None = None
    for src in sources:
        s = src.strip()
        try:
            return _loads(s)
        except json.JSONDecodeError as e:
            last_err = e
        i = 0
        while i < len(s):
            if s[i] not in "{[" or (end := _balanced_end(s, i)) is None:
                i += 1
                continue
            try:
                return _loads(s[i:end])
            except json.JSONDecodeError as e:
                last_err = e
            # A balanced but invalid object ("{'final_answer': 12.5, 'relevant_pages': [3]}"): repaired as
            # a whole, never read from inside (its "[3]" is not the answer).
            obj = _repaired(s[i:end])
            if obj is not None:
                return obj
            i = end
    # Last local fallback before a repair call: json-repair closes what a model left open (output cut at
    # max_tokens). Only from the first brace: it would turn prose into a string value.
    start = next((i for i, ch in enumerate(text) if ch in "{["), None)
    obj = _repaired(text[start:]) if start is not None else None
    if obj is not None:
        return obj
    if last_err is None:
        raise ValueError(f"no JSON object found in model output: {text[:200]!r}")
    raise ValueError(f"model output is not valid JSON ({last_err}): {text[:200]!r}")


def _repaired(candidate: str) -> Any:
    """``json_repair``'s reading of ``candidate`` (bare keys, single quotes, unclosed brackets); None when it
    recovers nothing (an empty object is not an answer)."""
    import json_repair

    obj = json_repair.repair_json(candidate, return_objects=True)
    return obj if isinstance(obj, (dict, list)) and obj else None


def parse_structured(text: str, schema: type[BaseModel]) -> BaseModel:
    """Validated schema instance from model text; ``ValueError`` (incl. ValidationError) when it does not fit."""
    return schema.model_validate(extract_json(text))


def schema_json(schema: type[BaseModel]) -> dict[str, Any]:
    return schema.model_json_schema()


def schema_instruction(schema: dict[str, Any]) -> str:
    return ("Answer with a single JSON object and nothing else (no prose, no code fence). "
            "It must validate against this JSON schema:\n" + json.dumps(schema, ensure_ascii=False))


def with_schema_prompt(messages: list[dict[str, str]], schema: dict[str, Any]) -> list[dict[str, str]]:
    """``messages`` with the schema instruction appended to the system message (or prepended as one)."""
    msgs = [dict(m) for m in messages]
    note = schema_instruction(schema)
    if msgs and msgs[0].get("role") == "system":
        msgs[0]["content"] = msgs[0]["content"].rstrip() + "\n\n" + note
    else:
        msgs.insert(0, {"role": "system", "content": note})
    return msgs


REPAIR_SYSTEM = ("You are a JSON reparser. You get a JSON schema, a model's answer that failed to parse or "
                 "validate, and the error. Return the same content as one JSON object that validates against "
                 "the schema. Keep every value the answer gave; only fix the form. Output JSON only.")


def repair_messages(schema: dict[str, Any], bad_output: str, error: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": REPAIR_SYSTEM},
            {"role": "user", "content": f"Schema:\n{json.dumps(schema, ensure_ascii=False)}\n\n"
                                        f"Answer to fix:\n{bad_output}\n\nError:\n{error[:1000]}"}]
