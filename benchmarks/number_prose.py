"""Number (and comparative) questions answered by stage 06's candidate picker on BM25-retrieved pages, config variants side by
side, by group (values found of value-gold, N/A precision / recall), with paired flips and the N/A threshold
curve. No stage 04 needed: on a loaded 2-core machine embedding one report took 10 min (1.3 chunks/s), so
this reads 02's clean pages of a run and ranks them per question with BM25 over whole pages (stage 05's
sparse query: the question without boilerplate + search-lexicon terms). Only code picks (no model calls).

    python benchmarks/number_prose.py --run outputs/RUN --data D [--data D2] [--top 10] \\
        --variant base: --variant prose:answer.prose_candidates=true [--curve prose]

RUN: a run whose 02_clean holds the datasets' reports. Each variant is NAME:KEY=VAL,KEY=VAL over the offline
preset. Prints per variant: value-gold found / answered N/A / wrong, N/A-gold answered N/A, N/A precision,
and the paired flips against the first variant; --curve NAME prints that variant's threshold curve
(rag.evaluate.tradeoff's rule: best candidate scoring >= t, else N/A).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag.answer.common.context import CtxPage  # noqa: E402
from rag.answer.fuse import answer_pages  # noqa: E402
from rag.core.dataset import load_dataset  # noqa: E402
from rag.index import bm25_tokens  # noqa: E402
from rag.answer.comparative import comparison_direction  # noqa: E402
from rag.retrieve.query import build_search  # noqa: E402
from rag.retrieve.route import split_comparative  # noqa: E402
from number_replay import right, variants_of  # noqa: E402 - benchmarks/ is on the path when run as a script

THRESHOLDS = (None, 0.3, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)


def pages_of(run: Path, sha1: str) -> list[tuple[int, str]]:
    d = json.loads((run / "02_clean" / f"{sha1}.json").read_text())
    return [(p["page"], p["markdown"]) for p in d["pages"]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", required=True, type=Path)
    ap.add_argument("--data", action="append", required=True)
    ap.add_argument("--top", type=int, default=10, help="pages handed to stage 06 (it reads its own top few)")
    ap.add_argument("--variant", action="append", required=True, metavar="NAME:KEY=VAL,...")
    ap.add_argument("--curve", default=None)
    ap.add_argument("--show", action="store_true", help="print every question's answers")
    ap.add_argument("--llm", action="store_true", help="a real model for variants that ask it (figure_pick=model|auto)")
    a = ap.parse_args()
    import bm25s

    variants = variants_of(a.variant, code_only=False)
    cfg0 = variants[0][1]
    calls = {name: 0 for name, _ in variants}
    if a.llm:
        from rag.models import get_llm

        llms = {name: get_llm(cfg) for name, cfg in variants}
    else:
        llms = {name: None for name, _ in variants}
    rows = []
    cache: dict[str, tuple] = {}
    for d in a.data:
        ds = load_dataset(d)
        for q in ds.questions:
            if q.kind not in ("number", "comparative") or q.text not in ds.gold:
                continue
            by_sha = {r.sha1: r for r in ds.reports}
            if q.kind == "comparative":  # one number sub-question per company (rag.retrieve.route), code pick
                subs = split_comparative(q.text, q.kind, ds.reports)
            else:
                rep = next((r for r in ds.reports if r.company and r.company in q.text), None)
                subs = {rep.sha1: q.text} if rep else {}
            if not subs or not all((a.run / "02_clean" / f"{sha}.json").exists() for sha in subs):
                continue
            gold = list(ds.gold[q.text].answers)
            row = {"q": q.text, "kind": q.kind, "gold": gold, "gold_na": [g.upper() for g in gold] == ["N/A"],
                   "gold_rank": None}
            tops = {}
            for sha, sub_q in subs.items():
                rep = by_sha[sha]
                if sha not in cache:
                    pages = pages_of(a.run, sha)
                    retr = bm25s.BM25()
                    retr.index([bm25_tokens(t) for _, t in pages], show_progress=False)
                    cache[sha] = (pages, retr)
                pages, retr = cache[sha]
                query = bm25_tokens(build_search(cfg0, sub_q, rep.company)["bm25_query"])
                docs, scores = retr.retrieve([query], k=min(a.top, len(pages)), show_progress=False)
                tops[sha] = [CtxPage(sha, pages[i][0], pages[i][1], r, float(s))
                             for r, (i, s) in enumerate(zip(docs[0], scores[0]))]
                gold_pages = {p.page for pool in ds.gold[q.text].pools for p in pool if p.sha1 == sha}
                if q.kind == "number":
                    row["gold_rank"] = next((p.rank + 1 for p in tops[sha] if p.page in gold_pages), None)
            for name, cfg in variants:
                got = {}
                for sha, sub_q in subs.items():
                    rep = by_sha[sha]
                    res = answer_pages(llms[name], cfg, "number", sub_q, tops[sha], rep.currency,
                                       lambda t: len(t) // 4, rep.company)
                    calls[name] += sum(1 for c in res["calls"] if c.get("model") not in ("code", None))
                    got[rep.company] = res["value"]
                    info = res["interpretation"]
                    row[name + ":cands"] = [(c["score"], c["value"], c.get("source", "table"))
                                            for c in info.get("candidates", [])]
                if q.kind == "number":
                    row[name] = next(iter(got.values()))
                else:
                    have = {c: v for c, v in got.items() if isinstance(v, (int, float))}
                    way = comparison_direction(q.text)
                    row[name] = (max if way == "max" else min)(have, key=have.get) if have and way else "N/A"
            rows.append(row)

    comps = [r for r in rows if r["kind"] == "comparative"]
    rows = [r for r in rows if r["kind"] == "number"]
    vg = [r for r in rows if not r["gold_na"]]
    ng = [r for r in rows if r["gold_na"]]
    print(f"questions {len(rows)} (value-gold {len(vg)}, N/A-gold {len(ng)}); gold page in the top "
          f"3: {sum(1 for r in vg if r['gold_rank'] and r['gold_rank'] <= 3)}, top {a.top}: "
          f"{sum(1 for r in vg if r['gold_rank'])} of {len(vg)} value-gold")
    print("| variant | values found / value-gold | value-gold answered N/A | value-gold wrong value | "
          "N/A-gold answered N/A | N/A-gold answered a value | N/A precision |")
    print("|---|---|---|---|---|---|---|")
    base = variants[0][0]
    for name, _ in variants:
        found = sum(right(r[name], r["gold"]) for r in vg)
        vna = sum(r[name] == "N/A" for r in vg)
        nna = sum(r[name] == "N/A" for r in ng)
        prec = nna / (nna + vna) if nna + vna else float("nan")
        print(f"| {name} | {found} / {len(vg)} | {vna} | {len(vg) - found - vna} | {nna} / {len(ng)} | "
              f"{len(ng) - nna} | {prec:.3f} |")
    print("model calls per variant: " + ", ".join(f"{k} {v}" for k, v in calls.items()))
    if comps:
        print(f"\ncomparatives ({len(comps)}, value-gold {sum(not r['gold_na'] for r in comps)}): right per variant: "
              + ", ".join(f"{name} {sum(right(r[name], r['gold']) or (r['gold_na'] and r[name] == 'N/A') for r in comps)}"
                          for name, _ in variants))
        rows_all = rows + comps
    else:
        rows_all = rows
    for name, _ in variants[1:]:
        print(f"\npaired {base} -> {name}:")
        for r in rows_all:
            ok_a = right(r[base], r["gold"]) or (r["gold_na"] and r[base] == "N/A")
            ok_b = right(r[name], r["gold"]) or (r["gold_na"] and r[name] == "N/A")
            if ok_a != ok_b or (a.show and r[base] != r[name]):
                tag = "GAINED" if ok_b and not ok_a else "LOST  " if ok_a and not ok_b else "other "
                print(f"  {tag} {r['kind']} gold={r['gold'][0]} {base}={r[base]} {name}={r[name]} rank={r['gold_rank']} | {r['q'][:100]}")
    if a.curve:
        print(f"\nthreshold curve of {a.curve} (code pick: best candidate scoring >= t, else N/A)")
        print("| threshold | values found | value-gold N/A | N/A-gold N/A | N/A answers | N/A precision | wrong values |")
        print("|---|---|---|---|---|---|---|")
        for t in THRESHOLDS:
            found = vna = nna = wrong = 0
            for r in rows:
                ok = [v for s, v, _ in r[a.curve + ":cands"] if t is None or s >= t]
                if not ok:
                    vna += not r["gold_na"]
                    nna += r["gold_na"]
                elif right(ok[0], r["gold"]) and not r["gold_na"]:
                    found += 1
                else:
                    wrong += 1
            prec = nna / (nna + vna) if nna + vna else float("nan")
            print(f"| {'none' if t is None else t} | {found} / {len(vg)} | {vna} | {nna} / {len(ng)} | {nna + vna} | "
                  f"{prec:.3f} | {wrong} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
