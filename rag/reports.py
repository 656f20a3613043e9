"""What each executed notebook shows without widgets: tables (and a figure or two) read from a run's artifacts.

Contract: every function reads ``outputs/<run>/NN_stage/`` files only (never runs a stage), returns a
pandas DataFrame (or PNG bytes for figures) and is cheap enough for every headless run. Pages in these
tables are 1-based physical pages, as everywhere inside the project; scores are "higher = better".

- 01 ``parse_table`` pages/tables per report; ``page_with_tables_png`` one rendered page with its table boxes
- 02 ``clean_table`` what cleanup and OCR changed per report
- 03 ``chunk_length_table`` chunk lengths in the embedder's own tokens against its input limit
- 04 ``index_table`` index sizes and embedding time per (report, chunk size)
- 05 ``retrieval_questions`` per question: routing, top pages with scores, gold rank
- 06 ``answer_questions`` per question: answer, cited page snippet, gold and right/wrong when gold exists
- 07 ``earlier_runs`` this run beside other scored runs of the same dataset
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from .core.artifacts import read_json
from .core.config import RunConfig
from .core.dataset import Dataset

TOP_PAGES_SHOWN = 5  # candidate pages listed per question in the 05 table
QUESTION_CHARS = 90  # question text shown in the per-question tables
SNIPPET_CHARS = 160  # cited-page snippet in the 06 table
LENGTH_BINS = (0, 64, 128, 192, 320, 384, 512)  # embedder-token bins of the 03 histogram (+ limit + 1)
LENGTH_SAMPLE = 5000  # chunks tokenized for the 03 histogram at most (evenly spaced; all when fewer)
PAGE_SCALE = 0.8  # render scale of the 01 page figure (1.0 = 72 dpi)


def _short(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


# ---- 01 / 02 ----------------------------------------------------------------------------
def parse_table(cfg: RunConfig, ds: Dataset) -> pd.DataFrame:
    """Per parsed report: pipeline, pages, tables, pages holding tables, characters, garbled pages."""
    from .parse import item_state, load_parsed

    rows = []
    for r in ds.reports:
        if item_state(cfg, r.sha1).status != "done":
            continue
        p = load_parsed(cfg, r.sha1)
        rows.append({"sha1": r.sha1[:8], "company": r.company, "pipeline": p.pipeline, "pages": p.n_pages,
                     "tables": sum(len(pg.tables) for pg in p.pages),
                     "pages_with_tables": sum(bool(pg.tables) for pg in p.pages),
                     "chars": sum(pg.metrics.chars for pg in p.pages),
                     "garbled_pages": sum(pg.metrics.garbled_ratio >= cfg.clean.garbled_threshold
                                          for pg in p.pages)})
    return pd.DataFrame(rows)


def page_with_tables_png(cfg: RunConfig, ds: Dataset, scale: float = PAGE_SCALE) -> tuple[str, bytes] | None:
    """(caption, PNG) of the page with the most tables in the first parsed report, table boxes drawn in red;
    None when no parsed page has a table with a box."""
    from PIL import Image, ImageDraw
    import io

    from .parse import item_state, load_parsed
    from .widgets.page_viewer import render_page_png

    for r in ds.reports:
        if item_state(cfg, r.sha1).status != "done":
            continue
        pages = [pg for pg in load_parsed(cfg, r.sha1).pages if any(t.bbox for t in pg.tables)]
        if not pages:
            continue
        page = max(pages, key=lambda pg: (len(pg.tables), -pg.page))
        img = Image.open(io.BytesIO(render_page_png(r.pdf, page.page, scale))).convert("RGB")
        draw = ImageDraw.Draw(img)
        for t in page.tables:
            if t.bbox:  # PDF points, top-left origin: pixels = points * scale
                draw.rectangle([v * scale for v in t.bbox], outline=(220, 30, 30), width=2)
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        return f"{r.company} ({r.sha1[:8]}) page {page.page}: {len(page.tables)} table(s)", buf.getvalue()
    return None


def clean_table(cfg: RunConfig, ds: Dataset) -> pd.DataFrame:
    """Per cleaned report: characters before/after cleanup, OCR'd pages, tables with a unit and a currency."""
    from .clean import item_state, load_clean
    from .parse import load_parsed

    rows = []
    for r in ds.reports:
        if item_state(cfg, r.sha1).status != "done":
            continue
        c, p = load_clean(cfg, r.sha1), load_parsed(cfg, r.sha1)
        tables = [t for pg in c.pages for t in pg.tables]
        raw = sum(pg.metrics.chars for pg in p.pages)
        clean = sum(len(pg.markdown) for pg in c.pages)
        rows.append({"sha1": r.sha1[:8], "company": r.company, "chars_parsed": raw, "chars_clean": clean,
                     "change_%": round(100 * (clean - raw) / raw, 1) if raw else None,
                     "ocr_pages": len(c.ocr_pages), "ocr_page_list": ",".join(map(str, c.ocr_pages[:10])),
                     "tables": len(tables), "with_unit": sum(t.scale is not None for t in tables),
                     "with_currency": sum(t.currency is not None for t in tables)})
    return pd.DataFrame(rows)


