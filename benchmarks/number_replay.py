"""Stage 06's number and comparative answers replayed on a run's own 05 pages, config variants side by side,
by group (values found of value-gold, N/A precision, ERC's reference score), with paired flips. Only code picks: no model calls
(the offline default picks numbers in code; a variant asking the model for a pick is refused).

    python benchmarks/number_replay.py --run outputs/RUN --data D \\
        --variant base: --variant wide:answer.figure_pages=5 [--show] [--totals-only]
        --variant bm25:run=outputs/RUN2          # the same code on another run's 05 pages

RUN: a run scored on D whose 05_retrieve records exist (pages and texts come from them, so 02's text is the
one 05 saw). Each variant is NAME:KEY=VAL,KEY=VAL over the offline preset. Why not a 06 rerun: a number
question costs ~0.05 s here and no stage output is touched, so a rule can be judged on 160 questions in a
few seconds; the notebooks' run stays the measure of record.
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter as Tally
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag.answer import answer_question  # noqa: E402
from rag.core.config import load_config, parse_set  # noqa: E402
from rag.core.dataset import load_dataset  # noqa: E402
from rag.core.dataset import PageRef  # noqa: E402
from rag.evaluate.scoring import score_number, score_references  # noqa: E402
from rag.retrieve import load_retrievals  # noqa: E402


def right(v: object, gold: list[str]) -> bool:
    """A number within ERC's 1% of a gold value, or a comparative's company named exactly."""
    if v == "N/A":
        return False
    if isinstance(v, str):
        return any(v.strip().lower() == g.strip().lower() for g in gold)
    return max(score_number(v, g) for g in gold) == 1.0


def variants_of(specs: list[str], code_only: bool = True) -> list[tuple[str, object, Path | None]]:
    """``NAME:KEY=VAL,KEY=VAL`` specs -> (name, offline config with those overrides, the run whose 05 records
    it reads or None for --run's); ``code_only``: a variant that would ask the model to pick is refused."""
    out = []
    for spec in specs:
        name, _, over = spec.partition(":")
        items = [x for x in over.split(",") if x]
        run = next((Path(x.split("=", 1)[1]) for x in items if x.startswith("run=")), None)
        cfg = load_config("offline", overrides=parse_set([x for x in items if not x.startswith("run=")]))
        if code_only and cfg.answer.figure_pick != "code":
            raise SystemExit(f"variant {name}: figure_pick must be 'code' here (no model calls)")
        out.append((name, cfg, run))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", required=True, type=Path)
    ap.add_argument("--data", required=True)
    ap.add_argument("--variant", action="append", required=True, metavar="NAME:KEY=VAL,...")
    ap.add_argument("--show", action="store_true", help="print every question whose answer differs")
    ap.add_argument("--misses", action="store_true", help="print every question the first variant gets wrong")
    ap.add_argument("--totals-only", action="store_true", help="no per-question line (a report half)")
    a = ap.parse_args()
    ds = load_dataset(a.data)
    recs = load_retrievals(a.run)
    variants = variants_of(a.variant)
    other = {v[2]: load_retrievals(v[2]) for v in variants if v[2] is not None}
    counter = lambda t: len(t) // 4  # noqa: E731 - tokens are only shown in debug records
    rows = []
    for q in ds.questions:
        if q.kind not in ("number", "comparative") or q.text not in ds.gold or q.qid not in recs:
            continue
        gold = list(ds.gold[q.text].answers)
        row = {"qid": q.qid, "q": q.text, "kind": q.kind, "gold": gold, "gold_na": [g.upper() for g in gold] == ["N/A"]}
        pools = ds.gold[q.text].pools
        if any(q.qid not in r for r in other.values()):
            continue
        for name, cfg, run in variants:
            out = answer_question(None, cfg, ds, q, (other[run] if run else recs)[q.qid], counter)
            row[name] = out["value"]
            refs = [PageRef(sha1=r["sha1"], page=r["page"]) for r in out["references"]]
            row[name + ":R"] = score_references(refs, pools)["ref_score"]
        rows.append(row)
    base = variants[0][0]
    if a.misses and not a.totals_only:
        for r in rows:
            if not (right(r[base], r["gold"]) or (r["gold_na"] and r[base] == "N/A")):
                print(f"  MISS {r['qid']} gold={' | '.join(r['gold'])} {base}={r[base]} | {r['q']}")
    print(f"{len(rows)} questions of {a.data} on the 05 pages of {a.run}")
    print("| variant | kind | values found / value-gold | value-gold N/A | value-gold wrong | N/A-gold N/A | "
          "N/A precision | reference score (sum) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, _, _ in variants:
        for kind in ("number", "comparative"):
            rs = [r for r in rows if r["kind"] == kind]
            vg = [r for r in rs if not r["gold_na"]]
            ng = [r for r in rs if r["gold_na"]]
            found = sum(right(r[name], r["gold"]) for r in vg)
            vna = sum(r[name] == "N/A" for r in vg)
            nna = sum(r[name] == "N/A" for r in ng)
            prec = f"{nna / (nna + vna):.3f}" if nna + vna else "-"
            refs = sum(r[name + ":R"] for r in rs)
            print(f"| {name} | {kind} | {found} / {len(vg)} | {vna} | {len(vg) - found - vna} | {nna} / {len(ng)} | "
                  f"{prec} | {refs:.2f} |")
    for name, _, _ in variants[1:]:
        flips = Tally()
        print(f"\npaired {base} -> {name} (one or two questions either way are noise):")
        for r in rows:
            ok_a = right(r[base], r["gold"]) or (r["gold_na"] and r[base] == "N/A")
            ok_b = right(r[name], r["gold"]) or (r["gold_na"] and r[name] == "N/A")
            tag = "GAINED" if ok_b and not ok_a else "LOST  " if ok_a and not ok_b else ""
            flips[tag or "same"] += 1
            if not a.totals_only and (tag or (a.show and r[base] != r[name])):
                print(f"  {tag or 'other '} {r['qid']} gold={r['gold'][0]} {base}={r[base]} {name}={r[name]} | {r['q'][:90]}")
        print(f"  gained {flips['GAINED']}, lost {flips['LOST  ']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
