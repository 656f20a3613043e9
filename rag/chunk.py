"""Stage 03: clean reports -> ``outputs/<run>/03_chunk/<sha1>.s<size>.jsonl`` (:class:`rag.records.Chunk` rows).

Contract:
- ``run_chunk(cfg, ds, progress=True) -> DataFrame``: one row per (report, size): sha1, company, size,
  chunks, text/table/serialized_table counts, max_tokens, over_limit, seconds. One file per size in
  ``cfg.chunk.sizes`` (e.g. 300 and 1000 side by side).
- ``chunk_report(report, size, cfg, count) -> list[Chunk]`` is the pure function behind it.
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

import re
import time
from dataclasses import dataclass
from typing import Callable

import pandas as pd

from .artifacts import Stage, file_sha256, hash_key, read_json, stage_dir
from .config import RunConfig
from .records import Chunk, CleanReport, CleanTable

CODE_VERSION = "chunk-1"
STAGE = "03_chunk"
COLUMNS = ["sha1", "company", "size", "chunks", "text", "table", "serialized_table", "max_tokens", "over_limit",
           "seconds"]

Counter = Callable[[str], int]

# Sentence end: ., ! or ? (optionally closed by a quote/bracket) followed by whitespace and a capital,
# digit or opening quote/bracket. Avoids splitting "1.5" or "U.S. dollars" in most cases.
_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+(?=[\"'(\[A-Z0-9])")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*\S)\s*$")
_GRID_LINE = re.compile(r"^\s*\|")


# ---- token counting ------------------------------------------------------------------------------
def token_counter(cfg: RunConfig) -> Counter:
    """cl100k token counter from the model layer (``rag.models.get_encoding``)."""
    from .models import get_encoding

    enc = get_encoding(cfg)
    return lambda text: len(enc.encode(text, disallowed_special=()))


# ---- page text -> text parts and tables ---------------------------------------------------------------
@dataclass
class _Segment:
    kind: str  # "text" | "table"
    text: str
    heading: str  # heading in effect at the segment's start
    table: CleanTable | None = None


def split_page(markdown: str, tables: list[CleanTable], heading: str) -> tuple[list[_Segment], str]:
    """Cut a page's Markdown into text and table segments in reading order.

    Each ``CleanTable`` is looked up by its exact Markdown (or its grid) in the page; grids found in
    the page text that match no ``CleanTable`` become table segments of their own. Tables absent from
    the page text are appended at the end. Returns the segments and the heading in effect after the page.
    """
    spans: list[tuple[int, int, CleanTable | None]] = []
    for t in tables:
        for needle in (t.markdown, _grid_of(t.markdown)):
            pos = markdown.find(needle) if needle else -1
            if pos >= 0 and not any(a <= pos < b for a, b, _ in spans):
                spans.append((pos, pos + len(needle), t))
                break
        else:
            spans.append((len(markdown), len(markdown), t))
    spans.sort(key=lambda s: s[0])
    segments: list[_Segment] = []
    cursor = 0
    for start, end, table in spans:
        heading = _text_segments(markdown[cursor:start], heading, segments)
        segments.append(_Segment("table", table.markdown, heading, table))
        cursor = max(cursor, end)
    heading = _text_segments(markdown[cursor:], heading, segments)
    return segments, heading


def _grid_of(table_md: str) -> str:
    lines = table_md.splitlines()
    grid = [ln for ln in lines if _GRID_LINE.match(ln)]
    return "\n".join(grid) if grid else ""


def _text_segments(text: str, heading: str, out: list[_Segment]) -> str:
    """Append text segments of ``text`` to ``out``, lifting stray Markdown grids out as tables."""
    buf: list[str] = []
    grid: list[str] = []

    def flush_text() -> None:
        if "".join(buf).strip():
            out.append(_Segment("text", "\n".join(buf).strip("\n"), start_heading[0]))
        buf.clear()

    def flush_grid() -> None:
        if grid:
            out.append(_Segment("table", "\n".join(grid), heading_now[0]))
            grid.clear()

    start_heading = [heading]
    heading_now = [heading]
    for line in text.split("\n"):
        if _GRID_LINE.match(line):
            if not grid:
                flush_text()
            grid.append(line)
            continue
        if grid:
            flush_grid()
            start_heading[0] = heading_now[0]
        m = _HEADING.match(line)
        if m:
            heading_now[0] = m.group(1).strip()
            if not "".join(buf).strip():
                start_heading[0] = heading_now[0]
        buf.append(line)
    flush_grid()
    flush_text()
    return heading_now[0]


# ---- recursive text splitting -----------------------------------------------------------------------
# An atom is (separator placed before it when joined, text). Levels: paragraphs, lines, sentences, words.
_LEVELS = ("\n\n", "\n", "sentence", " ")
Atom = tuple[str, str]


def _split_level(text: str, level: int) -> list[str]:
    sep = _LEVELS[level]
    if sep == "sentence":
        return [p for p in _SENTENCE_END.split(text) if p.strip()]
    if sep == "\n\n":
        return [p.strip("\n") for p in re.split(r"\n[ \t]*\n", text) if p.strip()]
    return [p for p in text.split(sep) if p.strip()]


def atoms(text: str, budget: int, count: Counter, level: int = 0, sep_before: str = "") -> list[Atom]:
    """Split ``text`` recursively (paragraphs -> lines -> sentences -> words) into atoms of at most
    ``budget`` tokens. Paragraphs and lines are always split down to sentences (so the overlap is made
    of whole sentences); a sentence over budget is split into words; a word over budget (a long URL)
    is cut by characters, the only cut inside a word."""
    name = _LEVELS[level]
    if name == " ":
        out: list[Atom] = []
        for i, word in enumerate(text.split()):
            sep = sep_before if i == 0 else " "
            out.extend(_char_pieces(word, budget, count, sep) if count(word) > budget else [(sep, word)])
        return out
    out = []
    for i, part in enumerate(_split_level(text, level)):
        sep = sep_before if i == 0 else (" " if name == "sentence" else name)
        if name == "sentence" and count(part) <= budget:
            out.append((sep, part))
        else:
            out.extend(atoms(part, budget, count, level + 1, sep))
    return out


def _char_pieces(word: str, budget: int, count: Counter, sep_before: str) -> list[Atom]:
    out, rest = [], word
    while rest:
        n = len(rest)
        while n > 1 and count(rest[:n]) > budget:
            n = n * 3 // 4
        out.append((sep_before if not out else "", rest[:n]))
        rest = rest[n:]
    return out


def _join(parts: list[Atom], prefix: str = "") -> str:
    body = "".join((sep if i else "") + txt for i, (sep, txt) in enumerate(parts))
    return prefix + body


def pack(parts: list[Atom], budget: int, overlap: int, count: Counter, prefix: str = "") -> list[str]:
    """Greedily pack atoms into texts ``prefix + atoms`` of at most ``budget`` tokens (exact count);
    each text after the first starts with whole trailing atoms of the previous one holding at most
    ``overlap`` tokens (never all of it). An atom that alone exceeds the budget gets a text of its own.

    Sizes are first estimated by summing per-atom counts (cheap), then checked exactly when a text is
    closed; atoms that push it over are handed back to the next text."""
    texts: list[str] = []
    base = count(prefix) if prefix else 0
    i = 0
    carry: list[Atom] = []  # overlap atoms opening the next text
    while i < len(parts):
        cur = list(carry)
        est = base + sum(count(sep + t) for sep, t in cur)
        first_new = len(cur)
        while i < len(parts):
            sep, t = parts[i]
            add = count((sep if cur else "") + t)
            if len(cur) > first_new and est + add > budget:
                break
            if len(cur) == first_new and cur and est + add > budget:
                cur, est, first_new = [], base, 0  # overlap + this atom do not fit: drop the overlap
                add = count(t)
            cur.append(parts[i])
            est += add
            i += 1
        while len(cur) > first_new + 1 and count(_join(cur, prefix)) > budget:
            cur.pop()
            i -= 1
        texts.append(_join(cur, prefix))
        carry = []
        for atom in reversed(cur[max(first_new, 1):]):
            if count(_join([atom] + carry)) > overlap:
                break
            carry.insert(0, atom)
        if overlap <= 0:
            carry = []
    return texts


# ---- tables ------------------------------------------------------------------------------------------
def table_pieces(table_md: str, unit_text: str, budget: int, count: Counter) -> list[str]:
    """Split a table's Markdown between rows; every piece repeats the lines above the grid (title,
    unit line), ``unit_text`` when those lines lack it, and the grid's header row + separator.
    A row that alone exceeds the budget is a piece of its own (over budget, never cut)."""
    lines = [ln for ln in table_md.split("\n") if ln.strip()]
    first_grid = next((i for i, ln in enumerate(lines) if _GRID_LINE.match(ln)), len(lines))
    above = lines[:first_grid]
    if unit_text and not any(unit_text in ln for ln in above):
        above.append(unit_text)
    grid = lines[first_grid:]
    n_head = 2 if len(grid) >= 2 and re.fullmatch(r"\s*\|[\s:|-]*", grid[1]) else min(1, len(grid))
    prefix_lines = above + grid[:n_head]
    rows = grid[n_head:]
    if not rows:
        return ["\n".join(prefix_lines)]
    return pack([("\n", r) for r in rows], budget, 0, count, prefix="\n".join(prefix_lines) + "\n")


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
