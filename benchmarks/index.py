"""Benchmark stages 01..04 on a dataset and the chunk-level page recall of dense, BM25 and hybrid search.

Usage (from the repository root)::

    .venv/bin/python benchmarks/index.py --data ../shared/erc2-dev [--run NAME] [--preset offline]
                                         [--set chunk.sizes=[300,1000]] [--set retrieve.chunk_size=1000]

Runs (or reuses, through the stages' currency keys) run_parse -> run_clean -> run_chunk -> run_index,
prints chunks/s, index seconds and size on disk from the manifests, then, for every question with gold
pages and every gold pool: is a gold page among the pages of the top ``retrieve.top_k_chunks`` chunks of
the pool's report (the pool's sha1 that is in subset.csv; routing is not measured here)? Three hit
rates side by side: dense, BM25, hybrid (reciprocal rank fusion with ``retrieve.rrf_k`` over the full
rankings of both). Prints numbers only; nothing is asserted.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag.core.artifacts import read_manifest  # noqa: E402
from rag.core.config import load_config  # noqa: E402
from rag.core.dataset import load_dataset  # noqa: E402
from rag.pipeline import parse_set  # noqa: E402


def run_stages(cfg, ds) -> dict[str, float]:
    from rag.chunk import run_chunk
    from rag.clean import run_clean
    from rag.index import run_index
    from rag.parse import run_parse

    wall = {}
    for name, fn in (("01_parse", run_parse), ("02_clean", run_clean), ("03_chunk", run_chunk),
                     ("04_index", run_index)):
        t0 = time.perf_counter()
        fn(cfg, ds, progress=True)
        wall[name] = time.perf_counter() - t0
    return wall


def hit_rates(cfg, ds) -> tuple[list[dict], dict[str, float]]:
    from rag.index import embed_query, load_report_index
    from rag.retrieve import rrf

    shas = {r.sha1 for r in ds.reports}
    top = cfg.retrieve.top_k_chunks
    cache: dict[str, object] = {}
    rows = []
    for q in ds.questions:
        gold = ds.gold.get(q.text)
        if gold is None:
            continue
        for pool in gold.pools:
            in_subset = [ref for ref in pool if ref.sha1 in shas]
            if not in_subset:
                continue
            sha1 = in_subset[0].sha1
            pages = {ref.page for ref in in_subset if ref.sha1 == sha1}
            if sha1 not in cache:
                cache[sha1] = load_report_index(cfg, sha1)
            ix = cache[sha1]
            n = len(ix.chunks)
            dense = ix.dense(embed_query(cfg, q.text), n)
            sparse = ix.bm25(q.text, n)
            fused = rrf([[i for i, _ in dense], [i for i, _ in sparse]], cfg.retrieve.rrf_k)
            hybrid = sorted(fused.items(), key=lambda kv: -kv[1])

            def hit(ranking) -> bool:
                return bool(pages & {ix.chunks[i].page for i, _ in ranking[:top]})

            rows.append({"qid": q.qid, "kind": q.kind, "sha1": sha1[:8], "dense": hit(dense), "bm25": hit(sparse),
                         "hybrid": hit(hybrid)})
    n = len(rows) or 1
    rates = {m: sum(r[m] for r in rows) / n for m in ("dense", "bm25", "hybrid")}
    return rows, rates


def dir_bytes(d: Path) -> int:
    return sum(p.stat().st_size for p in d.rglob("*") if p.is_file())


def embedder_overflow(cfg, ds) -> dict[str, float] | None:
    """How much chunk text never reaches the dense index: chunks are sized in cl100k tokens, the local
    embedder reads at most ``embed.max_input_tokens`` of its own wordpieces ([CLS]/[SEP] included) and,
    with ``embed.long_text="truncate"``, drops the rest. Returns chunks, share of chunks over the limit,
    share of all wordpieces cut (0 with ``long_text="mean"``: every wordpiece is in some window), windows
    per chunk (mean, max), p50/p90/max wordpieces (None for a non-local embedder)."""
    import numpy as np

    from rag.chunk import load_chunks
    from rag.index import get_embedder

    if cfg.embed.backend != "local":
        return None
    emb = get_embedder(cfg)
    tok = emb.tokenizer  # packaged model, folder or hub name: the tokenizer the embedder itself uses
    texts = [c.text for r in ds.reports for c in load_chunks(cfg, r.sha1, cfg.retrieve.chunk_size)]
    lens = np.array([len(tok(t, verbose=False)["input_ids"]) for t in texts])
    if not len(lens):
        return None
    limit = cfg.embed.max_input_tokens
    mean = cfg.embed.long_text == "mean"
    windows = np.array([emb.windows_per_text(t) for t in texts]) if mean else np.ones(len(texts), dtype=int)
    return {"chunks": int(len(lens)), "over_limit": float((lens > limit).mean()),
            "cut_share": 0.0 if mean else float(np.clip(lens - limit, 0, None).sum() / lens.sum()),
            "windows_mean": float(windows.mean()), "windows_max": int(windows.max()),
            "p50": float(np.percentile(lens, 50)), "p90": float(np.percentile(lens, 90)), "max": int(lens.max())}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--run", default="bench-index")
    ap.add_argument("--preset", default="offline")
    ap.add_argument("--set", action="append", default=[], help="override, e.g. chunk.sizes=[300,1000]")
    args = ap.parse_args(argv)
    ds = load_dataset(args.data)
    cfg = load_config(args.preset, overrides=parse_set(args.set), data_dir=str(Path(args.data).resolve()),
                      run=args.run)
    wall = run_stages(cfg, ds)
    chunk_m, index_m = read_manifest(cfg, "03_chunk"), read_manifest(cfg, "04_index")
    items = chunk_m.get("items", {})
    n_chunks = sum(v.get("counts", {}).get("chunks", 0) for v in items.values())
    chunk_s = sum(chunk_m.get("timings", {}).values()) or None
    idx_items = index_m.get("items", {})
    idx_s = sum(v.get("seconds", 0.0) for v in idx_items.values())
    embed_s = sum(v.get("embed_seconds", 0.0) for v in idx_items.values())
    print(f"\n== {ds.name}: {len(ds.reports)} reports, run {cfg.run}, preset {cfg.preset}, sizes {list(cfg.chunk.sizes)}")
    print("stage wall seconds (this call; reused items are skipped): "
          + ", ".join(f"{k} {v:.1f}" for k, v in wall.items()))
    print(f"chunks: {n_chunks} over all sizes; chunking {'%.0f chunks/s' % (n_chunks / chunk_s) if chunk_s else 'reused'}")
    print(f"index: model {index_m.get('model_name')} dim {index_m.get('dim')}; build seconds (all items, when built) "
          f"{idx_s:.1f} of which embedding {embed_s:.1f} ({n_chunks / embed_s if embed_s else 0:.1f} chunks/s)")
    print(f"index size on disk: {dir_bytes(cfg.run_dir / '04_index') / 1e6:.1f} MB "
          f"(by size: {index_m.get('bytes_by_size')})")
    over = embedder_overflow(cfg, ds)
    if over:
        print(f"embedder input: {over['chunks']} chunks of size {cfg.retrieve.chunk_size}, wordpieces p50 "
              f"{over['p50']:.0f} p90 {over['p90']:.0f} max {over['max']}; over the {cfg.embed.max_input_tokens}-"
              f"wordpiece limit: {over['over_limit']:.1%} of chunks, {over['cut_share']:.1%} of all wordpieces "
              f"never reach the dense index (embed.long_text={cfg.embed.long_text}: {over['windows_mean']:.2f} "
              f"windows a chunk, max {over['windows_max']})")
    rows, rates = hit_rates(cfg, ds)
    print(f"\npage hit@{cfg.retrieve.top_k_chunks} chunks, chunk size {cfg.retrieve.chunk_size}, "
          f"{len(rows)} gold pools (report given, no routing):")
    print(f"{'':8}{'dense':>8}{'bm25':>8}{'hybrid':>8}")
    print(f"{'all':8}" + "".join(f"{rates[m]:8.2f}" for m in ("dense", "bm25", "hybrid")))
    for kind in sorted({r["kind"] for r in rows}):
        sub = [r for r in rows if r["kind"] == kind]
        print(f"{kind:8}" + "".join(f"{sum(r[m] for r in sub) / len(sub):8.2f}" for m in ("dense", "bm25", "hybrid"))
              + f"   (n={len(sub)})")
    for r in rows:
        print(f"  {r['qid']} {r['kind']:<11} {r['sha1']}  dense={int(r['dense'])} bm25={int(r['bm25'])} "
              f"hybrid={int(r['hybrid'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
