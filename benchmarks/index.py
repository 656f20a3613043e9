"""Benchmark stages 01..04 on a dataset and the chunk-level page recall of dense, BM25 and hybrid search.

Usage (from the repository root)::

    .venv/bin/python benchmarks/index.py --data ../shared/erc2-dev [--run NAME] [--preset offline]
                                         [--set chunk.sizes=[300,1000]] [--set retrieve.chunk_size=1000]

Runs (or reuses, through the stages' currency keys) run_parse -> run_clean -> run_chunk -> run_index,
prints chunks/s, index seconds and size on disk from the manifests, then, for every question with gold
pages and every gold pool: is a gold page among the pages of the top ``retrieve.top_k_chunks`` chunks of
the pool's report (the pool's sha1 that is in subset.csv; routing is not measured here)? Three hit
rates side by side: dense, BM25, hybrid (reciprocal rank fusion with ``retrieve.rrf_k`` over the full
rankings of both). Prints numbers only; nothing is asserted. Every chunk is embedded by 04 here
(``index.chunk_vectors=stored``, ``retrieve.dense_pool=0`` go before your ``--set``s).

Embedding runtimes side by side (issue 29)::

    .venv/bin/python benchmarks/index.py --data ../shared/erc2-dev --run dev --runtimes torch,onnx,onnx-int8,onnx/1

After 01..03, each runtime (``name``, ``name/threads``: ``embed.threads``; ``+unsorted``: one model call per
batch in input order, as before issue 29; ``+float32`` / ``+bfloat16``: torch's ``embed.precision``, else the
config's "auto", which is bfloat16 on a CPU with AMX) runs in its own child process,
back to back under the same conditions (``--max-chunks N``: only the smallest reports up to N chunks and
their gold questions): 01..03 are hard-linked into ``<run>-rt-<name>``, its 04_index is
removed and rebuilt with ``embed.runtime=<name>`` and the embedding cache off (every vector computed);
then stage-05 retrieval of every gold question (``rag.retrieve.retrieve_question``, the preset's own
mode and ``dense`` alone) scored with ``rag.evaluate.retrieval_metrics`` (gold-pool hit@1/5/10). One row
per runtime: dense top-10 overlap with the first runtime (every question of the set against every
report's index: the share of the first runtime's top-10 chunks also returned, and of identical top-1),
chunks/s (embedding seconds from 04's metas; model load and export excluded, load shown
apart), 04 wall and CPU seconds (chunks per CPU second: what other processes' load barely changes), peak
RSS of the child (ru_maxrss) and hit@k.
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


def run_stages(cfg, ds, upto: str = "04_index") -> dict[str, float]:
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
        if name == upto:
            break
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


def runtime_row(args, spec: str) -> dict:
    """In this (child) process: rebuild 04 of ``<run>-rt-<name>`` with runtime ``spec`` and score retrieval."""
    import resource
    import shutil

    from rag.ablate import link_stage
    from rag.evaluate.retrieval_metrics import metrics_from_records
    from rag.index import run_index
    from rag.models import get_embedder
    from rag.retrieve import retrieve_question

    body, *flags = spec.split("+")
    name, _, threads = body.partition("/")
    if "unsorted" in flags:  # the torch path as it was before issue 29: one model call per batch, in input order
        from rag.models.embed_local import LocalEmbedder

        LocalEmbedder.sort_window = 1
    data = str(Path(args.data).resolve())
    ds = subset(load_dataset(args.data), args)
    over = {**parse_set(args.set), "embed.runtime": name, "embed.cache": False}
    if threads:
        over["embed.threads"] = int(threads)
    for p in ("float32", "bfloat16"):  # torch's weights dtype (embed.precision; "auto" without a flag)
        if p in flags:
            over["embed.precision"] = p
    base = load_config(args.preset, overrides=parse_set(args.set), data_dir=data, run=args.run)
    run = f"{args.run}-rt-{spec.replace('/', '-t').replace('+', '-')}"
    cfg = load_config(args.preset, overrides=over, data_dir=data, run=run)
    for stage in ("01_parse", "02_clean", "03_chunk"):
        link_stage(base.run_dir, cfg.run_dir, stage)
    shutil.rmtree(cfg.run_dir / "04_index", ignore_errors=True)
    t0 = time.perf_counter()
    emb = get_embedder(cfg)
    emb.embed(["warm up: load the model (and export it when it was never exported)"])
    load_s = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), _cpu_s()
    run_index(cfg, ds, progress=False)
    index_s, index_cpu = time.perf_counter() - t0, _cpu_s() - c0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    items = read_manifest(cfg, "04_index").get("items", {})
    chunks = sum(v.get("chunks", 0) for v in items.values())
    embed_s = sum(v.get("embed_seconds", 0.0) for v in items.values())
    qs = [q for q in ds.questions if ds.gold.get(q.text) and ds.gold[q.text].pools]
    row = {"runtime": spec, "threads": getattr(emb, "threads", None), "precision": getattr(emb, "precision", None),
           "chunks": chunks, "embed_s": round(embed_s, 1),
           "chunks/s": round(chunks / embed_s, 1) if embed_s else None, "index_wall_s": round(index_s, 1),
           "index_cpu_s": round(index_cpu, 1), "chunks/cpu_s": round(chunks / index_cpu, 2) if index_cpu else None,
           "load_s": round(load_s, 1), "peak_rss_mb": round(peak_mb), "questions": len(qs)}
    # Every question against every report's dense index: top-10 chunks, compared across runtimes by the parent.
    from rag.index import embed_query, load_report_index

    idx = {r.sha1: load_report_index(cfg, r.sha1) for r in ds.reports}
    qv = {q.qid: embed_query(cfg, q.text) for q in load_dataset(args.data).questions}
    row["dense_top10"] = {f"{qid}:{sha1[:8]}": [i for i, _ in ix.dense(v, 10)] for qid, v in qv.items()
                          for sha1, ix in idx.items()}
    for mode in dict.fromkeys((cfg.retrieve.mode, "dense")) if qs else ():  # no gold question: no hit@k
        rcfg = load_config(args.preset, overrides={**over, "retrieve.mode": mode, "rerank.mode": "none"},
                           data_dir=data, run=cfg.run)
        recs = {q.qid: retrieve_question(rcfg, q, ds) for q in qs}
        m = metrics_from_records(recs, ds, "final")
        allrow = m[m.group == "all"].iloc[0]
        for k in (1, 5, 10):
            row[f"{mode} hit@{k}"] = round(float(allrow[f"hit@{k}"]), 3)
    return row


def _cpu_s() -> float:
    """CPU seconds (user + system) of this process so far: contention by other processes barely moves it."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def subset(ds, args):
    """With ``--max-chunks N``: the smallest reports (by 03's chunk count at ``retrieve.chunk_size``) while
    their chunks total at most N, and only the gold questions whose every pool lies in them (a shared
    machine cannot embed the whole set three times); otherwise ``ds`` unchanged."""
    if not args.max_chunks:
        return ds
    from rag.chunk import load_chunks

    cfg = load_config(args.preset, overrides=parse_set(args.set), data_dir=str(Path(args.data).resolve()),
                      run=args.run)
    sizes = sorted((len(load_chunks(cfg, r.sha1, cfg.retrieve.chunk_size)), r.sha1) for r in ds.reports)
    keep, total = set(), 0
    for n, sha1 in sizes:
        if total + n > args.max_chunks:
            break
        keep.add(sha1)
        total += n
    qs = tuple(q for q in ds.questions if (g := ds.gold.get(q.text)) and g.pools
               and all(ref.sha1 in keep for pool in g.pools for ref in pool))
    return ds.model_copy(update={"reports": tuple(r for r in ds.reports if r.sha1 in keep), "questions": qs})


