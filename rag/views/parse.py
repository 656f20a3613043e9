"""What notebook 01 shows: ``parse_table`` pages/tables per report; ``page_with_tables_png`` one rendered
page with its table boxes (``show_page_figure`` displays it in the notebook).

Every function reads the run's artifacts through the owner readers only (never runs a stage), returns a pandas
DataFrame (or PNG bytes) and is cheap enough for every headless run. Views sit on top of the stages
(tests/test_layers.py): no stage code imports one. Pages are 1-based physical pages; scores "higher = better".
"""
from __future__ import annotations

import pandas as pd

from ..core.config import RunConfig
from ..core.dataset import Dataset
from ..parse import item_state, load_parsed

PAGE_SCALE = 0.8  # render scale of the 01 page figure (1.0 = 72 dpi)


def parse_table(cfg: RunConfig, ds: Dataset) -> pd.DataFrame:
    """Per parsed report: pipeline, pages, tables, pages holding tables, characters, garbled pages."""
    rows = []
    for r in ds.reports:
        if item_state(cfg, r.sha1).status != "done":
            continue
        p = load_parsed(cfg, r.sha1)
        rows.append({"sha1": r.sha1[:8], "company": r.company, "pipeline": p.pipeline, "pages": p.n_pages,
                     "tables": sum(len(pg.tables) for pg in p.pages),
                     "pages_with_tables": sum(bool(pg.tables) for pg in p.pages),
                     "chars": sum(pg.metrics.chars for pg in p.pages),
                     "garbled_pages": sum(pg.metrics.garbled_ratio >= cfg.clean.garbled_threshold
                                          for pg in p.pages)})
    return pd.DataFrame(rows)



def page_with_tables_png(cfg: RunConfig, ds: Dataset, scale: float = PAGE_SCALE) -> tuple[str, bytes] | None:
    """(caption, PNG) of the page with the most tables in the first parsed report, table boxes drawn in red;
    None when no parsed page has a table with a box."""
    from PIL import Image, ImageDraw
    import io

    from .widgets.page_viewer import render_page_png

    for r in ds.reports:
        if item_state(cfg, r.sha1).status != "done":
            continue
        pages = [pg for pg in load_parsed(cfg, r.sha1).pages if any(t.bbox for t in pg.tables)]
        if not pages:
            continue
        page = max(pages, key=lambda pg: (len(pg.tables), -pg.page))
        img = Image.open(io.BytesIO(render_page_png(r.pdf, page.page, scale))).convert("RGB")
        draw = ImageDraw.Draw(img)
        for t in page.tables:
            if t.bbox:  # PDF points, top-left origin: pixels = points * scale
                draw.rectangle([v * scale for v in t.bbox], outline=(220, 30, 30), width=2)
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        return f"{r.company} ({r.sha1[:8]}) page {page.page}: {len(page.tables)} table(s)", buf.getvalue()
    return None


def show_page_figure(cfg: RunConfig, ds: Dataset) -> None:
    """Display 01's figure: the parsed page with the most tables, table boxes drawn (nothing when none)."""
    from IPython.display import Image, display

    fig = page_with_tables_png(cfg, ds)
    if fig is None:
        print("no parsed page has a table with a box")
        return
    caption, png = fig
    print(caption)
    display(Image(data=png))
