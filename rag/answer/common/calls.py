"""One structured model call of stage 06, and where its prompt files are (used by rag.answer.fuse and
rag.answer.numbers.figure_pick, which import nothing of each other's calls).

- ``structured_call(llm, messages, schema) -> dict``: raw, parsed, repaired, usage, model, error.
- ``BooleanDecision``: the grammar of a yes/no decision alone, ``{"final_answer": boolean}``, whose value token's
  log-probabilities give P(true) (yes/no pages: rag.answer.booleans.bool_logprob; one line against a metric:
  rag.answer.numbers.line_check).
- ``prompts_dir(cfg)``: the prompt blocks' folder (``answer.prompts_dir``, relative to the project).
- ``prompt_sections(path, required)``: a prompt file's ``--- name`` sections; ``sections_version(...)`` their hash;
  ``one_shot_messages(...)``: system, one worked example, the real list and question.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ...core.config import RunConfig, project_path


class BooleanDecision(BaseModel):
    """The decision alone: the value token comes first, right after the prompt."""
    final_answer: bool


def structured_call(llm: Any, messages: list[dict[str, str]], schema: type) -> dict[str, Any]:
    """``raw, parsed, repaired, usage, model, error`` of one structured call; a StructuredOutputError
    becomes ``parsed=None`` with its raw text kept (the caller decides what N/A means)."""
    from ...models.base import StructuredOutputError

    try:
        res = llm.complete(messages, schema=schema)
        return dict(raw=res.raw, parsed=res.value.model_dump(), repaired=bool(res.repaired),
                    usage=res.usage.as_dict(), model=res.model, error=None)
    except StructuredOutputError as e:
        return dict(raw=e.raw, parsed=None, repaired=True, usage={}, model=getattr(llm, "model", ""),
                    error=f"structured output: {e}")


def prompts_dir(cfg: RunConfig) -> Path:
    return project_path(cfg.answer.prompts_dir)


def prompt_sections(path: Path, required: tuple[str, ...]) -> dict[str, str]:
    """The ``--- name`` sections of a prompt file (``{name: text}``, stripped); FileNotFoundError when the file
    is missing, ValueError naming the file and the sections it lacks of ``required``."""
    if not path.exists():
        raise FileNotFoundError(f"prompt file {path} is missing")
    sections: dict[str, list[str]] = {}
    name = None
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^--- (\w+)\s*$", line)
        if m:
            name = m.group(1)
            sections[name] = []
        elif name:
            sections[name].append(line)
    missing = set(required) - set(sections)
    if missing:
        raise ValueError(f"prompt file {path}: missing section(s) {', '.join(sorted(missing))}")
    return {k: "\n".join(v).strip() for k, v in sections.items()}


def sections_version(*parts: object) -> str:
    """A short hash of prompt sections (and any code constant passed beside them): a prompt's version in keys."""
    return hashlib.sha256(repr([sorted(p.items()) if isinstance(p, dict) else p for p in parts]).encode()).hexdigest()[:12]


def one_shot_messages(parts: dict[str, str], example: str, body: str, question: str, header: str,
                      footer: str = "") -> list[dict[str, str]]:
    """System, the worked example (section ``example`` + its question and answer), then the real ``body``:
    each user turn reads ``HEADER:\n<lines><footer>\n\nQUESTION: <question>``."""
    def user(text: str, q: str) -> str:
        return f"{header}:\n{text}{footer}\n\nQUESTION: {q}"

    return [{"role": "system", "content": parts["system"]},
            {"role": "user", "content": user(parts[example], parts["question"])},
            {"role": "assistant", "content": parts["answer"]},
            {"role": "user", "content": user(body, question)}]


def as_choice(v: Any) -> int:
    """A model's numbered choice as an int: a number as is, the first digits of a string, 0 for none / a bool."""
    if isinstance(v, bool) or v is None:
        return 0
    if isinstance(v, (int, float)):
        return int(v)
    m = re.search(r"\d+", str(v))
    return int(m.group(0)) if m else 0
