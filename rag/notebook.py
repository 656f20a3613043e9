"""A notebook's setup cell: config + dataset for its parameters (what it then shows: :mod:`rag.views`).

Sits on top with the pipeline (it calls ``rag.pipeline.prepare``); nothing below imports it.
"""
from __future__ import annotations

from typing import Any

from .core.config import RunConfig
from .core.dataset import Dataset
from .views.common import display_options


def setup(preset: str, data_dir: str, run: str, overrides: dict[str, Any] | None = None,
          executor: str | None = None) -> tuple[RunConfig, Dataset]:
    """Config + dataset for a notebook's parameters (generates the demo corpus when it is the target);
    ``executor`` ("local" / "ray", None: as configured) is ``run.executor``."""
    from .pipeline import prepare

    display_options()
    if executor:
        overrides = {**(overrides or {}), "execution.executor": executor}
    cfg, ds = prepare(preset, data_dir, run, overrides)
    print(f"preset={cfg.preset} run={cfg.run} data={cfg.data_dir} reports={len(ds.reports)} "
          f"questions={len(ds.questions)} config_hash={cfg.config_hash()} executor={cfg.execution.executor}")
    return cfg, ds
