"""Stage 03: clean reports -> ``outputs/<run>/03_chunk/<sha1>.s<size>.jsonl`` (:class:`rag.records.Chunk` rows).

Contract:
- ``run_chunk(cfg, ds, progress=True) -> DataFrame``: one row per (report, size): sha1, company, size,
  chunks, text/table/serialized_table counts, max_tokens, over_limit, seconds. One file per size in
  ``cfg.chunk.sizes`` (e.g. 300 and 1000 side by side).
- ``chunk_report(report, size, cfg, count) -> list[Chunk]`` is the pure function behind it; the
  splitting it uses (segments, atoms, packing, table pieces) is :mod:`rag.chunk_split`.
- Sizes are cl100k tokens of the chunk's full ``text`` (context header included). Text chunks hold
  at most ``size`` tokens; the next chunk of the same page repeats up to ``cfg.chunk.overlap`` tokens
  of the previous one's tail. Text is split recursively: paragraphs -> lines -> sentences -> words, and
  greedily packed. Chunks never cross pages (``chunk.page`` is the 1-based physical page).
- Tables never go into text chunks: each table (``CleanTable``, or a Markdown grid left in the page
  text) becomes its own ``kind="table"`` chunk(s), split between rows only, the table's leading lines
  (title / unit line) and its header row + separator repeated in every piece. A single row longer
  than the budget is kept whole in a piece of its own and then EXCEEDS ``size`` (never cut).
  ``CleanTable.serialized`` sentences become ``kind="serialized_table"`` chunks.
- Optional context header (``cfg.chunk.context_header``): ``"<company> | page <n> | <heading>"`` as the
  first line; ``heading`` is the last Markdown heading (``#``) seen at or before the chunk's start,
  carried over from earlier pages.
- Currency key per (report, size) = sha256 of ``02_clean/<sha1>.json`` + chunk config (less the size
  list) + size + :data:`CODE_VERSION`: adding a size chunks only that size.
"""
from __future__ import annotations

import time

import pandas as pd

from .artifacts import Stage, file_sha256, hash_key, read_json, stage_dir
from .chunk_split import Counter, atoms, pack, split_page, table_pieces
from .config import RunConfig
from .records import Chunk, CleanReport

CODE_VERSION = "chunk-1"
STAGE = "03_chunk"
COLUMNS = ["sha1", "company", "size", "chunks", "text", "table", "serialized_table", "max_tokens", "over_limit",
           "seconds"]


# ---- token counting ------------------------------------------------------------------------------
def token_counter(cfg: RunConfig) -> Counter:
    """cl100k token counter from the model layer (``rag.models.get_encoding``)."""
    from .models import get_encoding

    enc = get_encoding(cfg)
    return lambda text: len(enc.encode(text, disallowed_special=()))


# ---- one report ---------------------------------------------------------------------------------------
def context_header(company: str, page: int, heading: str) -> str:
    return f"{company} | page {page}" + (f" | {heading}" if heading else "")


