"""Stage 02: parsed reports -> ``outputs/<run>/02_clean/<sha1>.json`` (:class:`rag.core.records.CleanReport`).

Contract:
- ``run_clean(cfg, ds, progress=True) -> DataFrame``: one row per report (columns ``COLUMNS``): pages,
  tables, tables_with_unit, garbled_pages, textless_pages, ocr_pages (pages re-read by OCR),
  shifted_pages, ocr_skipped (left unread at ``cfg.clean.ocr_max_pages`` pages or ``ocr_budget_s`` seconds),
  removed_blocks (headers/footers/page numbers), serialized_tables, seconds, ocr_seconds, skipped, error; the
  item records also hold ocr_budget_s, ocr_max_pages and ocr_stopped_by ("pages", "seconds" or ""), and the
  manifest counts the reports whose OCR the seconds stopped (``ocr_stopped_by_seconds``). Reads 01's reports through
  ``rag.parse.load_parsed``; a report whose parse failed is blocked (its reason in ``error``), one whose
  parse output is missing or invalid gets an ``error`` naming the file; the others still finish.
- Owner of ``02_clean/``: ``load_clean(cfg, sha1)``, ``page_texts(cfg, sha1)`` and ``item_state(cfg, sha1)``
  (:mod:`rag.clean.store`, re-exported here) are how every other module reads it.
- Currency key per report = 01's key for the report + the clean config (:mod:`rag.core.deps`: minus
  speed-only knobs, + llm when tables are serialized) + company + dataset currency + :data:`CODE_VERSION`:
  unchanged reports are skipped, a killed run resumes with the unfinished ones.
- Page Markdown (``CleanPage.markdown``) in reading order: headings as ``# `` lines, text blocks as
  paragraphs, list items as ``- `` lines, each table at its ``block_index`` as ``CleanTable.markdown``
  (first line ``Table: <title> — values in <scale> of <currency>``, see :mod:`rag.clean.units`, then the
  grid rebuilt from the cleaned cells). Parser-labelled page headers/footers are dropped.
- Text cleanup is pure functions in :mod:`rag.clean.text` (``clean_text``, ``normalize_glyphs``,
  ``fix_broken_words``, ``garbled_ratio``, ``repeated_edge_keys``…) tested on real glyph samples; tables
  (title, unit line, LLM serialization) are :mod:`rag.clean.tables`. This module assembles the pages.
- A page is re-read with OCR (:mod:`rag.clean.ocr`) when its garbled ratio (max of the parse metric and
  ``garbled_ratio`` of its raw text) exceeds ``cfg.clean.garbled_threshold``, or when it has at most
  ``textless_max_chars`` characters and its image is not blank, or when its letters are "shifted" (a-z
  histogram unlike English: ``letter_similarity`` below ``shifted_threshold``, a text layer that decodes
  to substituted letters); most garbled first, then shifted (least English-like first), then text-less
  pages in page order, up to ``ocr_max_pages`` pages per report (a count: the same pages on every machine;
  ``ocr_budget_s`` seconds is a safety valve behind it). Pages are 1-based.
"""
from __future__ import annotations

import time
from collections import Counter
from typing import Any

import pandas as pd

from . import units
from ..core.artifacts import hash_key
from ..core.stage import Stage
from .tables import clean_table, serialize_tables
# The text helpers stay importable as ``rag.clean.<name>`` (tests and benchmarks use them so).
from .text import (build_vocab, clean_text, drop_indices, edge_indices, edge_key, fix_broken_words,  # noqa: F401
                         garbled_ratio, is_page_number, normalize_glyphs, normalize_whitespace, repeated_edge_keys)
