"""Stage 02: parsed reports -> ``outputs/<run>/02_clean/<sha1>.json`` (:class:`rag.records.CleanReport`).

Contract:
- ``run_clean(cfg, ds, progress=True) -> DataFrame``: one row per report (columns ``COLUMNS``): pages,
  tables, tables_with_unit, garbled_pages, textless_pages, ocr_pages (pages re-read by OCR),
  ocr_skipped (over ``cfg.clean.ocr_max_pages``), removed_blocks (headers/footers/page numbers),
  serialized_tables, seconds, ocr_seconds, skipped, error. Reads ``01_parse/<sha1>.json``; a report
  whose parse output is missing or invalid gets an ``error`` naming the file, the others still finish.
- Currency key per report = sha256 of ``01_parse/<sha1>.json`` + the clean config (minus speed-only
  knobs) + company + dataset currency + :data:`CODE_VERSION` (+ the llm section when tables are
  serialized): unchanged reports are skipped, a killed run resumes with the unfinished ones.
- Page Markdown (``CleanPage.markdown``) in reading order: headings as ``# `` lines, text blocks as
  paragraphs, list items as ``- `` lines, each table at its ``block_index`` as ``CleanTable.markdown``
  (first line ``Table: <title> — values in <scale> of <currency>``, see :mod:`rag.units`, then the
  grid rebuilt from the cleaned cells). Parser-labelled page headers/footers are dropped.
- Text cleanup is pure functions in :mod:`rag.clean_text` (``clean_text``, ``normalize_glyphs``,
  ``fix_broken_words``, ``garbled_ratio``, ``repeated_edge_keys``…) tested on real glyph samples; tables
  (title, unit line, LLM serialization) are :mod:`rag.clean_tables`. This module assembles the pages.
- A page is re-read with OCR (:mod:`rag.ocr`) when its garbled ratio (max of the parse metric and
  ``garbled_ratio`` of its raw text) exceeds ``cfg.clean.garbled_threshold``, or when it has at most
  ``textless_max_chars`` characters and its image is not blank; most garbled first, then text-less
  pages in page order, at most ``ocr_max_pages`` per report. Pages are 1-based physical pages.
"""
from __future__ import annotations

import time
from collections import Counter
from typing import Any

import pandas as pd

from . import units
from .artifacts import Stage, file_sha256, hash_key, read_json
from .clean_tables import clean_table, serialize_tables
# The text helpers stay importable as ``rag.clean.<name>`` (tests and benchmarks use them so).
from .clean_text import (build_vocab, clean_text, drop_indices, edge_indices, edge_key, fix_broken_words,  # noqa: F401
                         garbled_ratio, is_page_number, normalize_glyphs, normalize_whitespace, repeated_edge_keys)
from .config import RunConfig
from .records import CleanPage, CleanReport, CleanTable, ParsedPage, ParsedReport, ParsedTable

