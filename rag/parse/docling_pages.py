"""Docling conversion of stage 01: one window of a PDF's pages -> :class:`rag.core.records.ParsedPage` list.

Contract:
- ``WINDOWS[pipeline](pdf, first, last, pcfg) -> list[ParsedPage]`` for the 1-based pages ``first..last``:
  ``native`` = docling's model-free NativePdfPipeline, tables rebuilt from word cells (:mod:`rag.parse.tables`)
  and text lines grouped into paragraph and heading blocks; ``standard`` = docling's StandardPdfPipeline
  (layout model + TableFormer, OCR off), its DoclingDocument mapped by ``standard_pages``.
- A docling converter is built once per process and option set.
- :class:`ParseError` (naming the file and the pages) when docling fails on a window or stops it at
  ``pcfg.timeout_s``.
- ``page_metrics(text)``: chars (non-space), words, garbled_ratio (glyph artefacts / chars, 0..1).
- Pages are 1-based physical pages; blocks are in reading order; bboxes are PDF points, top-left origin.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from . import tables as tb
from .render import to_html, to_markdown
from ..core.config import ParseConfig
from ..core.records import PageMetrics, ParsedPage, ParsedTable, TextBlock

# Glyph artefacts of PDFs whose fonts lack a text mapping.
_GARBLE = re.compile(r"/glyph<[^>]*>|\(cid:\d+\)|GLYPH<[^>]*>|/uni[0-9A-Fa-f]{4}|\ufffd|[\ue000-\uf8ff]")


class ParseError(RuntimeError):
    """A report that could not be parsed; the message names the file and the reason."""


# ---- metrics -------------------------------------------------------------------------------------
def page_metrics(text: str) -> PageMetrics:
    """chars (non-space), words, garbled_ratio = artefact characters / non-space characters (0..1)."""
    chars = sum(1 for c in text if not c.isspace())
    bad = sum(len(m.group(0)) for m in _GARBLE.finditer(text))
    return PageMetrics(chars=chars, words=len(text.split()), garbled_ratio=round(min(1.0, bad / chars), 4) if chars else 0.0)


def _table_record(page: int, n: int, rows: list[list[str]], header_rows: int, bbox, context: str,
                  block_index: int) -> ParsedTable:
    return ParsedTable(table_id=f"{page}-{n}", page=page, cells=rows, header_rows=header_rows,
                       markdown=to_markdown(rows, header_rows), html=to_html(rows, header_rows),
                       bbox=tuple(round(v, 2) for v in bbox) if bbox else None, context_above=context,
                       block_index=block_index)


def _page_record(page: int, width: float, height: float, blocks: list[TextBlock],
                 tables: list[ParsedTable]) -> ParsedPage:
    text = "\n".join([b.text for b in blocks] + [c for t in tables for r in t.cells for c in r])
    return ParsedPage(page=page, width=width, height=height, blocks=blocks, tables=tables,
                      metrics=page_metrics(text))


# ---- native (model-free) path ---------------------------------------------------------------------
def _native_page(page_no: int, parsed, width: float, height: float, pcfg: ParseConfig) -> ParsedPage:
    """One docling-parse SegmentedPdfPage -> ParsedPage with rebuilt tables and paragraph blocks."""
    def box(cell):
        bb = cell.rect.to_bounding_box()
        if bb.coord_origin.name != "TOPLEFT":
            bb = bb.to_top_left_origin(page_height=height)
        return bb.l, bb.t, bb.r, bb.b

    words = [tb.Word(c.text, *box(c)) for c in parsed.word_cells if c.text.strip()]
    rows = tb.group_rows(words, pcfg.row_tolerance_pt, pcfg.column_gap_pt, pcfg.number_gap_pt)
    found = tb.find_tables(rows, min_table_rows=pcfg.min_table_rows, max_row_gap_pt=pcfg.max_row_gap_pt,
                           column_gap_pt=pcfg.column_gap_pt, context_lines=pcfg.context_lines,
                           title_size_ratio=pcfg.heading_size_ratio,
                           period_header_skip_rows=pcfg.period_header_skip_rows)
    tboxes = [t.bbox for t in found]

    def in_table(l, t, r, b):
        yc, xc = (t + b) / 2, (l + r) / 2
        return any(bl - 1 <= xc <= br + 1 and bt - 1 <= yc <= bb_ + 1 for bl, bt, br, bb_ in tboxes)

    blocks: list[TextBlock] = []
    cur: list[tuple[str, tuple, str]] = []  # (text, bbox, font) of the lines of the open block

    def flush():
        if not cur:
            return
        text = " ".join(x[0] for x in cur)
        bbox = (min(x[1][0] for x in cur), cur[0][1][1], max(x[1][2] for x in cur), cur[-1][1][3])
        height = cur[0][1][3] - cur[0][1][1]
        big = "bold" in cur[0][2].lower() or height >= pcfg.heading_size_ratio * body_height
        heading = len(cur) == 1 and big and len(text) <= pcfg.heading_max_chars
        blocks.append(TextBlock(kind="heading" if heading else "text", text=text,
                                bbox=tuple(round(v, 2) for v in bbox)))
        cur.clear()

    # Body text height = median line height on the page (points); larger one-liners are headings.
    heights = sorted(c.rect.to_bounding_box().height for c in parsed.textline_cells if c.text.strip())
    body_height = heights[len(heights) // 2] if heights else 0.0
    for c in parsed.textline_cells:
        text = c.text.strip()
        if not text:
            continue
        bb = box(c)
        if in_table(*bb):
            continue
        if cur:
            pl, pt, pr, pb = cur[-1][1]
            gap = bb[1] - pb
            overlap = min(pr, bb[2]) - max(pl, bb[0]) > 0
            h0, h1 = pb - pt, bb[3] - bb[1]
            same_size = max(h0, h1) < pcfg.heading_size_ratio * max(min(h0, h1), 1e-6)
            if not (overlap and same_size and -h0 / 2 <= gap <= pcfg.paragraph_gap_ratio * h0):
                flush()
        cur.append((text, bb, getattr(c, "font_name", "") or ""))
    flush()
    out_tables = []
    for n, t in enumerate(found):
        before = sum(1 for b in blocks if b.bbox and b.bbox[1] < t.bbox[1])
        out_tables.append(_table_record(page_no, n, t.rows, t.header_rows, t.bbox, t.context_above, before))
    return _page_record(page_no, width, height, blocks, out_tables)


_CONVERTERS: dict[Any, Any] = {}


def _native_converter(pcfg: ParseConfig):
    key = ("native", pcfg.parser_threads, pcfg.timeout_s)
    if key not in _CONVERTERS:
        from docling.datamodel.base_models import InputFormat
        from docling.datamodel.pipeline_options import NativePdfPipelineOptions
        from docling.document_converter import DocumentConverter, NativePdfFormatOption

        # document_timeout: docling stops a window between pages once over it (checked in _convert).
        opts = NativePdfPipelineOptions(generate_page_images=False, generate_picture_images=False,
                                        parser_threads=pcfg.parser_threads, document_timeout=pcfg.timeout_s or None)
        _CONVERTERS[key] = DocumentConverter(format_options={InputFormat.PDF: NativePdfFormatOption(pipeline_options=opts)})
    return _CONVERTERS[key]


def _convert(conv, pdf: Path, first: int, last: int):
    res = conv.convert(str(pdf), page_range=(first, last), raises_on_error=False)
    timeouts = [e.error_message for e in res.errors if getattr(e.category, "name", "") == "TIMEOUT"]
    if timeouts:
        raise ParseError(f"{pdf}: timeout in pages {first}-{last}: {timeouts[0]}")
    if res.status.name == "FAILURE" or not res.pages:
        why = "; ".join(e.error_message for e in res.errors) or f"status {res.status.name}"
        raise ParseError(f"{pdf}: docling could not parse pages {first}-{last}: {why}")
    return res


def _native_window(pdf: Path, first: int, last: int, pcfg: ParseConfig) -> list[ParsedPage]:
    res = _convert(_native_converter(pcfg), pdf, first, last)
    return [_native_page(p.page_no, p.parsed_page, p.size.width, p.size.height, pcfg)
            for p in res.pages if p.parsed_page is not None and p.size is not None]


# ---- standard (layout + TableFormer) path -----------------------------------------------------------
_KINDS = {"title": "heading", "section_header": "heading", "caption": "caption", "list_item": "list_item",
          "page_header": "header", "page_footer": "footer", "text": "text", "paragraph": "text",
          "footnote": "text"}


def _standard_converter(pcfg: ParseConfig):
    key = ("standard", pcfg.artifacts_path, pcfg.device, pcfg.timeout_s)
    if key not in _CONVERTERS:
        from docling.datamodel.accelerator_options import AcceleratorOptions
        from docling.datamodel.base_models import InputFormat
        from docling.datamodel.pipeline_options import PdfPipelineOptions
        from docling.document_converter import DocumentConverter, PdfFormatOption

        # OCR off: garbled pages are re-read by the clean stage. run_parse hands over the resolved device
        # (rag.models.device.parse_device) and an absolute artifacts_path; None/"auto" = CUDA when torch sees it.
        opts = PdfPipelineOptions(do_table_structure=True, do_ocr=False, generate_page_images=False,
                                  artifacts_path=pcfg.artifacts_path,
                                  accelerator_options=AcceleratorOptions(device=pcfg.device or "auto"),
                                  document_timeout=pcfg.timeout_s or None)
        opts.table_structure_options.do_cell_matching = True
        _CONVERTERS[key] = DocumentConverter(format_options={InputFormat.PDF: PdfFormatOption(pipeline_options=opts)})
    return _CONVERTERS[key]


def standard_pages(doc, pcfg: ParseConfig) -> list[ParsedPage]:
    """A DoclingDocument (layout + TableFormer output) -> ParsedPages, items in docling's reading order."""
    from docling_core.types.doc import TableItem, TextItem

    acc: dict[int, dict[str, list]] = {}
    for item, _level in doc.iterate_items():
        if not getattr(item, "prov", None):
            continue
        prov = item.prov[0]
        page = acc.setdefault(prov.page_no, {"blocks": [], "tables": []})
        height = doc.pages[prov.page_no].size.height
        bb = prov.bbox.to_top_left_origin(page_height=height)
        bbox = (bb.l, bb.t, bb.r, bb.b)
        if isinstance(item, TableItem):
            grid = [[c.text for c in row] for row in item.data.grid]
            header_rows = 0
            while header_rows < len(grid) and any(c.column_header for c in item.data.grid[header_rows]):
                header_rows += 1
            above = [b.text for b in page["blocks"] if b.bbox and b.bbox[3] <= bb.t][-pcfg.context_lines:] \
                if pcfg.context_lines else []
            t = _table_record(prov.page_no, len(page["tables"]), grid, header_rows, bbox, "\n".join(above),
                              len(page["blocks"]))
            t = t.model_copy(update={"markdown": item.export_to_markdown(doc=doc),
                                     "html": item.export_to_html(doc=doc)})
            page["tables"].append(t)
        elif isinstance(item, TextItem) and item.text.strip():
            kind = _KINDS.get(str(getattr(item.label, "value", item.label)), "other")
            page["blocks"].append(TextBlock(kind=kind, text=item.text, bbox=tuple(round(v, 2) for v in bbox)))
    out = []
    for page_no in sorted(doc.pages):
        p = acc.get(page_no, {"blocks": [], "tables": []})
        size = doc.pages[page_no].size
        out.append(_page_record(page_no, size.width, size.height, p["blocks"], p["tables"]))
    return out


def _standard_window(pdf: Path, first: int, last: int, pcfg: ParseConfig) -> list[ParsedPage]:
    res = _convert(_standard_converter(pcfg), pdf, first, last)
    return [p for p in standard_pages(res.document, pcfg) if first <= p.page <= last]


# Pipeline name (``parse.pipeline`` once resolved) -> window function.
WINDOWS = {"native": _native_window, "standard": _standard_window}