from .shifted import letter_similarity, unshift_pages
from ..core.config import RunConfig
from ..core import deps
from ..core.loop import Item, Json, Result, failures, run_items, upstream_block
from ..core.loop import executor as make_executor
from ..core.usage import ItemUsage
from ..parse import load_parsed  # noqa: F401 - also re-exported for benchmarks
from ..core.records import CleanPage, CleanReport, CleanTable, ParsedPage, ParsedReport, ParsedTable
# 02_clean/ as every other module reads it (re-exported: ``rag.clean.load_clean`` ...).
from .store import STAGE, clear_page_cache, item_state, load_clean, page_texts, report_file, report_path  # noqa: F401

# Bump when the clean output changes for the same input and config (invalidates every report).
CODE_VERSION = "clean-4"  # 2: shifted-letter pages to OCR, OCR time budget; 3: unshift pages OCR did not read; 4: the report's dollar from its presentation statement or place of filing before counted mentions
REPEATED_KEYS_KEPT = 50  # repeated header/footer keys kept in an item's details (the rest only counted)
COLUMNS = ["sha1", "company", "pages", "tables", "tables_with_unit", "garbled_pages", "shifted_pages", "textless_pages",
           "ocr_pages", "ocr_skipped", "removed_blocks", "serialized_tables", "seconds", "ocr_seconds",
           "skipped", "error"]

# ---- pages -------------------------------------------------------------------------------------------------
def raw_page_text(p: ParsedPage) -> str:
    return "\n".join([b.text for b in p.blocks] + [c for t in p.tables for r in t.cells for c in r])


def page_markdown(p: ParsedPage, vocab: Counter, drop: set[int], heading: str, dollar: str, cfg: RunConfig,
                  skip: set[str] = frozenset(), carry: CleanTable | None = None,
                  cleaned: list[str] | None = None) -> tuple[str, list[CleanTable], str]:
    """Markdown of one parsed page (blocks in ``drop`` left out) -> (markdown, tables, heading after).
    ``carry`` (the previous page's last table) goes to a table printed before any text of this page;
    ``cleaned``: the blocks' texts already passed through ``clean_text`` (computed here when None)."""
    cleaned = cleaned if cleaned is not None else [clean_text(b.text, vocab) for b in p.blocks]
    blocks = [(i, b, txt) for i, (b, txt) in enumerate(zip(p.blocks, cleaned))]
    keep = [(i, b, txt) for i, b, txt in blocks if i not in drop and txt and b.kind not in ("header", "footer")]
    short = [(i, txt) for i, _, txt in keep if len(txt) <= cfg.clean.unit_line_max_chars]
    parts: list[str] = []
    out_tables: list[CleanTable] = []
    by_index: dict[int, list[ParsedTable]] = {}
    for t in p.tables:
        by_index.setdefault(min(t.block_index, len(p.blocks)), []).append(t)
    kinds = {i: b.kind for i, b in enumerate(p.blocks)}
    texts = {i: txt for i, _, txt in blocks}
    kept = {i for i, _, _ in keep}
    for i in range(len(p.blocks) + 1):
        for t in by_index.get(i, []):
            caption = next((texts[j] for j in (i - 1, i) if kinds.get(j) == "caption" and texts.get(j)), "")
            near = [txt for _, txt in sorted(short, key=lambda x: (x[0] >= i, abs(x[0] - i)))]
            opens_page = not parts
            ct = clean_table(t, vocab, caption=caption, heading=heading, page_lines=near, dollar=dollar, cfg=cfg,
                             skip=skip, carry=carry if opens_page else None)
            out_tables.append(ct)
            parts.append(ct.markdown)
        if i < len(p.blocks) and i in kept:
            b, txt = p.blocks[i], texts[i]
            if b.kind == "heading":
                heading = txt.replace("\n", " ")
                parts.append("# " + heading)
            elif b.kind == "list_item" and not txt.startswith("- "):
                parts.append("- " + txt)
            else:
                parts.append(txt)
    return "\n\n".join(parts), out_tables, heading


