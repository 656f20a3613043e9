"""Stage 01: PDF reports -> ``outputs/<run>/01_parse/<sha1>.json`` (:class:`rag.records.ParsedReport`).

Contract:
- ``run_parse(cfg, ds, progress=True) -> DataFrame`` with one row per report: sha1, company, pages,
  tables, seconds, pipeline, error (``""`` when it parsed). A report that fails (corrupt, truncated,
  over ``cfg.parse.timeout_s``) is named with its reason in that row, in ``manifest.json``
  (``failures``) and in ``report.json``; the other reports still finish.
- Pages are 1-based physical pages; blocks are in reading order; bboxes are PDF points, top-left origin.
- Currency key per report = pdf sha1 + hash of the output-relevant parse knobs + the resolved pipeline
  + :data:`CODE_VERSION`: unchanged reports are skipped, a killed run resumes with the unfinished ones.
- Pipelines: ``standard`` = docling's StandardPdfPipeline (layout model + TableFormer) when its weights
  are found locally (``pipeline="auto"`` checks folders only, never the network); otherwise
  ``native`` = docling's model-free NativePdfPipeline, tables rebuilt from word cells (:mod:`rag.tables`).
- Memory: each report is converted in windows of ``cfg.parse.page_batch`` pages (docling's page_range).
"""
from __future__ import annotations

import importlib.util
import logging
import os
import re
import resource
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import pandas as pd

from . import tables as tb
from .artifacts import Stage, hash_key, write_json_atomic
from .config import ParseConfig, RunConfig
from .records import PageMetrics, ParsedPage, ParsedReport, ParsedTable, TextBlock

# Bump when the parse output changes for the same PDF and config (invalidates every report).
CODE_VERSION = "parse-3"
STAGE = "01_parse"
# Knobs that change how fast, not what comes out: kept out of the currency key.
_EXECUTION_ONLY = ("workers", "parser_threads", "timeout_s", "page_batch", "device")
COLUMNS = ["sha1", "company", "pages", "tables", "seconds", "pipeline", "error"]

# Glyph artefacts of PDFs whose fonts lack a text mapping.
_GARBLE = re.compile(r"/glyph<[^>]*>|\(cid:\d+\)|GLYPH<[^>]*>|/uni[0-9A-Fa-f]{4}|\ufffd|[\ue000-\uf8ff]")
_LAYOUT_DIRS = ("docling-project--docling-layout-heron", "docling-project--docling-layout-old",
                "docling-project--docling-layout-heron-101", "ds4sd--docling-layout-old")
_TABLE_DIR = "docling-project--docling-models"

log = logging.getLogger(__name__)


class ParseError(RuntimeError):
    """A report that could not be parsed; the message names the file and the reason."""


# ---- pipeline choice ---------------------------------------------------------------------------
def _weight_dirs(pcfg: ParseConfig) -> list[Path]:
    if pcfg.artifacts_path:
        return [Path(pcfg.artifacts_path).expanduser()]
    home = Path.home()
    hf_home = Path(os.environ.get("HF_HOME", home / ".cache" / "huggingface"))
    hub = Path(os.environ.get("HF_HUB_CACHE", hf_home / "hub"))
    return [Path(os.environ.get("DOCLING_CACHE_DIR", home / ".cache" / "docling")) / "models", hub]


def standard_available(pcfg: ParseConfig) -> tuple[bool, str]:
    """Cheap local check (folders and importability only, no network) for the full pipeline."""
    if importlib.util.find_spec("torchvision") is None:
        return False, "torchvision is not installed (TableFormer needs it)"
    for d in _weight_dirs(pcfg):
        names = {p.name.removeprefix("models--") for p in d.iterdir()} if d.is_dir() else set()
        if _TABLE_DIR in names and names.intersection(_LAYOUT_DIRS):
            return True, f"weights in {d}"
    return False, f"no docling layout + TableFormer weights in {', '.join(map(str, _weight_dirs(pcfg)))}"


def resolve_pipeline(pcfg: ParseConfig) -> tuple[str, str]:
    """``(pipeline, why)``: ``"standard"`` or ``"native"`` for ``pcfg.pipeline`` (auto decides here)."""
    if pcfg.pipeline != "auto":
        return pcfg.pipeline, "configured"
    ok, why = standard_available(pcfg)
    return ("standard" if ok else "native"), why


