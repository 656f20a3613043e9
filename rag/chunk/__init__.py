"""Stage 03: clean reports -> ``outputs/<run>/03_chunk/<sha1>.s<size>.jsonl`` (:class:`rag.core.records.Chunk` rows).

Contract:
- ``run_chunk(cfg, ds, progress=True) -> DataFrame``: one row per (report, size): sha1, company, size,
  chunks, text/table/serialized_table counts, max_tokens, over_limit, seconds. One file per size in
  ``cfg.chunk.sizes`` (e.g. 300 and 1000 side by side).
- ``chunk_report(report, size, cfg, count) -> list[Chunk]`` is the pure function behind it; the
  splitting it uses (segments, atoms, packing, table pieces) is :mod:`rag.chunk.split`.
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
- Currency key per (report, size) = 02's key for the report + chunk config (less the size list) + size
  + :data:`CODE_VERSION`: adding a size chunks only that size. Owner of ``03_chunk/``: ``load_chunks``,
  ``chunk_file`` and ``item_state`` are how other modules read it.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..core.artifacts import hash_key, read_jsonl, run_dir_of, stage_dir

from ..core.stage import ItemState, Stage
from ..core.stage import item_state as _item_state
from .split import Counter, atoms, pack, split_page, table_pieces
from ..core.config import RunConfig
from ..core import deps, stages
from ..core.loop import Item, Jsonl, Result, failures, outcome_counts, run_items, upstream_block
from ..core.records import Chunk, CleanReport

CODE_VERSION = "chunk-1"
STAGE = stages.name_of("chunk")  # this package's folder, from the registry (rag.core.stages)
COLUMNS = ["sha1", "company", "size", "chunks", "text", "table", "serialized_table", "max_tokens", "over_limit",
           "seconds"]


# ---- token counting ------------------------------------------------------------------------------
def token_counter(cfg: RunConfig) -> Counter:
    """cl100k token counter from the model layer (``rag.models.get_encoding``)."""
    from ..models import get_encoding

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


def chunk_file(sha1: str, size: int) -> str:
    return f"{sha1}.s{size}.jsonl"


def chunk_path(cfg: RunConfig | Path | str, sha1: str, size: int) -> Path:
    """``03_chunk/<sha1>.s<size>.jsonl`` of a run; FileNotFoundError naming the folder when 03 never ran
    (:func:`rag.core.artifacts.stage_dir`)."""
    return stage_dir(cfg, STAGE) / chunk_file(sha1, size)


def load_chunks(cfg: RunConfig | Path | str, sha1: str, size: int) -> list[Chunk]:
    """The chunks of one report at one size (``03_chunk/<sha1>.s<size>.jsonl``), in page order."""
    path = chunk_path(cfg, sha1, size)
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run stage 03_chunk with chunk size {size} in chunk.sizes")
    return [Chunk.model_validate(r) for r in read_jsonl(path)]


def item_id(sha1: str, size: int) -> str:
    return f"{sha1}.s{size}"


def item_state(cfg: RunConfig | Path | str, sha1: str, size: int) -> ItemState:
    """State of (report, size) in 03_chunk (done + key, failed/blocked + reason, or missing)."""
    return _item_state(run_dir_of(cfg) / STAGE, item_id(sha1, size), (chunk_file(sha1, size),))


def chunk_key(cfg: RunConfig, clean_key: str, size: int) -> str:
    """02's key for the report + chunk config (less the size list: each size is its own item) + size + code."""
    return hash_key(clean_key, deps.config_signature(cfg, STAGE), size, CODE_VERSION)


def chunked_sizes(cfg: RunConfig) -> dict[str, list[int]]:
    """``{sha1: [sizes]}`` of the chunk files present in this run's 03_chunk (for browsing)."""
    out: dict[str, list[int]] = {}
    d = cfg.run_dir / STAGE
    for p in sorted(d.glob("*.s*.jsonl")) if d.exists() else []:
        sha1, _, size = p.name[: -len(".jsonl")].rpartition(".s")
        if size.isdigit():
            out.setdefault(sha1, []).append(int(size))
    return {k: sorted(v) for k, v in out.items()}


def run_chunk(cfg: RunConfig, ds, progress: bool = True) -> pd.DataFrame:
    """Chunk every report of ``ds`` at every size in ``cfg.chunk.sizes`` (skips current items; a report
    that failed upstream is carried as blocked)."""
    from ..clean import STAGE as CLEAN, item_state as clean_state, load_clean, report_path as clean_path

    stage = Stage(cfg, STAGE)
    items = []
    for rep in ds.reports:
        up = clean_state(cfg, rep.sha1)
        if up.status == "missing":  # stage 02 never ran for it: the stage cannot run (not one item's failure)
            load_clean(cfg, rep.sha1)
        for size in cfg.chunk.sizes:
            items.append(Item(item_id(rep.sha1, size), chunk_key(cfg, up.key, size), (chunk_file(rep.sha1, size),),
                              (rep.sha1, size), blocked=upstream_block(CLEAN, up), label=rep.company,
                              inputs=(str(clean_path(cfg, rep.sha1)),)))

    def work(it: Item) -> Result:
        sha1, size = it.payload
        # the counter is made here, not captured: a worker of another executor loads its own encoding
        chunks = chunk_report(load_clean(cfg, sha1), size, cfg, token_counter(cfg))
        kinds = {k: sum(c.kind == k for c in chunks) for k in ("text", "table", "serialized_table")}
        counts = {"chunks": len(chunks), **kinds, "max_tokens": max((c.tokens for c in chunks), default=0),
                  "over_limit": sum(c.tokens > size for c in chunks)}
        return Result(files={chunk_file(sha1, size): Jsonl([c.model_dump(mode="json") for c in chunks])},
                      info={"counts": counts, "chunk_tokens": sum(c.tokens for c in chunks)})

    outcomes = run_items(stage, items, work, progress=progress, unit="file")
    rows = []
    for it in items:
        o = outcomes[it.id]
        sha1, size = it.payload
        rows.append({"sha1": sha1, "company": it.label, "size": size, **o.info.get("counts", {}),
                     "seconds": o.seconds, "error": o.error})
    df = pd.DataFrame(rows, columns=COLUMNS + ["error"])
    n = outcome_counts(outcomes)
    stage.add_tokens(chunk_tokens=sum(o.info.get("chunk_tokens", 0) for o in outcomes.values()))
    stage.finish(counts={"chunks": int(sum(o.info.get("counts", {}).get("chunks", 0) for o in outcomes.values()
                                           if o.status == "ran")),
                         "reports": len(ds.reports), "skipped": n["current"], "failed": n["failed"],
                         "blocked": n["blocked"], "chunks_total": int(df["chunks"].fillna(0).sum()) if len(df) else 0},
                 item_ids=[i.id for i in items], extra={"sizes": list(cfg.chunk.sizes), "code_version": CODE_VERSION,
                                                         "failures": failures(outcomes)})
    return df
