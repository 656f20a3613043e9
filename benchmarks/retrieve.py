"""Benchmark stage 05 retrieval variants side by side on a dataset with gold pages.

    .venv/bin/python benchmarks/retrieve.py --data ../shared/erc2-dev [--run dev] [--preset offline]
        [--variants dense,bm25,hybrid,hybrid+llm,hybrid+lex,hybrid+lex+llm] [--limit N] [--write]
        [--no-upstream] [--set K=V]

Runs stages 01..04 through their ``run_*`` functions (current items are skipped, so an existing
``outputs/<run>`` is reused), then, for every variant, retrieves (and reranks) each question that has
gold pages, in memory, and prints the retrieval metrics (``rag.evaluate.retrieval_metrics``: gold-pool hit@1/5/10,
page recall@10, MRR, nDCG@10) with seconds per question. For rerank variants it also prints hit@k of the
same candidates in pre-rerank order, i.e. rerank's own effect. ``--write`` then runs ``run_retrieve``
with the preset's own config so ``05_retrieve`` is filled for the answer stage. Numbers only.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pandas as pd  # noqa: E402

from rag.core.config import load_config  # noqa: E402
from rag.core.dataset import load_dataset  # noqa: E402
from rag.evaluate.retrieval_metrics import metrics_from_records  # noqa: E402
from rag.retrieve import retrieve_question, run_retrieve  # noqa: E402

_NO_LEX = {"retrieve.lexicon_expansion": False}
_LEX = {"retrieve.lexicon_expansion": True, "retrieve.lexicon_dense": True}
VARIANTS = {
    "dense": {"retrieve.mode": "dense", "rerank.mode": "none", **_NO_LEX},
    "bm25": {"retrieve.mode": "bm25", "rerank.mode": "none", **_NO_LEX},
    "hybrid": {"retrieve.mode": "hybrid", "rerank.mode": "none", **_NO_LEX},
    "hybrid+llm": {"retrieve.mode": "hybrid", "rerank.mode": "llm", **_NO_LEX},
    "hybrid+qe": {"retrieve.mode": "hybrid", "rerank.mode": "none", "retrieve.query_expansion": True, **_NO_LEX},
    # lexicon topics (prompts/search/lexicon.toml, the default): words join BM25 and one more dense query
    "dense+lex": {"retrieve.mode": "dense", "rerank.mode": "none", **_LEX},
    "bm25+lex": {"retrieve.mode": "bm25", "rerank.mode": "none", **_LEX},
    "hybrid+lex-bm25": {"retrieve.mode": "hybrid", "rerank.mode": "none", **_LEX, "retrieve.lexicon_dense": False},
    "hybrid+lex": {"retrieve.mode": "hybrid", "rerank.mode": "none", **_LEX},
    "hybrid+lex+llm": {"retrieve.mode": "hybrid", "rerank.mode": "llm", **_LEX},
}


def run_upstream(cfg, ds) -> None:
    from rag.chunk import run_chunk
    from rag.clean import run_clean
    from rag.index import run_index
    from rag.parse import run_parse

    for fn in (run_parse, run_clean, run_chunk, run_index):
        t0 = time.perf_counter()
        fn(cfg, ds, progress=False)
        print(f"# {fn.__name__}: {time.perf_counter() - t0:.1f} s", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="../shared/erc2-dev")
    ap.add_argument("--run", default="dev")
    ap.add_argument("--preset", default="offline")
    ap.add_argument("--variants", default="dense,bm25,hybrid,hybrid+llm,hybrid+lex,hybrid+lex+llm")
    ap.add_argument("--limit", type=int, default=0, help="only the first N questions with gold pages")
    ap.add_argument("--set", action="append", default=[], help="extra override KEY=VALUE for every variant")
    ap.add_argument("--write", action="store_true", help="also run run_retrieve with the preset's config")
    ap.add_argument("--no-upstream", action="store_true",
                    help="read the run's 01..04 outputs as they are (another process's run: never written)")
    args = ap.parse_args(argv)

    from rag.pipeline import parse_set

    extra = parse_set(args.set)
    data = str(Path(args.data).resolve())
    base = load_config(args.preset, data_dir=data, run=args.run, overrides=extra)
    ds = load_dataset(data)
    if not args.no_upstream:
        run_upstream(base, ds)
    qs = [q for q in ds.questions if ds.gold.get(q.text) and ds.gold[q.text].pools]
    if args.limit:
        qs = qs[:args.limit]
    print(f"# {len(qs)} questions with gold pages of {len(ds.questions)}; preset {args.preset}, run {args.run}")

    tables, llm = [], None
    try:
        for name in args.variants.split(","):
            over = {**extra, **VARIANTS[name]}
            cfg = load_config(args.preset, data_dir=data, run=args.run, overrides=over)
            if llm is None and (cfg.rerank.mode == "llm" or cfg.retrieve.query_expansion):
                from rag.models import get_llm

                llm = get_llm(cfg)
            t0 = time.perf_counter()
            recs, tokens = {}, 0
            for q in qs:
                recs[q.qid] = retrieve_question(cfg, q, ds, llm=llm)
                if llm is not None:
                    print(f"#   {name} {q.qid}: {recs[q.qid].seconds:.1f} s", flush=True)
                usage = recs[q.qid].usage  # a RetrievalRecord (typed); usage is the model layer's dict
                tokens += usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
            spq = (time.perf_counter() - t0) / max(1, len(qs))
            orders = ["final"] + (["retrieval"] if cfg.rerank.mode != "none" else [])
            for order in orders:
                m = metrics_from_records(recs, ds, order)
                row = m[m.group == "all"].iloc[0].to_dict()
                label = name if order == "final" else f"{name} (pre-rerank order)"
                tables.append({"variant": label, **row, "s/question": round(spq, 2), "llm_tokens": tokens})
                by_kind = m[m.group != "all"][["group", "n", "hit@1", "hit@10"]]
                print(f"## {label}: {spq:.2f} s/question\n{by_kind.to_string(index=False)}", flush=True)
    finally:
        if llm is not None:
            from rag.models import shutdown_all

            shutdown_all()  # stop the local llama.cpp server this run started
    df = pd.DataFrame(tables)
    with pd.option_context("display.width", 200, "display.float_format", "{:.3f}".format):
        print(df.to_string(index=False))
    if args.write:
        t0 = time.perf_counter()
        run_retrieve(base, ds, progress=True)
        print(f"# run_retrieve ({base.retrieve.mode}, rerank {base.rerank.mode}): {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