# ---- one report ---------------------------------------------------------------------------------------------
def _ocr_plan(parsed: ParsedReport, cfg: RunConfig) -> tuple[dict[int, float], list[int], list[int], list[int]]:
    """(garbled ratio per page, garbled pages most garbled first, shifted pages least English-like first,
    text-less pages in page order). A page is in at most one list (garbled > shifted > text-less)."""
    c = cfg.clean
    texts = {p.page: raw_page_text(p) for p in parsed.pages}
    ratios = {p.page: max(p.metrics.garbled_ratio, garbled_ratio(texts[p.page])) for p in parsed.pages}
    garbled = sorted((p.page for p in parsed.pages if ratios[p.page] > c.garbled_threshold),
                     key=lambda n: (-ratios[n], n))
    similarity = {} if c.shifted_threshold <= 0 else {
        p.page: letter_similarity(texts[p.page], c.shifted_min_letters) for p in parsed.pages if p.page not in garbled}
    shifted = sorted((n for n, sim in similarity.items() if sim is not None and sim < c.shifted_threshold),
                     key=lambda n: (similarity[n], n))
    textless = [p.page for p in parsed.pages
                if p.metrics.chars <= c.textless_max_chars and p.page not in garbled and p.page not in shifted]
    return ratios, garbled, shifted, textless


def _clock() -> float:
    """Seconds for the OCR budget (a function so tests can drive the budget without real OCR time)."""
    return time.perf_counter()


def _no_ocr(cfg: RunConfig) -> dict[str, Any]:
    """The OCR fields of a report's info before (or without) any OCR: what ``_ocr_pages`` fills in."""
    c = cfg.clean
    return {"ocr_seconds": 0.0, "ocr_errors": [], "blank_pages": [], "ocr_skipped": 0,
            "ocr_budget_s": c.ocr_budget_s, "ocr_max_pages": c.ocr_max_pages, "ocr_stopped_by": ""}


def _ocr_pages(pdf: str, candidates: list[int], cfg: RunConfig, vocab: Counter) -> tuple[dict[int, str], dict[str, Any]]:
    """OCR ``candidates`` in order (:func:`rag.clean.ocr.read_pages`): at most ``ocr_max_pages`` pages read
    (0: no cap; blank images, found by their render, are not read and not counted), and none started after
    ``ocr_budget_s`` seconds of OCR (the page that crosses it is finished). ``ocr_skipped`` counts the candidates
    left unread; ``ocr_stopped_by`` says which limit stopped OCR ("pages", "seconds" or "" when every
    candidate was tried): "seconds" means the pages read depend on this machine's speed."""
    from .ocr import read_pages

    c = cfg.clean
    r = read_pages(pdf, candidates, max_pages=c.ocr_max_pages, budget_s=c.ocr_budget_s, clock=_clock,
                   blank_ink_share=c.blank_ink_share, scale=c.ocr_scale, threads=c.ocr_threads,
                   min_score=c.ocr_min_score, row_tolerance=c.ocr_row_tolerance)
    info = {**_no_ocr(cfg), "ocr_seconds": r.seconds, "ocr_errors": r.errors, "blank_pages": r.blank,
            "ocr_skipped": r.skipped, "ocr_stopped_by": r.stopped_by}
    return {page: clean_text(text, vocab) for page, text in r.texts.items()}, info


