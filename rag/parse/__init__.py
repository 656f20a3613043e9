"""Stage 01: PDF reports -> ``outputs/<run>/01_parse/<sha1>.json`` (:class:`rag.core.records.ParsedReport`).

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
  ``native`` = docling's model-free NativePdfPipeline, tables rebuilt from word cells (:mod:`rag.parse.tables`).
- Memory: each report is converted in windows of ``cfg.parse.page_batch`` pages (docling's page_range);
  the docling side (both pipelines -> ParsedPage records) is :mod:`rag.parse.docling_pages`.
"""
from __future__ import annotations

import logging
import resource
import time
from pathlib import Path

import pandas as pd

from ..core.artifacts import hash_key, read_json, run_dir_of, stage_dir

from ..core.stage import ItemState, Stage
from ..core.stage import item_state as _item_state
from ..core.config import ParseConfig, RunConfig
from ..core import deps, stages
from ..core.loop import Item, ItemError, Json, Result, failures, outcome_counts, run_items
from ..core.loop import executor as make_executor
# page_metrics, standard_pages: re-exported, tests use them as rag.parse.<name>.
# Which docling pipeline runs here (re-exported: rag.parse.weights_found ...).
from .setup_check import artifacts_dir, resolve_pipeline, standard_available, weights_found  # noqa: F401
from .docling_pages import WINDOWS, ParseError, page_metrics, standard_pages  # noqa: F401
from ..core.records import PageMetrics, ParsedPage, ParsedReport

# Bump when the parse output changes for the same PDF and config (invalidates every report).
CODE_VERSION = "parse-3"
STAGE = stages.name_of("parse")  # this package's folder, from the registry (rag.core.stages)
COLUMNS = ["sha1", "company", "pages", "tables", "seconds", "pipeline", "error"]

log = logging.getLogger(__name__)


def parse_key(cfg: RunConfig, sha1: str, pipeline: str) -> str:
    """Currency key of one report: the PDF's sha1, the parse config (rag.core.deps), pipeline, code."""
    return hash_key(sha1, deps.config_signature(cfg, STAGE), pipeline, CODE_VERSION)


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


