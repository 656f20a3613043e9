"""An answer never comes from a prompt's one-shot example, whatever its kind.

A small model asked about a report that does not hold the answer may hand back the example's answer (a name,
a sentence, a figure). The examples are about fictional companies (Acme Corp, Beta Ltd), so an answer that
repeats one is a copy, not a finding.

Contracts:
- ``example_blocks(prompts_dir) -> [(file name, parsed answer dict)]``: every ``--- answer`` block of
  ``prompts/examples/*.txt`` and ``prompts/text/*.txt`` that parses as JSON (re-read when a file changes).
- ``copied(kind, value, reasoning, prompts_dir, texts=()) -> reason | None``: why the answer is a copy, or None:
  - ``text``: at least :data:`COPY_SHARE` of the answer's word trigrams are in one example answer's;
  - ``name``/``names``/``comparative``: an entry equals an example's final answer (words case-folded);
  - ``number``: the value equals an example's figure (``value_as_printed`` x ``scale``) and no text of
    ``texts`` prints that figure;
  - ``boolean``: the model's reasoning (``reasoning``: its step-by-step analysis and summary, when read)
    shares :data:`COPY_SHARE` of its trigrams with an example's reasoning.
  N/A answers are never copies.
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from .prompts import NA, reasoning_text

COPY_SHARE = 0.5  # of the answer's trigrams found in one example: a paraphrase keeps few, a copy most
_SCALES = {"units": 1, "": 1, "thousands": 1e3, "millions": 1e6, "billions": 1e9}
_WORD = re.compile(r"\w+")


@lru_cache(maxsize=8)
def _blocks(stamp: tuple[tuple[str, float], ...]) -> tuple[tuple[str, dict], ...]:
    out = []
    for path, _ in stamp:
        text = Path(path).read_text(encoding="utf-8")
        for block in re.split(r"^--- answer\s*$", text, flags=re.M)[1:]:
            body = re.split(r"^--- \w+\s*$", block, maxsplit=1, flags=re.M)[0].strip()
            try:
                ans = json.loads(body)
            except ValueError:
                continue
            if isinstance(ans, dict):  # examples/ files by name (as before), others by folder/name
                name = Path(path).name if Path(path).parent.name == "examples" else "/".join(Path(path).parts[-2:])
                out.append((name, ans))
    return tuple(out)


def example_blocks(prompts_dir: Path | str) -> tuple[tuple[str, dict], ...]:
    """See module docstring."""
    # prompts/text/: the evidence pick / write prompts of text answers (rag.answer.text.text_evidence)
    files = sorted((Path(prompts_dir) / "examples").glob("*.txt")) + sorted((Path(prompts_dir) / "text").glob("*.txt"))
    return _blocks(tuple((str(p), p.stat().st_mtime) for p in files))


def _words(text: str) -> list[str]:
    return _WORD.findall(str(text).casefold())


def _trigrams(text: str) -> set[tuple[str, ...]]:
    w = _words(text)
    return {tuple(w[i:i + 3]) for i in range(len(w) - 2)}


def _share(answer: str, example: str) -> float:
    mine = _trigrams(answer)
    return len(mine & _trigrams(example)) / len(mine) if mine else 0.0


def _finals(ans: dict) -> list[Any]:
    f = ans.get("final_answer")
    return f if isinstance(f, list) else [f]


def _example_figure(ans: dict) -> float | None:
    try:
        return float(str(ans["value_as_printed"]).replace(",", "")) * _SCALES[str(ans.get("scale", "")).lower()]
    except (KeyError, ValueError):
        return None


def _printed(figure: float, texts: Iterable[str]) -> bool:
    digits = {f"{figure / s:,.0f}" for s in _SCALES.values() if figure / s >= 1 and float(figure / s).is_integer()}
    return any(d in t for t in texts for d in digits)


def copied(kind: str, value: Any, reasoning: str, prompts_dir: Path | str, texts: Iterable[str] = ()) -> str | None:
    """See module docstring."""
    if value in (NA, None, "", []):
        return None
    texts = list(texts)
    for name, ans in example_blocks(prompts_dir):
        where = f"the example answer of prompts/{name if '/' in name else 'examples/' + name}"
        if kind == "text" and any(isinstance(f, str) and _share(str(value), f) >= COPY_SHARE for f in _finals(ans)):
            return f"copies {where}"
        if kind in ("name", "names", "comparative"):
            mine = {tuple(_words(v)) for v in (value if isinstance(value, list) else [value])}
            if mine & {tuple(_words(f)) for f in _finals(ans) if isinstance(f, str) and f.upper() != NA}:
                return f"repeats {where}"
        if kind == "number" and not isinstance(value, bool):
            fig = _example_figure(ans)
            try:
                same = fig is not None and abs(float(value) - fig) <= 1e-9 * max(1.0, abs(fig))
            except (TypeError, ValueError):
                same = False
            if same and not _printed(fig, texts):
                return f"is the figure of {where}, printed on no page read"
        if kind == "boolean" and reasoning:
            if _share(reasoning, reasoning_text(ans)) >= COPY_SHARE:
                return f"reasons as {where}"
    return None
