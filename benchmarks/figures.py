"""Benchmark table candidates for number questions (rag.answer.numbers.figures) on a dataset with gold answers.

    .venv/bin/python benchmarks/figures.py --run dev --data ../shared/erc2-dev [--outputs ../main/outputs]
        [--preset offline] [--set K=V] [--ks 0,10] [--show] [--llm [--variants pick,pick_fb] [--baseline] [--limit N]]

Reads the run's ``05_retrieve`` records (read-only; another process may have written them) and, for
every number question with gold, builds the candidates of the top-k retrieved pages (k = 0 means
``answer.max_pages``) and prints:

(a) candidate recall: share of non-N/A-gold questions whose gold value (within 1%) is a candidate
    (in the list shown to the model, and among all candidates before the list is cut), and whose
    gold page is a candidate's page (and, for reference, among the top-k pages at all);
(b) for N/A-gold questions, the share with no candidate (a proxy for N/A precision);
(c) average list length, tokens of the pick prompt vs today's text-reading prompt(s);
(d) "code pick": the best-scoring candidate, no model (N/A when the list is empty): accuracy.
With ``--llm`` (the preset's model; the llama.cpp server is started) each question is answered by
``rag.answer.fuse.answer_pages`` with ``answer.table_candidates`` on (``pick``: the pick, or today's reading
when there is no candidate; ``pick_fb``: also today's reading after an N/A pick), and with
``--baseline`` also with it off (``today``: today's reader). Only questions with candidates are asked
unless ``--all-questions`` (without candidates every variant is today's reader): accuracy, N/A precision
and recall, prompt tokens and seconds per question. Numbers only; nothing is written to the run.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pandas as pd  # noqa: E402

from rag.answer.numbers import figure_pick, figures  # noqa: E402
from rag.core.config import load_config  # noqa: E402
from rag.answer.common.context import candidates_by_report, merged_pages, pack_parts, report_or_none  # noqa: E402
from rag.retrieve import load_retrieval  # noqa: E402
from rag.core.dataset import load_dataset  # noqa: E402
from rag.answer.fuse import prompts_dir  # noqa: E402
from rag.answer.common.prompts import NA, build_messages, format_context  # noqa: E402
from rag.evaluate.scoring import is_na, score_answer, score_number  # noqa: E402

ALL_CANDIDATES = 1000  # "all candidates": the list before it is cut to answer.figure_max_candidates
VARIANTS = {"pick": {"answer.table_candidates": True},  # the pick; pages read only without candidates
            "pick_fb": {"answer.table_candidates": True, "answer.figure_na_fallback": True},  # ...or on an N/A pick
            "code": {"answer.table_candidates": True, "answer.figure_pick": "code"},  # best candidate, no pick call
            "today": {"answer.table_candidates": False}}


def _tokens(messages, counter) -> int:
    return sum(counter(m["content"]) for m in messages)


def _today_tokens(cfg, q, pages, counter) -> int:
    """Prompt tokens of today's number reading (every part of the top max_pages pages)."""
    top = pages[: cfg.answer.max_pages]
    parts = pack_parts(top, cfg.answer.max_context_tokens, counter, cfg.answer.pages_per_call.get("number", 0))
    return sum(_tokens(build_messages("number", format_context([p.text for p in part]), q.text), counter)
               for part in parts)


_CLEAN: dict[str, dict[int, str]] = {}


def _gold_pages(cfg, refs):
    """CtxPages of gold (sha1, page) refs from the run's 02_clean (those whose report is there)."""
    from rag.core.artifacts import read_json
    from rag.answer.common.context import CtxPage

    out = []
    for sha1, page in refs:
        if sha1 not in _CLEAN:
            path = cfg.run_dir / "02_clean" / f"{sha1}.json"
            _CLEAN[sha1] = {p["page"]: p["markdown"] for p in read_json(path)["pages"]} if path.exists() else {}
        if page in _CLEAN[sha1]:
            out.append(CtxPage(sha1, page, _CLEAN[sha1][page], len(out), 1.0))
    return out


