"""Stage-05-like records from BM25 alone, in memory, for number questions (a stand-in when a run has
01..03 but no stage-04 dense index yet; used to measure rag.answer.numbers.figures on erc2-val).

    .venv/bin/python benchmarks/bm25_records.py --data ../main/data/erc2-val --run-in figsample --run-out figval_bm25

Reads ``outputs/<run-in>/03_chunk`` and ``02_clean``; routes each number question (``rag.retrieve.route``), builds
a bm25s index of each routed report's chunks and retrieves with the pipeline's own search (lexicon
query, ``retrieve.mode=bm25``, ``lift_to_pages``); writes ``outputs/<run-out>/05_retrieve/<qid>.json``
in stage 05's shape (routed, candidates) and links ``02_clean``. Not stage 05: no dense search, no rerank.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--run-in", required=True)
    ap.add_argument("--run-out", required=True)
    ap.add_argument("--outputs", default="outputs")
    ap.add_argument("--preset", default="offline")
    args = ap.parse_args(argv)

    import bm25s

    from rag.core.artifacts import read_json
    from rag.chunk import load_chunks
    from rag.core.config import load_config
    from rag.core.dataset import load_dataset
    from rag.index import ReportIndex, bm25_tokens
    from rag.retrieve import retrieve_pages
    from rag.retrieve.route import route

    ds = load_dataset(args.data, check_hashes=False)
    cfg = load_config(args.preset, data_dir=str(Path(args.data).resolve()), run=args.run_in, outputs_dir=args.outputs,
                      overrides={"rerank.mode": "none", "retrieve.mode": "bm25"})
    run_out = cfg.run_dir.parent / args.run_out
    out = run_out / "05_retrieve"
    out.mkdir(parents=True, exist_ok=True)
    if not (run_out / "02_clean").exists():
        (run_out / "02_clean").symlink_to(cfg.run_dir.resolve() / "02_clean")
    idx, texts = {}, {}
    t0 = time.time()
    for q in ds.questions:
        if q.kind != "number":
            continue
        sha1s = route(q.text, ds.reports)
        cands = {}
        for s in sha1s:
            if s not in idx:
                chunks = load_chunks(cfg, s, cfg.retrieve.chunk_size)
                bm = bm25s.BM25()
                bm.index([bm25_tokens(c.text) for c in chunks], show_progress=False)
                idx[s] = ReportIndex(s, cfg.retrieve.chunk_size, "none", 0, chunks, None, bm)
                texts[s] = {p["page"]: p["markdown"] for p in read_json(cfg.run_dir / "02_clean" / f"{s}.json")["pages"]}
            pages = retrieve_pages(cfg, q.text, s, index=idx[s], texts=texts[s], embed=lambda t: None)
            cands[s] = [p.model_dump(mode="json") for p in pages]
        rec = {"qid": q.qid, "question": q.text, "kind": q.kind, "sub_questions": {}, "candidates": cands,
               "routed": [{"sha1": s, "company": ds.report(s).company} for s in sha1s]}
        (out / f"{q.qid}.json").write_text(json.dumps(rec))
    print(f"# {len(list(out.glob('q*.json')))} records in {out} ({time.time() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
