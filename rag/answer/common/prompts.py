"""Answer prompts: modular text blocks from ``prompts/`` assembled per answer kind, plus their schemas.

Layout of ``prompts/`` (plain text, edited without touching code)::

    shared.txt              instructions common to every kind (system message, first)
    kinds/<kind>.txt        the kind's rules (system message, second)
    schema/<kind>.txt       the schema's description in words (system message, last)
    examples/<kind>.txt     one-shot example: "--- context", "--- question", "--- answer" (JSON)
    user.txt                the question template with {context} and {question}

Contracts:
- ``build_messages(kind, context, question, prompts_dir=None) -> list[message]``: system, example
  user, example assistant, real user. Static parts come first so a server's prefix cache can reuse them.
- ``prompt_version(kind, prompts_dir=None) -> str``: 12-hex hash of the kind's template parts (file
  names + contents); recorded with every answer and part of the stage's currency key.
- ``SCHEMAS[kind]``: the pydantic model the model must fill. Numbers come back *as printed* with the
  scale seen (``NumberAnswer``); ``rag.answer`` does the arithmetic in code.
- ``reasoning_text(parsed) -> str``: a parsed answer's step-by-step analysis and summary, joined (what the example
  check and the yes/no note check read).
- Page numbers in ``relevant_pages`` are the context's own "=== Page N ===" labels (1..n in context
  order), mapped back to report pages by ``rag.answer``.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, field_validator

from ...core.config import PROJECT_ROOT
from ...core.dataset import KINDS
from .printed import normalize_scale

PROMPTS_DIR = PROJECT_ROOT / "prompts"
PROMPT_KINDS = KINDS  # one prompt per answer kind (rag.core.dataset)
NA = "N/A"
_SCALE_NAMES = {1: "units", 1_000: "thousands", 1_000_000: "millions", 1_000_000_000: "billions"}


class PromptError(ValueError):
    """A prompt file is missing or malformed; the message names the file."""


# ---- schemas --------------------------------------------------------------------------------
class _AnswerBase(BaseModel):
    step_by_step_analysis: str
    reasoning_summary: str
    relevant_pages: list[int]

    @field_validator("relevant_pages", mode="before")
    @classmethod
    def _pages(cls, v: Any) -> list[int]:
        # Small models write "Page 3" or "3"; keep the integers, drop what is not a page label.
        if v is None or v == NA:
            return []
        if not isinstance(v, list):
            v = [v]
        out = []
        for x in v:
            m = re.search(r"\d+", str(x)) if not isinstance(x, int) else None
            if isinstance(x, int) and not isinstance(x, bool):
                out.append(x)
            elif m:
                out.append(int(m.group(0)))
        return out


class NumberAnswer(_AnswerBase):
    value_as_printed: str  # the figure exactly as printed ("(1,234.5)", "12.5%") or "N/A"
    # An enum, so a grammar-constrained backend can only produce these four words.
    scale: Literal["units", "thousands", "millions", "billions"]
    currency: str  # ISO code or "none"

    @field_validator("value_as_printed", "currency", mode="before")
    @classmethod
    def _text(cls, v: Any, info: Any) -> str:
        # A JSON number or null where text is expected: keep it as text rather than fail the call.
        if v is None:
            return NA if info.field_name == "value_as_printed" else ""
        return str(v)

    @field_validator("scale", mode="before")
    @classmethod
    def _scale(cls, v: Any) -> str:
        # Unconstrained backends write "Thousands", "in millions", "000", null…
        return _SCALE_NAMES.get(normalize_scale(None if v is None else str(v)) or 1, "units")


class NameAnswer(_AnswerBase):
    final_answer: str


class NamesAnswer(_AnswerBase):
    final_answer: list[str] | Literal["N/A"]

    @field_validator("final_answer", mode="before")
    @classmethod
    def _names(cls, v: Any) -> Any:
        if isinstance(v, str):
            return NA if v.strip().upper() in (NA, "NA", "") else [v]
        return v


class BooleanAnswer(_AnswerBase):
    final_answer: bool


class ComparativeAnswer(_AnswerBase):
    final_answer: str


class TextAnswer(_AnswerBase):
    """The ``text`` kind (issue 31): a short free-text answer; trimmed in code by rag.answer.text.text_kind."""
    final_answer: str


SCHEMAS: dict[str, type[_AnswerBase]] = {
    "number": NumberAnswer, "name": NameAnswer, "names": NamesAnswer, "boolean": BooleanAnswer,
    "comparative": ComparativeAnswer, "text": TextAnswer,
}


# ---- template parts -------------------------------------------------------------------------
def _dir(prompts_dir: Path | str | None) -> Path:
    return Path(prompts_dir) if prompts_dir else PROMPTS_DIR


def _parts_paths(kind: str, root: Path) -> list[Path]:
    if kind not in PROMPT_KINDS:
        raise PromptError(f"no prompt for answer kind {kind!r} (have: {', '.join(PROMPT_KINDS)})")
    return [root / "shared.txt", root / "kinds" / f"{kind}.txt", root / "schema" / f"{kind}.txt",
            root / "examples" / f"{kind}.txt", root / "user.txt"]


def _read_parts(kind: str, root: str) -> tuple[tuple[str, str], ...]:
    # Read on every call (5 small files): an edited prompt file takes effect and re-versions at once.
    out = []
    for p in _parts_paths(kind, Path(root)):
        if not p.exists():
            raise PromptError(f"prompt file {p} is missing")
        out.append((str(p.relative_to(root)), p.read_text(encoding="utf-8").strip()))
    return tuple(out)


def _parse_example(path: str, text: str) -> dict[str, str]:
    sections: dict[str, str] = {}
    name = None
    buf: list[str] = []
    for line in text.splitlines():
        m = re.match(r"^--- (context|question|answer)\s*$", line)
        if m:
            if name:
                sections[name] = "\n".join(buf).strip()
            name, buf = m.group(1), []
        else:
            buf.append(line)
    if name:
        sections[name] = "\n".join(buf).strip()
    missing = {"context", "question", "answer"} - set(sections)
    if missing:
        raise PromptError(f"prompt example {path}: missing section(s) {', '.join(sorted(missing))}")
    return sections


def prompt_version(kind: str, prompts_dir: Path | str | None = None) -> str:
    """Hash of the kind's template parts: changes whenever any of its text files changes."""
    parts = _read_parts(kind, str(_dir(prompts_dir)))
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:12]