def _gold_value_hit(cands, answers) -> bool:
    return any(score_number(c.value, a) for c in cands for a in answers)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="../shared/erc2-dev")
    ap.add_argument("--run", default="dev")
    ap.add_argument("--outputs", default="../main/outputs", help="outputs_dir holding <run>/05_retrieve (read only)")
    ap.add_argument("--preset", default="offline")
    ap.add_argument("--set", action="append", default=[], help="extra override KEY=VALUE")
    ap.add_argument("--ks", default="0,10", help="pages searched for candidates; 0 = answer.max_pages")
    ap.add_argument("--show", action="store_true", help="one line per question")
    ap.add_argument("--llm", action="store_true", help="also answer with the model (pick, fallback reading)")
    ap.add_argument("--variants", default="pick", help=f"with --llm: of {','.join(VARIANTS)}")
    ap.add_argument("--baseline", action="store_true", help="with --llm: also today's text reader")
    ap.add_argument("--limit", type=int, default=0, help="with --llm: only the first N number questions")
    ap.add_argument("--all-questions", action="store_true",
                    help="with --llm: also questions without candidates (answered alike by every variant)")
    args = ap.parse_args(argv)

    from rag.models import count_tokens
    from rag.pipeline import parse_set

    data = str(Path(args.data).resolve())
    over = {"rerank.mode": "none", **parse_set(args.set)}
    base = load_config(args.preset, data_dir=data, run=args.run, outputs_dir=str(Path(args.outputs).resolve()),
                       overrides=over)
    ds = load_dataset(data, check_hashes=False)
    counter = lambda t: count_tokens(t, base)  # noqa: E731
    cfg_all = load_config(args.preset, data_dir=data, run=args.run, outputs_dir=base.outputs_dir,
                          overrides={**over, "answer.figure_max_candidates": ALL_CANDIDATES})
    qs = [q for q in ds.questions if q.kind == "number" and ds.gold.get(q.text)]
    ks = [int(k) or base.answer.max_pages for k in args.ks.split(",")]
    rows = []
    for q in qs:
        gold = ds.gold[q.text]
        try:
            rec = load_retrieval(base, q.qid)
        except FileNotFoundError:  # no 05 record (a run with 02 only): the gold-page line alone is meaningful
            from rag.core.records import RetrievalRecord

            rec = RetrievalRecord.model_validate({
                "qid": q.qid, "question": q.text, "kind": q.kind, "sub_questions": {}, "candidates": {},
                "routed": [{"sha1": r.sha1, "company": ""} for pool in gold.pools for r in pool[:1]][:1]})
        sha1s = rec.routed_sha1s
        pages = merged_pages(candidates_by_report(rec), sha1s)
        rep = report_or_none(ds, sha1s[0]) if sha1s else None
        cur, company = (rep.currency, rep.company) if rep else (None, "")
        pools = {(r.sha1, r.page) for pool in gold.pools for r in pool}
        row = {"qid": q.qid, "gold": gold.answers[0], "gold_na": is_na(gold.answers[0]), "pages": len(pages),
               "q": q.text[:90], "today_tokens": _today_tokens(base, q, pages, counter) if pages else 0}
        for k in ks:
            every = figures.build_candidates(cfg_all, q.text, pages[:k], cur, company)
            shown = every[: base.answer.figure_max_candidates]
            code = shown[0].value if shown else NA
            msgs = figure_pick.pick_messages(q.text, shown, prompts_dir(base))
            row.update({f"n@{k}": len(shown), f"n_all@{k}": len(every),
                        f"hit@{k}": _gold_value_hit(shown, gold.answers),
                        f"hit_all@{k}": _gold_value_hit(every, gold.answers),
                        f"page@{k}": any((c.sha1, c.page) in pools for c in shown),
                        f"ctx_page@{k}": any((p.sha1, p.page) in pools for p in pages[:k]),
                        f"code@{k}": score_answer(code, gold), f"code_value@{k}": code,
                        f"code_label@{k}": shown[0].label if shown else "",
                        f"pick_tokens@{k}": _tokens(msgs, counter) if shown else 0})
        if pools:  # extraction alone: the candidates of the gold pages (02_clean), retrieval aside
            gp = _gold_pages(base, sorted(pools))
            every = figures.build_candidates(cfg_all, q.text, gp, cur, company)
            row.update(oracle_pages=len(gp), oracle_hit=_gold_value_hit(every[: base.answer.figure_max_candidates],
                                                                        gold.answers),
                       oracle_hit_all=_gold_value_hit(every, gold.answers))
        rows.append(row)
    df = pd.DataFrame(rows)
    real, nag = df[~df.gold_na], df[df.gold_na]
    print(f"# {args.run}: {len(df)} number questions with gold ({len(real)} with a value, {len(nag)} N/A); "
          f"max_pages={base.answer.max_pages}, list <= {base.answer.figure_max_candidates}")
    table = []
    for k in ks:
        has = df[f"n@{k}"] > 0
        table.append({
            "k": k,
            "value_recall": real[f"hit@{k}"].mean(), "value_recall_all": real[f"hit_all@{k}"].mean(),
            "gold_page_in_cands": real[f"page@{k}"].mean(), "gold_page_in_topk": real[f"ctx_page@{k}"].mean(),
            "na_gold_empty": (nag[f"n@{k}"] == 0).mean() if len(nag) else float("nan"),
            "avg_list": df[f"n@{k}"].mean(), "avg_all": df[f"n_all@{k}"].mean(),
            "pick_tokens": df.loc[has, f"pick_tokens@{k}"].mean() if has.any() else 0,
            "today_tokens": df["today_tokens"].mean(),
            "code_acc": df[f"code@{k}"].mean(), "code_acc_value": real[f"code@{k}"].mean(),
            "code_acc_na": nag[f"code@{k}"].mean() if len(nag) else float("nan"),
        })
    if "oracle_hit" in df:
        o = df[~df.gold_na & (df.get("oracle_pages", 0) > 0)]
        print(f"# gold pages as the context (extraction alone, {len(o)} questions with a value and gold pages in 02): "
              f"value in list {o.oracle_hit.mean():.3f}, among all candidates {o.oracle_hit_all.mean():.3f}")
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 40)
    pd.set_option("display.max_colwidth", 60)
    print(pd.DataFrame(table).round(3).to_string(index=False))
    if args.show:
        k = ks[0]
        cols = ["qid", "gold", f"code_value@{k}", f"code@{k}", f"n@{k}", f"hit@{k}", f"hit_all@{k}", f"page@{k}",
                *(["oracle_hit_all"] if "oracle_hit_all" in df else []), f"code_label@{k}", "q"]
        print(df[cols].to_string(index=False))
    if args.llm:
        run_llm(args, base, ds, qs[: args.limit] if args.limit else qs, counter)
    return 0