def clean_report(parsed: ParsedReport, company: str, cfg: RunConfig, pdf: str | None = None,
                 report_currency: str = "") -> tuple[CleanReport, dict[str, Any]]:
    """One ParsedReport -> CleanReport (+ counts for the summary row). OCR reads ``pdf`` (default:
    the path the parser recorded)."""
    raw = [raw_page_text(p) for p in parsed.pages]
    vocab = build_vocab(raw)
    ratios, garbled, shifted, textless = _ocr_plan(parsed, cfg)
    ocr_text: dict[int, str] = {}
    info: dict[str, Any] = {"garbled_pages": garbled, "shifted_pages": shifted, "textless_pages": textless,
                            **_no_ocr(cfg)}
    if cfg.clean.ocr and (garbled or shifted or textless):
        ocr_text, ocr_info = _ocr_pages(pdf or parsed.pdf, garbled + shifted + textless, cfg, vocab)
        info.update(ocr_info)
    unshifted: list[int] = []
    if cfg.clean.unshift and shifted:  # garbled pages of such a report are often shifted text too
        parsed, unshifted = unshift_pages(parsed, [n for n in garbled + shifted if n not in ocr_text], cfg)
        raw = [raw_page_text(p) for p in parsed.pages]
        vocab = build_vocab(raw)
    info["unshifted_pages"] = unshifted
    default_dollar = report_currency.upper() if report_currency.upper() in ("USD", "AUD", "CAD", "NZD", "HKD", "SGD") else "USD"
    # OCR'd pages count with their OCR text (a report whose text layer is garbled says its dollar there)
    dollar = units.dollar_currency([ocr_text.get(p.page, t) for p, t in zip(parsed.pages, raw)], default=default_dollar)
    # Headers/footers: blocks (parser labels aside) at the page edges repeated on many pages.
    c = cfg.clean
    edge_texts = [[clean_text(b.text, vocab) for b in p.blocks] for p in parsed.pages]
    edges = [edge_indices(p, c.edge_lines, c.edge_zone) for p in parsed.pages]
    keys = repeated_edge_keys([[t[i] for i in e] for t, e in zip(edge_texts, edges)], c.repeated_line_share,
                              c.repeated_min_pages, c.edge_line_max_chars)
    pages: list[CleanPage] = []
    heading = ""
    removed = 0
    carry: CleanTable | None = None
    for p, texts, edge in zip(parsed.pages, edge_texts, edges):
        if p.page in ocr_text:
            pages.append(CleanPage(page=p.page, markdown=ocr_text[p.page], ocr=True, garbled_ratio=ratios[p.page]))
            carry = None
            continue
        drop = drop_indices(texts, edge, keys)
        removed += len(drop) + sum(1 for i, b in enumerate(p.blocks) if b.kind in ("header", "footer") and i not in drop)
        md, tabs, heading = page_markdown(p, vocab, drop, heading, dollar, cfg, keys, carry, texts)
        carry = tabs[-1] if tabs else None
        pages.append(CleanPage(page=p.page, markdown=md, tables=tabs, garbled_ratio=ratios[p.page]))
    report = CleanReport(sha1=parsed.sha1, company=company, pages=pages, ocr_pages=sorted(ocr_text))
    tables = [t for pg in pages for t in pg.tables]
    info.update(removed_blocks=removed, dollar=dollar, repeated_keys=sorted(keys), tables=len(tables),
                tables_with_unit=sum(1 for t in tables if t.scale is not None or t.currency is not None))
    return report, info


def clean_key(cfg: RunConfig, parse_key: str, company: str, currency: str) -> str:
    """Currency key of one report: 01's key for it, the clean config (+ llm when tables are serialized,
    see rag.core.deps), company, dataset currency, code version."""
    return hash_key(parse_key, deps.config_signature(cfg, STAGE), company, currency, CODE_VERSION)


