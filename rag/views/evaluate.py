"""What notebook 07 shows besides its own tables: ``earlier_runs``, this run beside other scored runs of the
same dataset.

Every function reads the run's artifacts through the owner readers only (never runs a stage), returns a pandas
DataFrame (or PNG bytes) and is cheap enough for every headless run. Views sit on top of the stages
(tests/test_layers.py): no stage code imports one. Pages are 1-based physical pages; scores "higher = better".
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..core.artifacts import read_manifest
from ..core.config import RunConfig
from ..evaluate import STAGE, compare_runs, scores_path


def earlier_runs(cfg: RunConfig, limit: int = 8) -> pd.DataFrame:
    """This run beside up to ``limit`` other scored runs of the same dataset in ``outputs_dir`` (newest first)."""
    mine = Path(cfg.data_dir).resolve()
    others = []
    for d in Path(cfg.outputs_dir).iterdir():
        if d == cfg.run_dir or not scores_path(d).exists():
            continue
        manifest = read_manifest(d, STAGE, missing_ok=True)
        if manifest is None:
            continue
        data_dir = (manifest.get("config") or {}).get("data_dir")
        if data_dir and Path(data_dir).resolve() == mine:
            others.append(d)
    others = sorted(others, key=lambda d: scores_path(d).stat().st_mtime, reverse=True)
    runs = [cfg.run_dir] + others[:limit] if scores_path(cfg).exists() else others[:limit]
    if not runs:
        return pd.DataFrame()
    keep = ["questions", "G", "R", "score", "max_score", "answer_accuracy", "na_precision", "na_recall",
            "hit@1", "hit@5", "seconds", "tokens"]
    table = compare_runs(runs)
    return table[[c for c in keep if c in table.columns] + [c for c in table.columns if c.startswith("score.")]]