def run_llm(args, base, ds, qs, counter) -> None:
    from rag.core.config import load_config as lc
    from rag.answer.fuse import answer_pages
    from rag.models import get_llm

    variants = {k: VARIANTS[k] for k in args.variants.split(",")}
    if args.baseline:
        variants["today"] = VARIANTS["today"]
    over = {"rerank.mode": "none"}
    from rag.pipeline import parse_set

    over.update(parse_set(args.set))
    out = []
    for name, v in variants.items():
        cfg = lc(args.preset, data_dir=base.data_dir, run=base.run, outputs_dir=base.outputs_dir,
                 overrides={**over, **v})
        llm = get_llm(cfg)
        for q in qs:
            gold = ds.gold[q.text]
            rec = load_retrieval(cfg, q.qid)
            sha1s = rec.routed_sha1s
            pages = merged_pages(candidates_by_report(rec), sha1s)
            rep = report_or_none(ds, sha1s[0]) if sha1s else None
            if not args.all_questions:  # without candidates every variant is today's reader: not asked
                pick_cfg = lc(args.preset, data_dir=base.data_dir, run=base.run, outputs_dir=base.outputs_dir,
                              overrides={**over, **VARIANTS["pick"]})
                top = pages[: pick_cfg.answer.figure_pages or pick_cfg.answer.max_pages]
                if not figures.build_candidates(pick_cfg, q.text, top, rep.currency if rep else None,
                                                rep.company if rep else ""):
                    continue
            t0 = time.perf_counter()
            if pages:
                res = answer_pages(llm, cfg, "number", q.text, pages, rep.currency if rep else None, counter,
                                   rep.company if rep else "")
            else:
                res = {"value": NA, "calls": [], "interpretation": {}}
            secs = time.perf_counter() - t0
            calls = res["calls"]
            out.append({"variant": name, "qid": q.qid, "gold": gold.answers[0], "gold_na": is_na(gold.answers[0]),
                        "value": res["value"], "score": score_answer(res["value"], gold),
                        "source": (res.get("interpretation") or {}).get("source", "text"),
                        "prompt_tokens": sum(int((c.get("usage") or {}).get("prompt_tokens", 0) or 0) for c in calls),
                        "calls": len(calls), "seconds": secs,
                        "cached": all((c.get("usage") or {}).get("cached") for c in calls) if calls else False})
            print(f"  {name} {q.qid} gold={gold.answers[0]} value={res['value']} score={out[-1]['score']} "
                  f"src={out[-1]['source']} {secs:.1f}s", flush=True)
    df = pd.DataFrame(out)
    summary = []
    for name, g in df.groupby("variant", sort=False):
        ans_na = g.value.apply(lambda v: v == NA)
        summary.append({"variant": name, "n": len(g), "acc": g.score.mean(),
                        "acc_value": g[~g.gold_na].score.mean(), "acc_na": g[g.gold_na].score.mean(),
                        "na_precision": (g.gold_na & ans_na).sum() / ans_na.sum() if ans_na.any() else float("nan"),
                        "na_recall": (g.gold_na & ans_na).sum() / g.gold_na.sum() if g.gold_na.any() else float("nan"),
                        "from_tables": (g.source == "tables").mean(),
                        "tokens_per_q": g.prompt_tokens.mean(), "calls_per_q": g.calls.mean(),
                        "s_per_q": g.seconds.mean(), "cached_share": g.cached.mean()})
    print(pd.DataFrame(summary).round(3).to_string(index=False))
    wide = df.pivot(index="qid", columns="variant", values="score")
    for v in [v for v in variants if v != "today"]:
        if "today" in variants:
            print(f"# per question ({v} vs today): both right", int(((wide[v] == 1) & (wide["today"] == 1)).sum()),
                  f"| {v} only", int(((wide[v] == 1) & (wide["today"] == 0)).sum()),
                  "| today only", int(((wide[v] == 0) & (wide["today"] == 1)).sum()))


if __name__ == "__main__":
    raise SystemExit(main())