# ---- stage entry point -----------------------------------------------------------------------------------------
def _clean_item(item: Item) -> Result:
    """Loop work (may run in a spawned worker process: module-level, its config in the payload): clean one
    report; the driver writes the JSON."""
    cfg, r = item.payload
    parsed = load_parsed(cfg, r.sha1)
    report, info = clean_report(parsed, r.company, cfg, pdf=str(r.pdf), report_currency=r.currency)
    usage = ItemUsage()
    if cfg.clean.serialize_tables:
        u = serialize_tables(report, cfg)
        usage = ItemUsage(prompt_tokens=u["prompt_tokens"], completion_tokens=u["completion_tokens"])
        info.update(serialized_tables=u["serialized_tables"], serialize_failed=u["serialize_failed"])
    counts = dict(pages=len(report.pages), tables=info["tables"], tables_with_unit=info["tables_with_unit"],
                  garbled_pages=len(info["garbled_pages"]), shifted_pages=len(info["shifted_pages"]),
                  unshifted_pages=len(info["unshifted_pages"]),
                  textless_pages=len(info["textless_pages"]),
                  ocr_pages=len(report.ocr_pages), ocr_skipped=info["ocr_skipped"],
                  removed_blocks=info["removed_blocks"], serialized_tables=info.get("serialized_tables", 0),
                  ocr_seconds=info["ocr_seconds"], ocr_budget_s=info["ocr_budget_s"],
                  ocr_max_pages=info["ocr_max_pages"], ocr_stopped_by=info["ocr_stopped_by"])
    details = dict(ocr_page_list=report.ocr_pages, garbled_page_list=info["garbled_pages"],
                   shifted_page_list=info["shifted_pages"], unshifted_page_list=info["unshifted_pages"],
                   blank_pages=info["blank_pages"], ocr_errors=info["ocr_errors"], dollar=info["dollar"],
                   repeated_keys=info["repeated_keys"][:REPEATED_KEYS_KEPT])
    return Result(files={report_file(r.sha1): Json(report.model_dump(mode="json"), indent=None)},
                  info={**counts, **details}, usage=usage)


# ---- stage entry point -----------------------------------------------------------------------------------------
def run_clean(cfg: RunConfig, ds, progress: bool = True) -> pd.DataFrame:
    """Clean every report of ``ds`` into ``02_clean/<sha1>.json``; one summary row per report. A report
    that failed in 01 is carried as blocked (its reason in the row and the manifest)."""
    from .. import parse

    stage = Stage(cfg, STAGE)
    items = []
    for r in ds.reports:
        up = parse.item_state(cfg, r.sha1)
        items.append(Item(r.sha1, clean_key(cfg, up.key, r.company, r.currency), (report_file(r.sha1),), (cfg, r),
                          blocked=upstream_block(parse.STAGE, up), label=r.company,
                          inputs=(str(parse.report_path(cfg, r.sha1)), str(r.pdf))))
    # Reports in worker processes (OCR and the page passes are CPU-bound); serial when tables are serialized
    # by the LLM (one client, one rate limit, a managed server in this process).
    parallel = cfg.clean.workers > 1 and not cfg.clean.serialize_tables
    executor = make_executor("processes" if parallel else "serial", cfg.clean.workers if parallel else 1, cfg)
    outcomes = run_items(stage, items, _clean_item, executor=executor, progress=progress, unit="report")
    rows = []
    for r in ds.reports:
        o = outcomes[r.sha1]
        row: dict[str, Any] = {c: 0 for c in COLUMNS}
        row.update({c: o.info[c] for c in COLUMNS if c in o.info})
        row.update(sha1=r.sha1, company=r.company, skipped=o.status == "current", error=o.error, seconds=o.seconds)
        rows.append(row)
    df = pd.DataFrame(rows, columns=COLUMNS)
    failed = failures(outcomes)
    stage.finish(counts={"reports": len(rows), "cleaned": int((df.error == "").sum()), "failed": len(failed),
                         "skipped": int(df.skipped.sum()), "pages": int(df.pages.sum()), "tables": int(df.tables.sum()),
                         "ocr_pages": int(df.ocr_pages.sum()), "garbled_pages": int(df.garbled_pages.sum()),
                         # reports whose OCR stopped on seconds, not pages: their 02 depends on the machine
                         "ocr_stopped_by_seconds": sum(o.info.get("ocr_stopped_by") == "seconds"
                                                       for o in outcomes.values())},
                 inputs={r.sha1: parse.report_file(r.sha1) for r in ds.reports}, item_ids=[i.id for i in items],
                 extra={"failures": failed})
    return df
