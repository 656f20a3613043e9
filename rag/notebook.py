"""Small helpers the notebooks call (so their cells stay one-liners)."""
from __future__ import annotations

from typing import Any

import pandas as pd

from .core.artifacts import read_manifest
from .core.config import RunConfig
from .core.dataset import Dataset

MAX_ROWS = 500  # per-question tables of a full round (100+ questions) show every row
QUESTION_CHARS = 90  # question text shown in the per-question tables (rag.<stage>.report)


def short(text: str, n: int) -> str:
    """``text`` on one line, cut to ``n`` characters with an ellipsis."""
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def setup(preset: str, data_dir: str, run: str, overrides: dict[str, Any] | None = None,
          executor: str | None = None) -> tuple[RunConfig, Dataset]:
    """Config + dataset for a notebook's parameters (generates the demo corpus when it is the target);
    ``executor`` ("local" / "ray", None: as configured) is ``run.executor``."""
    from .pipeline import prepare

    pd.set_option("display.max_colwidth", 120)
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", MAX_ROWS)
    if executor:
        overrides = {**(overrides or {}), "execution.executor": executor}
    cfg, ds = prepare(preset, data_dir, run, overrides)
    print(f"preset={cfg.preset} run={cfg.run} data={cfg.data_dir} reports={len(ds.reports)} "
          f"questions={len(ds.questions)} config_hash={cfg.config_hash()} executor={cfg.execution.executor}")
    return cfg, ds


def manifest_summary(cfg: RunConfig, stage: str) -> pd.DataFrame:
    """One-row view of a stage manifest: seconds, counts and tokens."""
    m = read_manifest(cfg, stage)
    row = {"stage": stage, "seconds": m.get("seconds"), **{f"count.{k}": v for k, v in m.get("counts", {}).items()},
           **{f"tokens.{k}": v for k, v in m.get("tokens", {}).items()}}
    return pd.DataFrame([row])


def show_page_figure(cfg: RunConfig, ds: Dataset) -> None:
    """Display 01's figure: the parsed page with the most tables, table boxes drawn (nothing when none)."""
    from IPython.display import Image, display

    from .parse.report import page_with_tables_png

    fig = page_with_tables_png(cfg, ds)
    if fig is None:
        print("no parsed page has a table with a box")
        return
    caption, png = fig
    print(caption)
    display(Image(data=png))