def _parse_item(item: Item) -> Result:
    """Loop work (may run in a spawned process): parse one PDF; the driver writes the JSON."""
    pdf, pcfg, pipeline = item.payload
    try:
        rep = parse_pdf(pdf, item.id, pcfg, pipeline)
    except ParseError as e:
        raise ItemError(str(e)) from None
    except Exception as e:  # a bug or library error: say what the standard pipeline check found
        msg = f"{pdf}: {type(e).__name__}: {e}"
        if pipeline == "standard":  # most likely missing weights or torchvision: say what was looked for
            msg += f" [standard pipeline check: {standard_available(pcfg)[1]}]"
        raise ItemError(msg) from None
    info = {"pipeline": pipeline, "pages": rep.n_pages, "tables": sum(len(p.tables) for p in rep.pages),
            "seconds": rep.seconds, "empty_pages": [p.page for p in rep.pages if p.metrics.chars == 0],
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    return Result(files={report_file(item.id): Json(rep.model_dump(mode="json"), indent=None)}, info=info)


# ---- what later stages read (this module owns 01_parse/) ------------------------------------------------
def report_file(sha1: str) -> str:
    return f"{sha1}.json"


def report_path(cfg: RunConfig | Path | str, sha1: str) -> Path:
    """``01_parse/<sha1>.json`` of a run (a later stage's input); FileNotFoundError naming the folder when 01
    never ran (:func:`rag.core.artifacts.stage_dir`)."""
    return stage_dir(cfg, STAGE) / report_file(sha1)


def item_state(cfg: RunConfig | Path | str, sha1: str) -> ItemState:
    """State of report ``sha1`` in 01_parse (done + key, failed + reason, or missing)."""
    return _item_state(run_dir_of(cfg) / STAGE, sha1, (report_file(sha1),))


def load_parsed(cfg_or_path: RunConfig | Path | str, sha1: str | None = None) -> ParsedReport:
    """``01_parse/<sha1>.json`` as a :class:`ParsedReport` (``load_parsed(cfg or run dir, sha1)``; the
    file's path alone also works);
    a clear error naming the file when missing or invalid."""
    from pydantic import ValidationError

    path = Path(cfg_or_path) if sha1 is None else run_dir_of(cfg_or_path) / STAGE / report_file(sha1)
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run stage 01_parse first (or its parse failed)")
    data = read_json(path)  # ValueError naming the file on bad JSON
    try:
        return ParsedReport.model_validate(data)
    except ValidationError as e:
        first = "; ".join(f"{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in e.errors()[:3])
        raise ValueError(f"{path}: not a valid ParsedReport ({e.error_count()} problem(s): {first})") from None


# ---- stage entry point -------------------------------------------------------------------------------
def _standard_setup(cfg: RunConfig, why: str) -> tuple[str, str, ParseConfig]:
    """Before a standard-pipeline run: the setup check (torchvision imports, weights, CUDA when asked for).
    Configured "standard" refuses with one SetupError; "auto" falls back to native, saying why. The parse
    config the workers get carries the resolved device and the absolute weights folder."""
    from ..models.device import parse_device
    from ..core.errors import SetupError, setup_message as message
    from .setup_check import parse_problems

    found = parse_problems(cfg)
    if found and cfg.parse.pipeline == "auto":
        log.warning("parse.pipeline=auto: docling's full pipeline cannot run (%s); using the native one", "; ".join(found))
        return "native", "; ".join(found), cfg.parse
    if found:
        raise SetupError(message(found, cfg.preset))
    art = artifacts_dir(cfg.parse)
    return "standard", why, cfg.parse.model_copy(update={"device": parse_device(cfg),
                                                         "artifacts_path": str(art) if art else None})


def run_parse(cfg: RunConfig, ds, progress: bool = True) -> pd.DataFrame:
    """Parse every report of ``ds`` into ``01_parse/<sha1>.json``; one summary row per report."""
    stage = Stage(cfg, STAGE)
    pipeline, why = resolve_pipeline(cfg.parse)
    pcfg = cfg.parse
    if pipeline == "standard":
        pipeline, why, pcfg = _standard_setup(cfg, why)
    items = [Item(r.sha1, parse_key(cfg, r.sha1, pipeline), (report_file(r.sha1),), (str(r.pdf), pcfg, pipeline),
                  label=r.company, inputs=(str(r.pdf),)) for r in ds.reports]
    executor = make_executor("processes", cfg.parse.workers, cfg)
    outcomes = run_items(stage, items, _parse_item, executor=executor, progress=progress, unit="report")
    rows = []
    for r in ds.reports:
        o = outcomes[r.sha1]
        rows.append({"sha1": r.sha1, "company": r.company, "pages": o.info.get("pages", 0),
                     "tables": o.info.get("tables", 0), "seconds": o.seconds,
                     "pipeline": o.info.get("pipeline", pipeline), "error": o.error, "skipped": o.status == "current",
                     "peak_rss_mb": o.info.get("peak_rss_mb", 0)})
    df = pd.DataFrame(rows, columns=COLUMNS)
    failed = failures(outcomes)
    summary = {"pipeline": pipeline, "pipeline_reason": why, "failures": failed,
               "peak_rss_mb": max((x["peak_rss_mb"] for x in rows), default=0),
               "rows": df.to_dict(orient="records")}
    stage.write_json("report.json", summary)
    stage.finish(counts={"reports": len(ds.reports), "parsed": int((df.error == "").sum()), "failed": len(failed),
                         "skipped": outcome_counts(outcomes)["current"], "pages": int(df.pages.sum()),
                         "tables": int(df.tables.sum())},
                 inputs={r.sha1: str(r.pdf) for r in ds.reports}, item_ids=[i.id for i in items],
                 extra={"pipeline": pipeline, "pipeline_reason": why, "failures": failed})
    return df