def compare_runtimes(args, specs: list[str]) -> None:
    """One child process per runtime, back to back; a table of their rows."""
    import json
    import subprocess

    rows = []
    for spec in specs:
        cmd = [sys.executable, __file__, "--data", args.data, "--run", args.run, "--preset", args.preset,
               "--runtime-row", spec, "--max-chunks", str(args.max_chunks)]
        cmd += [a for s in args.set for a in ("--set", s)]
        t0 = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode:
            print(f"# {spec}: failed (exit {out.returncode}): {out.stderr[-2000:]}", flush=True)
            continue
        row = json.loads(out.stdout.strip().splitlines()[-1])
        top = row.pop("dense_top10")
        if rows:  # share of the first runtime's dense top-10 chunks this one also returns (1.0 = same lists)
            ref = rows[0]["_top"]
            row["top10_overlap"] = round(sum(len(set(top[k]) & set(ref[k])) / max(1, len(ref[k])) for k in ref)
                                         / max(1, len(ref)), 4)
            row["top1_same"] = round(sum(top[k][:1] == ref[k][:1] for k in ref) / max(1, len(ref)), 4)
        print(f"# {spec}: {time.perf_counter() - t0:.0f} s {row}", flush=True)
        rows.append({**row, "_top": top})
    if rows:
        import pandas as pd

        with pd.option_context("display.width", 250, "display.max_columns", 40):
            print(pd.DataFrame([{k: v for k, v in r.items() if k != "_top"} for r in rows]).to_string(index=False))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--run", default="bench-index")
    ap.add_argument("--preset", default="offline")
    ap.add_argument("--set", action="append", default=[], help="override, e.g. chunk.sizes=[300,1000]")
    ap.add_argument("--runtimes", default="", help="compare embedding runtimes, e.g. torch,onnx,onnx-int8,onnx/1")
    ap.add_argument("--max-chunks", type=int, default=0,
                    help="--runtimes on the smallest reports up to this many chunks (and their gold questions)")
    ap.add_argument("--runtime-row", default="", help=argparse.SUPPRESS)  # the child of --runtimes
    args = ap.parse_args(argv)
    # Embedding speed and dense recall are measured on stored vectors (every chunk embedded by 04), whatever
    # the preset's index.chunk_vectors; a --set given here still wins (it comes later).
    if args.runtime_row == "":
        args.set = ["index.chunk_vectors=stored", "retrieve.dense_pool=0", *args.set]
    if args.runtime_row:
        import json

        print(json.dumps(runtime_row(args, args.runtime_row)))
        return 0
    ds = load_dataset(args.data)
    cfg = load_config(args.preset, overrides=parse_set(args.set), data_dir=str(Path(args.data).resolve()),
                      run=args.run)
    if args.runtimes:  # 04 is built by each runtime's child
        wall = run_stages(cfg, ds, upto="03_chunk")
        print("stage wall seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in wall.items()), flush=True)
        compare_runtimes(args, args.runtimes.split(","))
        return 0
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