def build_messages(kind: str, context: str, question: str,
                   prompts_dir: Path | str | None = None) -> list[dict[str, str]]:
    """Chat messages for one answering call (see module docstring)."""
    parts = dict(_read_parts(kind, str(_dir(prompts_dir))))
    ex_path = f"examples/{kind}.txt"
    ex = _parse_example(ex_path, parts[ex_path])
    system = "\n\n".join([parts["shared.txt"], parts[f"kinds/{kind}.txt"], parts[f"schema/{kind}.txt"]])
    user_t = parts["user.txt"]
    if "{context}" not in user_t or "{question}" not in user_t:
        raise PromptError(f"prompt file {_dir(prompts_dir) / 'user.txt'} needs {{context}} and {{question}}")

    def user(c: str, q: str) -> str:
        return user_t.replace("{context}", c).replace("{question}", q)

    return [
        {"role": "system", "content": system},
        {"role": "user", "content": user(ex["context"], ex["question"])},
        {"role": "assistant", "content": ex["answer"]},
        {"role": "user", "content": user(context, question)},
    ]


def reasoning_text(parsed: dict[str, Any] | None) -> str:
    """A parsed answer's reasoning: its ``step_by_step_analysis`` and ``reasoning_summary``, each stripped, joined
    by a space ("" when it has neither)."""
    parsed = parsed or {}
    return " ".join(str(parsed.get(k) or "").strip() for k in ("step_by_step_analysis", "reasoning_summary")).strip()


def format_context(pages: list[str]) -> str:
    """Pages (texts, in rank order) -> context with "=== Page N ===" labels, N = 1..len(pages)."""
    return "\n".join(f"=== Page {i} ===\n{t.strip()}" for i, t in enumerate(pages, 1))
