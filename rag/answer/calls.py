"""One structured model call of stage 06, and where its prompt files are (used by rag.answer.fuse and
rag.answer.figure_pick, which import nothing of each other's calls).

- ``structured_call(llm, messages, schema) -> dict``: raw, parsed, repaired, usage, model, error.
- ``prompts_dir(cfg)``: the prompt blocks' folder (``answer.prompts_dir``, relative to the project).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.config import RunConfig, project_path


def structured_call(llm: Any, messages: list[dict[str, str]], schema: type) -> dict[str, Any]:
    """``raw, parsed, repaired, usage, model, error`` of one structured call; a StructuredOutputError
    becomes ``parsed=None`` with its raw text kept (the caller decides what N/A means)."""
    from ..models.base import StructuredOutputError

    try:
        res = llm.complete(messages, schema=schema)
        return dict(raw=res.raw, parsed=res.value.model_dump(), repaired=bool(res.repaired),
                    usage=res.usage.as_dict(), model=res.model, error=None)
    except StructuredOutputError as e:
        return dict(raw=e.raw, parsed=None, repaired=True, usage={}, model=getattr(llm, "model", ""),
                    error=f"structured output: {e}")


def prompts_dir(cfg: RunConfig) -> Path:
    return project_path(cfg.answer.prompts_dir)
