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
- Memory: each report is converted in windows of ``cfg.parse.page_batch`` pages (docling's page_range);
  the docling side (both pipelines -> ParsedPage records) is :mod:`rag.parse_docling`.
"""
from __future__ import annotations

import importlib.util
import logging
import os
import resource
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import pandas as pd

from .artifacts import Stage, hash_key, write_json_atomic
from .config import ParseConfig, RunConfig
# page_metrics, standard_pages: re-exported, tests use them as rag.parse.<name>.
from .parse_docling import WINDOWS, ParseError, page_metrics, standard_pages  # noqa: F401
from .records import PageMetrics, ParsedPage, ParsedReport

# Bump when the parse output changes for the same PDF and config (invalidates every report).
CODE_VERSION = "parse-3"
STAGE = "01_parse"
# Knobs that change how fast, not what comes out: kept out of the currency key.
_EXECUTION_ONLY = ("workers", "parser_threads", "timeout_s", "page_batch", "device")
COLUMNS = ["sha1", "company", "pages", "tables", "seconds", "pipeline", "error"]

_LAYOUT_DIRS = ("docling-project--docling-layout-heron", "docling-project--docling-layout-old",
                "docling-project--docling-layout-heron-101", "ds4sd--docling-layout-old")
_TABLE_DIR = "docling-project--docling-models"

log = logging.getLogger(__name__)


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
        for p in WINDOWS[pipeline](pdf, first, min(n, first + pcfg.page_batch - 1), pcfg):
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