# Bump when the clean output changes for the same input and config (invalidates every report).
CODE_VERSION = "clean-1"
STAGE = "02_clean"
# Knobs that change how fast, not what comes out: kept out of the currency key.
_EXECUTION_ONLY = ("ocr_threads",)
COLUMNS = ["sha1", "company", "pages", "tables", "tables_with_unit", "garbled_pages", "textless_pages",
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
def _ocr_plan(parsed: ParsedReport, cfg: RunConfig) -> tuple[dict[int, float], list[int], list[int]]:
    """(garbled ratio per page, garbled pages most garbled first, text-less pages in page order)."""
    ratios = {p.page: max(p.metrics.garbled_ratio, garbled_ratio(raw_page_text(p))) for p in parsed.pages}
    garbled = sorted((p.page for p in parsed.pages if ratios[p.page] > cfg.clean.garbled_threshold),
                     key=lambda n: (-ratios[n], n))
    textless = [p.page for p in parsed.pages
                if p.metrics.chars <= cfg.clean.textless_max_chars and p.page not in garbled]
    return ratios, garbled, textless


def _ocr_pages(pdf: str, candidates: list[int], cfg: RunConfig, vocab: Counter) -> tuple[dict[int, str], dict[str, Any]]:
    """OCR ``candidates`` in order until ``ocr_max_pages`` pages were read (blank images do not count)."""
    from .ocr import OcrError, ocr_page

    c = cfg.clean
    texts: dict[int, str] = {}
    info: dict[str, Any] = {"ocr_seconds": 0.0, "ocr_errors": [], "blank_pages": [], "ocr_skipped": 0}
    for n, page in enumerate(candidates):
        if len(texts) >= c.ocr_max_pages:
            info["ocr_skipped"] = len(candidates) - n
            break
        try:
            res = ocr_page(pdf, page, scale=c.ocr_scale, threads=c.ocr_threads, min_score=c.ocr_min_score,
                           row_tolerance=c.ocr_row_tolerance, blank_ink_share=c.blank_ink_share)
        except OcrError as e:
            info["ocr_errors"].append(str(e))
            continue
        info["ocr_seconds"] += res.seconds
        if not res.lines and res.ink < c.blank_ink_share:
            info["blank_pages"].append(page)
            continue
        texts[page] = clean_text(res.text, vocab)
    info["ocr_seconds"] = round(info["ocr_seconds"], 3)
    return texts, info


def clean_report(parsed: ParsedReport, company: str, cfg: RunConfig, pdf: str | None = None,
                 report_currency: str = "") -> tuple[CleanReport, dict[str, Any]]:
    """One ParsedReport -> CleanReport (+ counts for the summary row). OCR reads ``pdf`` (default:
    the path the parser recorded)."""
    raw = [raw_page_text(p) for p in parsed.pages]
    vocab = build_vocab(raw)
    ratios, garbled, textless = _ocr_plan(parsed, cfg)
    ocr_text: dict[int, str] = {}
    info: dict[str, Any] = {"garbled_pages": garbled, "textless_pages": textless, "ocr_seconds": 0.0,
                            "ocr_skipped": 0, "ocr_errors": [], "blank_pages": []}
    if cfg.clean.ocr and (garbled or textless):
        ocr_text, ocr_info = _ocr_pages(pdf or parsed.pdf, garbled + textless, cfg, vocab)
        info.update(ocr_info)
    default_dollar = report_currency.upper() if report_currency.upper() in ("USD", "AUD", "CAD", "NZD", "HKD", "SGD") else "USD"
    dollar = units.dollar_currency(raw, default=default_dollar)
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


def load_parsed(path) -> ParsedReport:
    """Read ``01_parse/<sha1>.json``; a clear error naming the file when missing or invalid."""
    from pathlib import Path

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run stage 01_parse first (or its parse failed)")
    from pydantic import ValidationError

    data = read_json(path)  # ValueError naming the file on bad JSON
    try:
        return ParsedReport.model_validate(data)
    except ValidationError as e:
        first = "; ".join(f"{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in e.errors()[:3])
        raise ValueError(f"{path}: not a valid ParsedReport ({e.error_count()} problem(s): {first})") from None


def clean_key(cfg: RunConfig, parse_hash: str, company: str, currency: str) -> str:
    knobs = {k: v for k, v in cfg.clean.model_dump(mode="json").items() if k not in _EXECUTION_ONLY}
    llm = cfg.section_hash("llm") if cfg.clean.serialize_tables else ""
    return hash_key(parse_hash, knobs, company, currency, llm, CODE_VERSION)


# ---- stage entry point -----------------------------------------------------------------------------------------
def run_clean(cfg: RunConfig, ds, progress: bool = True) -> pd.DataFrame:
    """Clean every report of ``ds`` into ``02_clean/<sha1>.json``; one summary row per report."""
    stage = Stage(cfg, STAGE)
    parse_dir = cfg.run_dir / "01_parse"
    rows: list[dict[str, Any]] = []
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(ds.reports), desc="clean", unit="report")
    for r in ds.reports:
        row: dict[str, Any] = {c: 0 for c in COLUMNS}
        row.update(sha1=r.sha1, company=r.company, skipped=False, error="", seconds=0.0, ocr_seconds=0.0)
        src = parse_dir / f"{r.sha1}.json"
        t0 = time.perf_counter()
        try:
            key = clean_key(cfg, file_sha256(src) if src.exists() else "", r.company, r.currency)
            if src.exists() and stage.is_current(r.sha1, key, f"{r.sha1}.json"):
                old = stage.item_info(r.sha1)
                row.update({c: old[c] for c in COLUMNS if c in old and c not in ("seconds", "skipped", "error")})
                row["skipped"] = True
            else:
                parsed = load_parsed(src)
                with stage.timed(r.sha1):
                    report, info = clean_report(parsed, r.company, cfg, pdf=str(r.pdf), report_currency=r.currency)
                    if cfg.clean.serialize_tables:
                        usage = serialize_tables(report, cfg)
                        stage.add_tokens(prompt_tokens=usage["prompt_tokens"], completion_tokens=usage["completion_tokens"])
                        info.update(serialized_tables=usage["serialized_tables"], serialize_failed=usage["serialize_failed"])
                    stage.write_json(f"{r.sha1}.json", report.model_dump(mode="json"), indent=None)
                row.update(pages=len(report.pages), tables=info["tables"], tables_with_unit=info["tables_with_unit"],
                           garbled_pages=len(info["garbled_pages"]), textless_pages=len(info["textless_pages"]),
                           ocr_pages=len(report.ocr_pages), ocr_skipped=info["ocr_skipped"],
                           removed_blocks=info["removed_blocks"], serialized_tables=info.get("serialized_tables", 0),
                           ocr_seconds=info["ocr_seconds"], seconds=round(time.perf_counter() - t0, 3))
                stage.mark_done(r.sha1, key, **{c: row[c] for c in COLUMNS if c not in ("sha1", "skipped", "error")},
                                ocr_page_list=report.ocr_pages, garbled_page_list=info["garbled_pages"],
                                blank_pages=info["blank_pages"], ocr_errors=info["ocr_errors"], dollar=info["dollar"],
                                repeated_keys=info["repeated_keys"][:50])
        except (FileNotFoundError, ValueError) as e:
            row["error"] = str(e) if str(src) in str(e) else f"{src}: {e}"
        except Exception as e:  # a bug or library error on one report must not stop the others
            row["error"] = f"{src}: {type(e).__name__}: {e}"
        rows.append(row)
        if bar:
            bar.update(1)
            bar.set_postfix(ocr=sum(x["ocr_pages"] for x in rows))
    if bar:
        bar.close()
    df = pd.DataFrame(rows, columns=COLUMNS)
    failures = {x["sha1"]: x["error"] for x in rows if x["error"]}
    stage.finish(counts={"reports": len(rows), "cleaned": int((df.error == "").sum()), "failed": len(failures),
                         "skipped": int(df.skipped.sum()), "pages": int(df.pages.sum()), "tables": int(df.tables.sum()),
                         "ocr_pages": int(df.ocr_pages.sum()), "garbled_pages": int(df.garbled_pages.sum())},
                 inputs={r.sha1: str(parse_dir / f"{r.sha1}.json") for r in ds.reports},
                 extra={"failures": failures})
    return df
