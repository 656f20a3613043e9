"""What notebook 04 shows: ``index_table``, index sizes and embedding time per (report, chunk size).

Every function reads the run's artifacts through the owner readers only (never runs a stage), returns a pandas
DataFrame (or PNG bytes) and is cheap enough for every headless run. Views sit on top of the stages
(tests/test_layers.py): no stage code imports one. Pages are 1-based physical pages; scores "higher = better".
"""
from __future__ import annotations

import pandas as pd

from ..core.config import RunConfig
from ..core.dataset import Dataset
from ..index import index_footprint, load_index_info


def index_table(cfg: RunConfig, ds: Dataset) -> pd.DataFrame:
    """Per (report, chunk size) index: chunks, dimension, whether 04 stored the chunk vectors ("vectors": False
    under index.chunk_vectors="on_demand", where 05 embeds its pools), bytes on disk, embedding seconds."""
    rows = []
    for r in ds.reports:
        for size in cfg.chunk.sizes:
            try:
                info = load_index_info(cfg, r.sha1, size)
            except (FileNotFoundError, ValueError):
                continue
            nbytes, embed_seconds = index_footprint(cfg, r.sha1, size)
            rows.append({"sha1": r.sha1[:8], "company": r.company, "size": size, "chunks": info.chunks,
                         "model": info.model_name, "dim": info.dim, "vectors": info.vectors,
                         "MB": round(nbytes / 1e6, 2), "embed_seconds": embed_seconds})
    return pd.DataFrame(rows)