# ---- 03 / 04 ----------------------------------------------------------------------------
def embedder_token_lengths(cfg: RunConfig, ds: Dataset, size: int | None = None) -> list[int] | None:
    """Length of every chunk (at most ``LENGTH_SAMPLE``, evenly spaced) of ``size`` (default ``retrieve.chunk_size``) in the local embedder's own tokens
    ([CLS]/[SEP] included, as the model reads them); None for a non-local embedder."""
    from .chunk import item_state, load_chunks
    from .index import get_embedder

    if cfg.embed.backend != "local":
        return None
    size = size or cfg.retrieve.chunk_size
    texts = [c.text for r in ds.reports if item_state(cfg, r.sha1, size).status == "done"
             for c in load_chunks(cfg, r.sha1, size)]
    if len(texts) > LENGTH_SAMPLE:  # evenly spaced sample: a big corpus keeps the notebook cell quick
        texts = [texts[i * len(texts) // LENGTH_SAMPLE] for i in range(LENGTH_SAMPLE)]
    tok = get_embedder(cfg).tokenizer
    return [len(tok(t, verbose=False)["input_ids"]) for t in texts]


def chunk_length_table(cfg: RunConfig, ds: Dataset, lengths: list[int] | None = None) -> pd.DataFrame:
    """Histogram of chunk lengths (embedder tokens) with the model's input limit marked: rows = bins, and a
    last row with the share of chunks and of tokens past the limit (what ``embed.long_text="truncate"`` drops;
    ``"mean"`` embeds them in extra windows)."""
    lengths = embedder_token_lengths(cfg, ds) if lengths is None else lengths
    if not lengths:
        return pd.DataFrame(columns=["tokens", "chunks"])
    limit = cfg.embed.max_input_tokens
    # A chunk of exactly ``limit`` tokens still fits: the first bin past the limit starts at limit + 1.
    edges = sorted(set(LENGTH_BINS) | {limit + 1}) + [max(max(lengths), limit) + 2]
    rows = []
    for lo, hi in zip(edges, edges[1:]):
        n = sum(lo <= x < hi for x in lengths)
        rows.append({"tokens": f"{lo}-{hi - 1}", "chunks": n, "share_%": round(100 * n / len(lengths), 1),
                     "past_limit": lo > limit})
    cut = sum(max(0, x - limit) for x in lengths)
    rows.append({"tokens": f"over {limit} ({cfg.embed.long_text})",
                 "chunks": sum(x > limit for x in lengths),
                 "share_%": round(100 * sum(x > limit for x in lengths) / len(lengths), 1),
                 "past_limit": f"{100 * cut / sum(lengths):.1f}% of tokens "
                               + ("in extra windows" if cfg.embed.long_text == "mean" else "never embedded")})
    return pd.DataFrame(rows)


def index_table(cfg: RunConfig, ds: Dataset) -> pd.DataFrame:
    """Per (report, chunk size) index: chunks, dimension, bytes on disk, embedding seconds (from the item record)."""
    from .core.stage import read_item_record
    from .index import _bytes, item_id, load_index_info

    d = cfg.run_dir / "04_index"
    rows = []
    for r in ds.reports:
        for size in cfg.chunk.sizes:
            try:
                info = load_index_info(cfg, r.sha1, size)
            except (FileNotFoundError, ValueError):
                continue
            rec = read_item_record(d, item_id(r.sha1, size)) or {}
            rows.append({"sha1": r.sha1[:8], "company": r.company, "size": size, "chunks": info.chunks,
                         "model": info.model_name, "dim": info.dim, "MB": round(_bytes(d, r.sha1, size) / 1e6, 2),
                         "embed_seconds": (rec.get("info") or {}).get("embed_seconds")})
    return pd.DataFrame(rows)


# ---- 05 / 06 / 07 -----------------------------------------------------------------------
def _gold_rank(ranked: dict[str, list[int]], pools) -> str:
    """Best 1-based rank of any gold page per pool ("-" = pool missed), "" without gold pools."""
    out = []
    for pool in pools:
        ranks = [ranked.get(p.sha1, []).index(p.page) + 1 for p in pool if p.page in ranked.get(p.sha1, [])]
        out.append(str(min(ranks)) if ranks else "-")
    return ",".join(out)


def retrieval_questions(cfg: RunConfig, ds: Dataset) -> pd.DataFrame:
    """One row per retrieved question: routing status, routed companies, the top pages with final scores,
    and the gold rank per gold pool (1 = first page; "-" = not among the candidates; empty without gold)."""
    from .evaluate.retrieval_metrics import rank_lists
    from .retrieve import load_retrievals

    recs = load_retrievals(cfg, [q.qid for q in ds.questions])
    rows = []
    for q in ds.questions:
        rec = recs.get(q.qid)
        if rec is None:
            continue
        top = []
        for sha1, cands in rec.candidates.items():
            top += [f"{sha1[:6]}:p{c.page} ({(c.scores.get('final') or 0):.2f})" for c in cands[:TOP_PAGES_SHOWN]]
        g = ds.gold.get(q.text)
        rows.append({"qid": q.qid, "kind": q.kind, "question": _short(q.text, QUESTION_CHARS),
                     "routing": rec.routing, "routed": "; ".join(r.company for r in rec.routed),
                     "top pages (final score)": "  ".join(top[: TOP_PAGES_SHOWN * 2]),
                     "gold rank": _gold_rank(rank_lists(rec), g.pools) if g and g.pools else ""})
    return pd.DataFrame(rows)


def _snippet(page_text: str, value: Any) -> str:
    """A window of the cited page around the answer when found (a number by its first digits, separators
    allowed: 406100000 finds "406,100"; text by its first word), else the page's start."""
    import re

    text = " ".join(page_text.split())
    probe = "" if value in (None, "N/A") or isinstance(value, bool) else str(value)
    digits = re.sub(r"\D", "", probe.split(".")[0]) if re.fullmatch(r"-?[\d.,]+", probe) else ""
    if len(digits) >= 3:
        pattern = r"[,.\s]?".join(digits[:4])
    else:
        words = re.findall(r"\w{3,}", probe)
        pattern = re.escape(words[0]) if words else ""
    m = re.search(pattern, text, re.I) if pattern else None
    start = max(0, m.start() - SNIPPET_CHARS // 2) if m else 0
    return _short(text[start:], SNIPPET_CHARS)


def answer_questions(cfg: RunConfig, ds: Dataset) -> pd.DataFrame:
    """One row per answered question: answer, the first cited page and a snippet of it, and with gold the
    gold answer, ``right`` (answer score 1) and the reference score (1 = every pool hit, nothing wrong)."""
    from .answer import load_answers, submission_path
    from .clean import page_texts
    from .evaluate import evaluate_submission

    answers = load_answers(cfg)
    graded: dict[str, dict[str, Any]] = {}
    if ds.gold and submission_path(cfg).exists():
        per_q, _ = evaluate_submission(submission_path(cfg), ds)
        graded = {row["qid"]: row for row in per_q.to_dict(orient="records")}
    rows = []
    for q in ds.questions:
        a = answers.get(q.qid)
        if a is None:
            continue
        ref = a.references[0] if a.references else None
        cited, snippet = "", ""
        if ref:
            sha1, page = ref.get("sha1", ""), int(ref.get("page", 0))  # debug records: 1-based pages
            cited = f"{sha1[:6]}:p{page}"
            try:
                snippet = _snippet(page_texts(cfg, sha1)[1].get(page, ""), a.value)
            except (FileNotFoundError, ValueError):
                snippet = ""
        row = {"qid": q.qid, "kind": q.kind, "question": _short(q.text, QUESTION_CHARS), "answer": a.value,
               "cited": cited, "snippet": snippet}
        if q.qid in graded:
            gq = graded[q.qid]
            row.update({"gold": "; ".join(map(str, gq["gold"])), "right": bool(gq["correct"]),
                        "ref_score": round(float(gq["ref_score"]), 2)})
        rows.append(row)
    return pd.DataFrame(rows)


def earlier_runs(cfg: RunConfig, limit: int = 8) -> pd.DataFrame:
    """This run beside up to ``limit`` other scored runs of the same dataset in ``outputs_dir`` (newest first)."""
    from .evaluate import compare_runs

    mine = Path(cfg.data_dir).resolve()
    others = []
    for d in Path(cfg.outputs_dir).iterdir():
        scores, manifest = d / "07_evaluate" / "scores.json", d / "07_evaluate" / "manifest.json"
        if d == cfg.run_dir or not scores.exists() or not manifest.exists():
            continue
        data_dir = (read_json(manifest).get("config") or {}).get("data_dir")
        if data_dir and Path(data_dir).resolve() == mine:
            others.append(d)
    others = sorted(others, key=lambda d: (d / "07_evaluate" / "scores.json").stat().st_mtime, reverse=True)
    runs = [cfg.run_dir] + others[:limit] if (cfg.run_dir / "07_evaluate" / "scores.json").exists() else others[:limit]
    if not runs:
        return pd.DataFrame()
    keep = ["questions", "G", "R", "score", "max_score", "answer_accuracy", "na_precision", "na_recall",
            "hit@1", "hit@5", "seconds", "tokens"]
    table = compare_runs(runs)
    return table[[c for c in keep if c in table.columns] + [c for c in table.columns if c.startswith("score.")]]
