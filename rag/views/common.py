"""What every stage notebook's first cells share: pandas display options, the manifest row, text cuts.

Contract:
- ``display_options()``: wide columns and every row of a per-question table (``MAX_ROWS``).
- ``manifest_summary(cfg, stage) -> DataFrame``: one row of a stage manifest (seconds, counts, tokens).
- ``short(text, n)``: ``text`` on one line, at most ``n`` characters; ``QUESTION_CHARS`` is the cut of a
  question in the per-question tables.
"""
from __future__ import annotations

import pandas as pd

from ..core.artifacts import read_manifest
from ..core.config import RunConfig

MAX_ROWS = 500  # per-question tables of a full round (100+ questions) show every row
QUESTION_CHARS = 90  # question text shown in the per-question tables (rag.views.<stage>)


def display_options() -> None:
    """pandas display settings of the notebooks (set once by ``rag.notebook.setup``)."""
    pd.set_option("display.max_colwidth", 120)
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", MAX_ROWS)


def short(text: str, n: int) -> str:
    """``text`` on one line, cut to ``n`` characters with an ellipsis."""
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def manifest_summary(cfg: RunConfig, stage: str) -> pd.DataFrame:
    """One-row view of a stage manifest: seconds, counts and tokens."""
    m = read_manifest(cfg, stage)
    row = {"stage": stage, "seconds": m.get("seconds"), **{f"count.{k}": v for k, v in m.get("counts", {}).items()},
           **{f"tokens.{k}": v for k, v in m.get("tokens", {}).items()}}
    return pd.DataFrame([row])
