"""A yes/no page's "true" set against the same page's P(true) for other events (stage 06,
``answer.boolean_calibration``; "contextual calibration"): the question's P(true) on the page minus the mean
P(true) of the control questions -- the other yes/no templates of the ERC generator, with the same company -- on
that page; the page's "true" stands only at ``answer.boolean_calibration_min`` or above.

Why: a small reader says yes more readily on some pages than others, whatever is asked. A page that shows the
executive team's signatures gets P(true) 0.2-0.3 for "changes to its executive team" and for the other events
too; a page that states the asked event lifts the asked question's P(true) above the rest. Measured on the
catalogue's tuning half (RESULTS.md, issue 46).

Contracts:
- ``load_controls(pdir) -> tuple[str, ...]``: the control templates of ``prompts/checks/controls.txt`` (one per
  line, ``{company}`` in each; ``#`` lines are comments); a file without templates or a line without
  ``{company}`` raises ``ValueError`` naming the file and the line.
- ``controls_version(pdir) -> str``: their hash, for 06's keys.
- ``controls_for(question, templates) -> list[str]``: when ``question`` is one of the templates with a company
  filled in (spaces and case aside), the other templates with that company; else ``[]``: a question of no
  template is not calibrated (its page's true stands).
- ``calibration_call(llm, cfg, question, context, own_p) -> dict``: ``calib_score`` (``own_p`` minus the
  controls' mean P(true) on ``context``, rounded to 6 places; None when there are no controls, ``own_p`` is None
  or every control call failed), ``calib_ps`` (the controls' P, 0.0 where a call failed), ``calib_usage``,
  ``calib_seconds`` and ``calib_errors`` (when a call failed). Each control is the page's own decision call
  (:func:`rag.answer.booleans.bool_logprob.p_true_call`) with the control as the question, so the server's
  prompt cache reuses the page. Never raises for a model error.
"""
from __future__ import annotations

import re
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

from ...core.config import RunConfig
from ...models.base import Usage
from ..common.calls import prompts_dir, sections_version
from .bool_logprob import p_true_call

CONTROLS_FILE = Path("checks") / "controls.txt"
_PLACEHOLDER = "{company}"


@lru_cache(maxsize=8)
def _read(path: str, mtime: float) -> tuple[str, ...]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    out = []
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if _PLACEHOLDER not in line:
            raise ValueError(f"{path}: line {n} has no {_PLACEHOLDER}: {line[:80]!r}")
        out.append(line)
    if not out:
        raise ValueError(f"{path}: no control question (one per line, with {_PLACEHOLDER})")
    return tuple(out)


def load_controls(pdir: Path | str) -> tuple[str, ...]:
    """See module docstring."""
    path = Path(pdir) / CONTROLS_FILE
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: the yes/no calibration's control questions")
    return _read(str(path), path.stat().st_mtime)


def controls_version(pdir: Path | str) -> str:
    return sections_version(list(load_controls(pdir)))


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def controls_for(question: str, templates: tuple[str, ...] | list[str]) -> list[str]:
    """See module docstring."""
    q = " ".join(question.split())
    for i, t in enumerate(templates):
        head, _, tail = " ".join(t.split()).partition(_PLACEHOLDER)
        m = re.fullmatch(re.escape(head) + r"(.+?)" + re.escape(tail), q, flags=re.I)
        if m:
            company = m.group(1)
            return [o.replace(_PLACEHOLDER, company) for j, o in enumerate(templates) if j != i
                    and _norm(o.replace(_PLACEHOLDER, company)) != _norm(q)]
    return []


def calibration_call(llm: Any, cfg: RunConfig, question: str, context: str, own_p: float | None) -> dict[str, Any]:
    """See module docstring."""
    controls = controls_for(question, load_controls(prompts_dir(cfg)))
    if not controls or own_p is None:
        return {"calib_score": None, "calib_ps": [], "calib_usage": {}, "calib_seconds": 0.0}
    t0 = time.perf_counter()
    ps, errors, usage = [], [], None
    for i, control in enumerate(controls):
        r = p_true_call(llm, cfg, control, context)
        if r.get("p_usage"):  # summed as rag.answer.common.yes_no_check.yes_no_ps sums its calls'
            u = Usage(**r["p_usage"])
            usage = u if usage is None else usage + u
        if r.get("p_true") is None:
            errors.append((i, r.get("p_error", "no P(true)")))
        ps.append(r.get("p_true"))
    read = [p for p in ps if p is not None]
    out = {"calib_score": round(own_p - sum(read) / len(read), 6) if read else None,
           "calib_ps": [0.0 if p is None else p for p in ps], "calib_usage": usage.as_dict() if usage else {},
           "calib_seconds": round(time.perf_counter() - t0, 3)}
    if errors:
        out["calib_errors"] = errors
    return out