def chunk_report(report: CleanReport, size: int, cfg: RunConfig, count: Counter) -> list[Chunk]:
    """All chunks of one report for one chunk size, in page order (see module contract)."""
    ccfg = cfg.chunk
    chunks: list[Chunk] = []
    heading = ""
    for page in sorted(report.pages, key=lambda p: p.page):
        segments, next_heading = split_page(page.markdown, page.tables, heading)
        heading = next_heading
        n = 0

        def emit(kind: str, body: str, seg_heading: str, table_id: str | None) -> None:
            nonlocal n
            text = (context_header(report.company, page.page, seg_heading) + "\n" + body
                    if ccfg.context_header else body)
            chunks.append(Chunk(chunk_id=f"{report.sha1[:8]}-s{size}-p{page.page}-{n}", sha1=report.sha1,
                                page=page.page, size=size, kind=kind, text=text, tokens=count(text),
                                heading=seg_heading, table_id=table_id))
            n += 1

        for seg in segments:
            hdr = count(context_header(report.company, page.page, seg.heading) + "\n") if ccfg.context_header else 0
            budget = max(1, size - hdr)
            if seg.kind == "text":
                for body in pack(atoms(seg.text, budget, count), budget, min(ccfg.overlap, budget // 2), count):
                    emit("text", body, seg.heading, None)
                continue
            unit = seg.table.unit_text if seg.table else ""
            tid = seg.table.table_id if seg.table else None
            for body in table_pieces(seg.text, unit, budget, count):
                emit("table", body, seg.heading, tid)
            if seg.table and seg.table.serialized and seg.table.serialized.strip():
                parts = atoms(seg.table.serialized.strip(), budget, count)
                for body in pack(parts, budget, min(ccfg.overlap, budget // 2), count):
                    emit("serialized_table", body, seg.heading, tid)
    return chunks


def load_clean(cfg: RunConfig, sha1: str) -> CleanReport:
    path = stage_dir(cfg, "02_clean") / f"{sha1}.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run stage 02_clean for report {sha1}")
    try:
        return CleanReport.model_validate(read_json(path))
    except Exception as e:  # pydantic ValidationError or bad JSON: name the file
        raise ValueError(f"{path}: not a valid CleanReport ({e})") from e


def chunk_file(sha1: str, size: int) -> str:
    return f"{sha1}.s{size}.jsonl"


def load_chunks(cfg: RunConfig, sha1: str, size: int) -> list[Chunk]:
    from .artifacts import read_jsonl

    path = stage_dir(cfg, STAGE) / chunk_file(sha1, size)
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run stage 03_chunk (sizes {cfg.chunk.sizes})")
    return [Chunk.model_validate(r) for r in read_jsonl(path)]


def run_chunk(cfg: RunConfig, ds, progress: bool = True) -> pd.DataFrame:
    """Chunk every report of ``ds`` at every size in ``cfg.chunk.sizes`` (skips current items)."""
    stage = Stage(cfg, STAGE)
    clean_dir = stage_dir(cfg, "02_clean")
    count = token_counter(cfg)
    # The size list itself stays out of the key (each size is its own item): adding 1000 keeps 300 current.
    knobs = {k: v for k, v in cfg.chunk.model_dump(mode="json").items() if k != "sizes"}
    rows = []
    totals = {"chunks": 0, "reports": 0, "skipped": 0}
    for ri, rep in enumerate(ds.reports):
        src = clean_dir / f"{rep.sha1}.json"
        if not src.exists():
            raise FileNotFoundError(f"{src} is missing: run stage 02_clean for {rep.company} ({rep.sha1})")
        src_hash = file_sha256(src)
        report: CleanReport | None = None
        for size in cfg.chunk.sizes:
            item = f"{rep.sha1}.s{size}"
            key = hash_key(src_hash, knobs, size, CODE_VERSION)
            out = chunk_file(rep.sha1, size)
            if stage.is_current(item, key, out):
                info = stage.item_info(item)
                rows.append({"sha1": rep.sha1, "company": rep.company, "size": size, **info.get("counts", {}),
                             "seconds": 0.0})
                totals["skipped"] += 1
                continue
            t0 = time.perf_counter()
            with stage.timed(item):
                report = report or load_clean(cfg, rep.sha1)
                chunks = chunk_report(report, size, cfg, count)
                stage.write_jsonl(out, [c.model_dump(mode="json") for c in chunks])
            kinds = {k: sum(c.kind == k for c in chunks) for k in ("text", "table", "serialized_table")}
            counts = {"chunks": len(chunks), **kinds, "max_tokens": max((c.tokens for c in chunks), default=0),
                      "over_limit": sum(c.tokens > size for c in chunks)}
            stage.mark_done(item, key, counts=counts, source_sha256=src_hash)
            stage.add_tokens(chunk_tokens=sum(c.tokens for c in chunks))
            rows.append({"sha1": rep.sha1, "company": rep.company, "size": size, **counts,
                         "seconds": round(time.perf_counter() - t0, 3)})
            totals["chunks"] += len(chunks)
        totals["reports"] += 1
        if progress:
            print(f"[03_chunk] {ri + 1}/{len(ds.reports)} {rep.company}", flush=True)
    df = pd.DataFrame(rows, columns=COLUMNS)
    stage.finish(counts={**totals, "chunks_total": int(df["chunks"].sum()) if len(df) else 0},
                 extra={"sizes": list(cfg.chunk.sizes), "code_version": CODE_VERSION})
    return df
