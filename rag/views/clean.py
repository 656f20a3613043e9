"""What notebook 02 shows: ``clean_table``, what cleanup and OCR changed per report.

Every function reads the run's artifacts through the owner readers only (never runs a stage), returns a pandas
DataFrame (or PNG bytes) and is cheap enough for every headless run. Views sit on top of the stages
(tests/test_layers.py): no stage code imports one. Pages are 1-based physical pages; scores "higher = better".
"""
from __future__ import annotations

import pandas as pd

from ..core.config import RunConfig
from ..core.dataset import Dataset
from ..parse import load_parsed
from ..clean import item_state, load_clean


def clean_table(cfg: RunConfig, ds: Dataset) -> pd.DataFrame:
    """Per cleaned report: characters before/after cleanup, OCR'd pages, tables with a unit and a currency."""
    rows = []
    for r in ds.reports:
        if item_state(cfg, r.sha1).status != "done":
            continue
        c, p = load_clean(cfg, r.sha1), load_parsed(cfg, r.sha1)
        tables = [t for pg in c.pages for t in pg.tables]
        raw = sum(pg.metrics.chars for pg in p.pages)
        clean = sum(len(pg.markdown) for pg in c.pages)
        rows.append({"sha1": r.sha1[:8], "company": r.company, "chars_parsed": raw, "chars_clean": clean,
                     "change_%": round(100 * (clean - raw) / raw, 1) if raw else None,
                     "ocr_pages": len(c.ocr_pages), "ocr_page_list": ",".join(map(str, c.ocr_pages[:10])),
                     "tables": len(tables), "with_unit": sum(t.scale is not None for t in tables),
                     "with_currency": sum(t.currency is not None for t in tables)})
    return pd.DataFrame(rows)