def parse_key(cfg: RunConfig, sha1: str, pipeline: str) -> str:
    knobs = {k: v for k, v in cfg.parse.model_dump(mode="json").items() if k not in _EXECUTION_ONLY}
    return hash_key(sha1, knobs, pipeline, CODE_VERSION)


# ---- metrics -------------------------------------------------------------------------------------
def page_metrics(text: str) -> PageMetrics:
    """chars (non-space), words, garbled_ratio = artefact characters / non-space characters (0..1)."""
    chars = sum(1 for c in text if not c.isspace())
    bad = sum(len(m.group(0)) for m in _GARBLE.finditer(text))
    return PageMetrics(chars=chars, words=len(text.split()), garbled_ratio=round(min(1.0, bad / chars), 4) if chars else 0.0)


def _table_record(page: int, n: int, rows: list[list[str]], header_rows: int, bbox, context: str,
                  block_index: int) -> ParsedTable:
    return ParsedTable(table_id=f"{page}-{n}", page=page, cells=rows, header_rows=header_rows,
                       markdown=tb.to_markdown(rows, header_rows), html=tb.to_html(rows, header_rows),
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

        # OCR off: garbled pages are re-read by the clean stage; "auto" device = CUDA when torch sees it.
        opts = PdfPipelineOptions(do_table_structure=True, do_ocr=False, generate_page_images=False,
                                  artifacts_path=pcfg.artifacts_path,
                                  accelerator_options=AcceleratorOptions(device=pcfg.device),
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


_WINDOWS = {"native": _native_window, "standard": _standard_window}


# ---- one report ------------------------------------------------------------------------------------
def count_pages(pdf: Path) -> int:
    """Page count via pdfium (opens empty-password encrypted files); ParseError when unreadable."""
    import pypdfium2 as pdfium

    if not pdf.exists():
        raise ParseError(f"{pdf}: file not found")
    try:
        doc = pdfium.PdfDocument(str(pdf))
    except Exception as e:  # pdfium raises PdfiumError with the reason (format, password…)
        raise ParseError(f"{pdf}: not a readable PDF ({e})") from None
    try:
        return len(doc)
    finally:
        doc.close()


def parse_pdf(pdf: Path | str, sha1: str, pcfg: ParseConfig, pipeline: str) -> ParsedReport:
    """Parse one PDF window by window (``pcfg.page_batch`` pages each); ParseError on failure."""
    pdf = Path(pdf)
    t0 = time.perf_counter()
    n = count_pages(pdf)
    if n == 0:
        raise ParseError(f"{pdf}: the PDF has no pages")
    pages: dict[int, ParsedPage] = {}
    for first in range(1, n + 1, pcfg.page_batch):
        if pcfg.timeout_s and time.perf_counter() - t0 > pcfg.timeout_s:
            raise ParseError(f"{pdf}: timeout: over {pcfg.timeout_s:g}s after {first - 1} of {n} pages")
        for p in _WINDOWS[pipeline](pdf, first, min(n, first + pcfg.page_batch - 1), pcfg):
            pages[p.page] = p
    # Pages docling could not read stay in the report, empty, so numbering is never shifted.
    full = [pages.get(i) or ParsedPage(page=i, metrics=PageMetrics(chars=0, garbled_ratio=0.0)) for i in range(1, n + 1)]
    return ParsedReport(sha1=sha1, pdf=str(pdf), pipeline=pipeline, n_pages=n,
                        seconds=round(time.perf_counter() - t0, 3), pages=full)


def _worker(pdf: str, sha1: str, pcfg: ParseConfig, pipeline: str, out: str) -> dict[str, Any]:
    """Process-pool task: parse, write the JSON (atomic), return a small summary (never raises)."""
    t0 = time.perf_counter()
    info: dict[str, Any] = {"sha1": sha1, "pipeline": pipeline, "pages": 0, "tables": 0, "error": ""}
    try:
        rep = parse_pdf(pdf, sha1, pcfg, pipeline)
        write_json_atomic(out, rep.model_dump(mode="json"), indent=None)
        info.update(pages=rep.n_pages, tables=sum(len(p.tables) for p in rep.pages),
                    empty_pages=[p.page for p in rep.pages if p.metrics.chars == 0])
    except ParseError as e:
        info["error"] = str(e)
    except Exception as e:  # a bug or library error on one report must not stop the others
        info["error"] = f"{pdf}: {type(e).__name__}: {e}"
        if pipeline == "standard":  # most likely missing weights or torchvision: say what was looked for
            info["error"] += f" [standard pipeline check: {standard_available(pcfg)[1]}]"
    info["seconds"] = round(time.perf_counter() - t0, 3)
    info["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return info


# ---- stage entry point -------------------------------------------------------------------------------
def run_parse(cfg: RunConfig, ds, progress: bool = True) -> pd.DataFrame:
    """Parse every report of ``ds`` into ``01_parse/<sha1>.json``; one summary row per report."""
    stage = Stage(cfg, STAGE)
    pipeline, why = resolve_pipeline(cfg.parse)
    companies = {r.sha1: r.company for r in ds.reports}
    rows: dict[str, dict[str, Any]] = {}
    todo = []
    for r in ds.reports:
        key = parse_key(cfg, r.sha1, pipeline)
        if stage.is_current(r.sha1, key, f"{r.sha1}.json"):
            old = stage.item_info(r.sha1)
            rows[r.sha1] = {"sha1": r.sha1, "pipeline": old.get("pipeline", pipeline), "pages": old.get("pages", 0),
                            "tables": old.get("tables", 0), "seconds": 0.0, "error": "", "skipped": True}
        else:
            todo.append((r, key))

    def done(r, key, info):
        rows[r.sha1] = info
        if not info["error"]:
            stage.mark_done(r.sha1, key, pipeline=info["pipeline"], pages=info["pages"], tables=info["tables"],
                            seconds=info["seconds"], empty_pages=info.get("empty_pages", []))

    bar = None
    if progress and todo:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(todo), desc="parse", unit="report")
    jobs = [(str(r.pdf), r.sha1, cfg.parse, pipeline, str(stage.path(f"{r.sha1}.json"))) for r, _ in todo]
    if cfg.parse.workers <= 1 or len(todo) <= 1:
        for (r, key), job in zip(todo, jobs):
            done(r, key, _worker(*job))
            bar and bar.update(1)
    else:
        import multiprocessing as mp

        # spawn: workers import docling themselves, no torch/thread state inherited from a notebook.
        with ProcessPoolExecutor(max_workers=min(cfg.parse.workers, len(todo)), mp_context=mp.get_context("spawn")) as ex:
            futs = {ex.submit(_worker, *job): rk for rk, job in zip(todo, jobs)}
            for f in as_completed(futs):
                r, key = futs[f]
                try:
                    info = f.result()
                except Exception as e:  # the worker process died (killed, out of memory)
                    info = {"sha1": r.sha1, "pipeline": pipeline, "pages": 0, "tables": 0, "seconds": 0.0,
                            "error": f"{r.pdf}: worker died: {type(e).__name__}: {e}"}
                done(r, key, info)
                bar and bar.update(1)
    if bar:
        bar.close()
    df = pd.DataFrame([{**{c: rows[r.sha1].get(c) for c in COLUMNS}, "company": companies[r.sha1]}
                       for r in ds.reports], columns=COLUMNS)
    failures = {s: i["error"] for s, i in rows.items() if i["error"]}
    summary = {"pipeline": pipeline, "pipeline_reason": why, "failures": failures,
               "peak_rss_mb": max((i.get("peak_rss_mb", 0) for i in rows.values()), default=0),
               "rows": df.to_dict(orient="records")}
    stage.write_json("report.json", summary)
    stage.finish(counts={"reports": len(ds.reports), "parsed": int((df.error == "").sum()), "failed": len(failures),
                     "skipped": sum(1 for i in rows.values() if i.get("skipped")), "pages": int(df.pages.sum()),
                     "tables": int(df.tables.sum())},
                 inputs={r.sha1: str(r.pdf) for r in ds.reports},
                 extra={"pipeline": pipeline, "pipeline_reason": why, "failures": failures})
    return df
