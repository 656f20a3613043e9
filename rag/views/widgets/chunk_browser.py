"""Notebook widget: browse the chunks of ``outputs/<run>/03_chunk``.

``chunk_browser(cfg) -> ipywidgets.VBox``: pick a report, a chunk size, a page (1-based) and a kind;
the list shows the matching chunks; the selected one is shown with its tokens, heading, table id and
its neighbours in the report (previous / next chunk of the file, which may sit on another page).
"""
from __future__ import annotations

import html
from pathlib import Path

import ipywidgets as w

from ...chunk import STAGE, chunked_sizes, load_chunks
from ...core.config import RunConfig
from ...core.records import Chunk

ALL = "all"
KINDS = (ALL, "text", "table", "serialized_table")


def _reports(cfg: RunConfig) -> dict[str, list[int]]:
    """sha1 -> sizes chunked in this run (read through the owner, ``rag.chunk.chunked_sizes``)."""
    return chunked_sizes(cfg)


def _companies(cfg: RunConfig) -> dict[str, str]:
    try:
        from ...core.dataset import load_dataset

        return {r.sha1: r.company for r in load_dataset(Path(cfg.path("data_dir")), check_hashes=False).reports}
    except Exception:  # the browser still works on sha1s alone
        return {}


def _card(c: Chunk | None, title: str, full: bool) -> str:
    if c is None:
        return f"<div style='color:#888'><b>{title}</b>: none</div>"
    text = c.text if full else (c.text[:400] + (" …" if len(c.text) > 400 else ""))
    meta = (f"<b>{title}</b> <code>{html.escape(c.chunk_id)}</code> — page {c.page}, {c.kind}, "
            f"<b>{c.tokens}</b> tokens (size {c.size})"
            + (f", table {html.escape(c.table_id)}" if c.table_id else "")
            + (f", heading “{html.escape(c.heading)}”" if c.heading else ""))
    style = "white-space:pre-wrap;border:1px solid #ccc;padding:6px;margin:2px 0 10px 0;"
    style += "" if full else "color:#555;font-size:90%;"
    return f"<div>{meta}</div><div style='{style}'>{html.escape(text)}</div>"


def chunk_browser(cfg: RunConfig) -> w.VBox:
    """Build the browser for ``cfg``'s run (reads the chunk files; writes nothing)."""
    reports = _reports(cfg)
    if not reports:
        return w.VBox([w.HTML(f"<b>No chunks in {cfg.run_dir / STAGE}</b>: run stage 03_chunk first.")])
    names = _companies(cfg)
    report_dd = w.Dropdown(options=[(f"{names.get(s, s)} ({s[:8]})", s) for s in reports], description="report")
    size_dd = w.Dropdown(description="size")
    page_dd = w.Dropdown(description="page")
    kind_dd = w.Dropdown(options=KINDS, value=ALL, description="kind")
    listing = w.Select(rows=12, layout=w.Layout(width="95%"))
    prev_btn, next_btn = w.Button(description="◀ previous"), w.Button(description="next ▶")
    detail = w.HTML()
    state: dict = {"chunks": []}

    def load(*_):
        size_dd.options = reports[report_dd.value]
        if size_dd.value not in size_dd.options:
            size_dd.value = cfg.retrieve.chunk_size if cfg.retrieve.chunk_size in size_dd.options else size_dd.options[0]
        state["chunks"] = load_chunks(cfg, report_dd.value, size_dd.value)
        pages = sorted({c.page for c in state["chunks"]})
        page_dd.options = [ALL] + pages
        page_dd.value = ALL
        refilter()

    def refilter(*_):
        chunks = state["chunks"]
        idx = [i for i, c in enumerate(chunks)
               if (page_dd.value == ALL or c.page == page_dd.value) and (kind_dd.value == ALL or c.kind == kind_dd.value)]
        listing.options = [(f"p{chunks[i].page} {chunks[i].kind:<16} {chunks[i].tokens:>5} tok  "
                            f"{chunks[i].text.splitlines()[-1][:70] if chunks[i].text else ''}", i) for i in idx]
        listing.value = idx[0] if idx else None
        show()

    def show(*_):
        chunks, i = state["chunks"], listing.value
        if i is None:
            detail.value = "<i>no chunk matches</i>"
            return
        detail.value = (_card(chunks[i], "chunk", True) + _card(chunks[i - 1] if i > 0 else None, "previous", False)
                        + _card(chunks[i + 1] if i + 1 < len(chunks) else None, "next", False))

    def step(delta: int):
        opts = [v for _, v in listing.options]
        if listing.value in opts:
            j = opts.index(listing.value) + delta
            if 0 <= j < len(opts):
                listing.value = opts[j]

    report_dd.observe(load, "value")
    size_dd.observe(lambda ch: (state.update(chunks=load_chunks(cfg, report_dd.value, size_dd.value)), refilter())
                    if ch["new"] is not None and report_dd.value else None, "value")
    page_dd.observe(refilter, "value")
    kind_dd.observe(refilter, "value")
    listing.observe(show, "value")
    prev_btn.on_click(lambda _: step(-1))
    next_btn.on_click(lambda _: step(1))
    load()
    return w.VBox([w.HBox([report_dd, size_dd]), w.HBox([page_dd, kind_dd]), listing,
                   w.HBox([prev_btn, next_btn]), detail])
