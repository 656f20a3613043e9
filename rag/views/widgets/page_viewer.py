"""Notebook widget: a PDF page image beside what stage 01 parsed from it.

``page_viewer(parsed_report_path, pdf_path, page=1, scale=1.0) -> ipywidgets.VBox``

A page slider (1-based physical pages) drives the page image (rendered with pypdfium2 at ``scale``
pixels per point) on the left and, on the right, the parsed blocks in reading order (kind tags,
headings bold), the rebuilt tables as HTML with their context lines, and the page metrics.
"""
from __future__ import annotations

import html
import io
from pathlib import Path
from typing import Callable

from ...core.artifacts import read_json
from ...core.records import ParsedPage, ParsedReport

_STYLE = ("<style>.rag-pv table{border-collapse:collapse;font-size:11px;margin:4px 0}"
          ".rag-pv td,.rag-pv th{border:1px solid #bbb;padding:1px 4px}.rag-pv th{background:#eef}"
          ".rag-pv .k{color:#888;font-size:10px}.rag-pv .ctx{color:#555;font-style:italic}</style>")


def page_html(page: ParsedPage) -> str:
    """HTML of one parsed page: blocks in reading order with tables placed at their block_index."""
    m = page.metrics
    parts = [_STYLE, '<div class="rag-pv">',
             f"<div class='k'>page {page.page} · {m.chars} chars · {m.words} words · "
             f"garbled {m.garbled_ratio:.1%} · {len(page.blocks)} blocks · {len(page.tables)} tables</div>"]
    tables = sorted(page.tables, key=lambda t: t.block_index)
    ti = 0
    for i, b in enumerate(page.blocks + [None]):
        while ti < len(tables) and tables[ti].block_index <= i:
            t = tables[ti]
            ctx = html.escape(t.context_above).replace("\n", "<br>")
            parts.append(f"<div class='k'>table {t.table_id}</div><div class='ctx'>{ctx}</div>{t.html}")
            ti += 1
        if b is None:
            break
        text = html.escape(b.text)
        text = f"<b>{text}</b>" if b.kind == "heading" else text
        parts.append(f"<p><span class='k'>[{b.kind}]</span> {text}</p>")
    parts.append("</div>")
    return "".join(parts)


def render_page_png(pdf_path: Path | str, page: int, scale: float = 1.0) -> bytes:
    """PNG bytes of 1-based ``page`` rendered by pypdfium2 (empty-password encryption is fine)."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf_path))
    try:
        img = doc[page - 1].render(scale=scale).to_pil()
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        return buf.getvalue()
    finally:
        doc.close()


def _image_viewer(pdf_path: Path | str, title_html: str, value: int, last: int, scale: float,
                  right_html: Callable[[int], str]):
    """The layout both viewers share: title, page slider (1..``last``, starting at ``value``), and the
    page image (left) beside ``right_html(page)`` (right), both redrawn when the slider moves."""
    import ipywidgets as w

    slider = w.IntSlider(value=value, min=1, max=last, description="page", continuous_update=False)
    image = w.Image(format="png", layout=w.Layout(width="50%", border="1px solid #ccc"))
    right = w.HTML(layout=w.Layout(width="50%", max_height="1000px", overflow="auto"))
    title = w.HTML(title_html)

    def show(change=None) -> None:
        n = slider.value
        image.value = render_page_png(pdf_path, n, scale)
        right.value = right_html(n)

    slider.observe(show, names="value")
    show()
    return w.VBox([title, slider, w.HBox([image, right])])


def page_viewer(report: ParsedReport | Path | str, pdf_path: Path | str, page: int = 1, scale: float = 1.0):
    """Slider + page image + parsed blocks/tables of one parsed report (``rag.parse.load_parsed(cfg, sha1)``,
    or the path of its file)."""
    from ...parse import load_parsed

    rep = report if isinstance(report, ParsedReport) else load_parsed(report)
    pages = {p.page: p for p in rep.pages}
    title = f"<b>{html.escape(Path(rep.pdf).name)}</b> · {rep.n_pages} pages · pipeline {rep.pipeline}"
    return _image_viewer(pdf_path, title, min(max(page, 1), rep.n_pages), max(rep.n_pages, 1), scale,
                         lambda n: page_html(pages[n]) if n in pages else "<i>page not parsed</i>")


def clean_viewer(report, pdf_path: Path | str, page: int = 1, scale: float = 1.0):
    """Slider + page image + the cleaned Markdown of one clean report (``rag.clean.load_clean(cfg, sha1)``,
    or the path of its file; tables with their unit line).

    Pages are 1-based, as in every record. OCR'd pages are flagged in the title line of the page.
    """
    from ...core.records import CleanReport

    rep = report if isinstance(report, CleanReport) else CleanReport.model_validate(read_json(report))
    pages = {p.page: p for p in rep.pages}
    last = max(pages) if pages else 1
    title = f"<b>{html.escape(rep.company)}</b> · {len(rep.pages)} pages · OCR pages {rep.ocr_pages or 'none'}"

    def clean_html(n: int) -> str:
        p = pages.get(n)
        if p is None:
            return "<i>page not in the cleaned report</i>"
        head = f"<div class='k'>page {n} · ocr={p.ocr} · garbled {p.garbled_ratio:.1%} · {len(p.tables)} tables</div>"
        return _STYLE + f"<div class='rag-pv'>{head}<pre style='white-space:pre-wrap'>{html.escape(p.markdown)}</pre></div>"

    return _image_viewer(pdf_path, title, min(max(page, 1), last), last, scale, clean_html)
