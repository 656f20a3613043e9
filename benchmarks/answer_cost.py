"""Per-run answer quality and cost from scored runs: the ablation table issue 19 asks for.

Usage (from the repository root)::

    .venv/bin/python benchmarks/answer_cost.py outputs/dev19-00-false-true outputs/dev19-01-true-true [--kind number]

For each run folder (07_evaluate must have run): score / max, G, R, accuracy per kind, N/A precision and
recall, questions with a real value answered right, and per question the model calls' prompt and
completion tokens and model seconds as first computed (a call answered from the disk cache keeps the
usage it was recorded with, so a variant that re-uses cached calls still shows what it costs from
scratch). ``--kind`` restricts every number to one answer kind. Prints numbers only.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag.evaluate.scoring import summarize  # noqa: E402


def _record_usage(path: Path) -> dict[str, float]:
    d = json.loads(path.read_text())
    calls = d.get("calls", []) + [c for s in d.get("sub_answers", []) or [] for c in s.get("calls", [])]
    u = [c.get("usage") or {} for c in calls]
    return {"text": d.get("question_text", ""), "prompt": sum(x.get("prompt_tokens", 0) for x in u),
            "completion": sum(x.get("completion_tokens", 0) for x in u),
            "calls": sum(x.get("requests", 0) for x in u), "model_s": sum(x.get("seconds", 0.0) for x in u),
            "cached": all(x.get("cached") for x in u) and bool(u)}


def run_costs(run: Path, qids: set[str], uncached_from: list[Path]) -> dict[str, float]:
    """Mean per question over 06's debug records: prompt/completion tokens, model calls and seconds. A
    question whose calls all came from the disk cache (no seconds recorded) takes its calls and seconds
    from the first ``uncached_from`` run that computed the same question (matched by text)."""
    donors: dict[str, dict[str, float]] = {}
    for d in uncached_from:
        for f in sorted((d / "06_answer" / "debug").glob("*.json")):
            u = _record_usage(f)
            if not u["cached"]:
                donors.setdefault(u["text"], u)
    rows = []
    for f in sorted((run / "06_answer" / "debug").glob("*.json")):
        if f.stem not in qids:
            continue
        u = _record_usage(f)
        if u["cached"] and u["text"] in donors:
            u.update(calls=donors[u["text"]]["calls"], model_s=donors[u["text"]]["model_s"])
        rows.append(u)
    df = pd.DataFrame(rows)
    return {k: round(float(df[k].mean()), 1) for k in ("prompt", "completion", "calls", "model_s")} if len(df) else {}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--kind", default=None)
    ap.add_argument("--uncached-from", nargs="*", default=[], metavar="RUN",
                    help="runs whose uncached records give the seconds of questions answered from the cache")
    a = ap.parse_args(argv)
    out = []
    for r in a.runs:
        run = Path(r)
        per_q = pd.read_csv(run / "07_evaluate" / "per_question.csv")
        if a.kind:
            per_q = per_q[per_q.kind == a.kind]
        s = summarize(per_q)
        t = s["totals"]
        row = {"run": run.name, "q": t["questions"], "score": t["score"], "max": t["max_score"], "G": t["G"],
               "R": t["R"], "acc": t["answer_accuracy"], "na_prec": t["na_precision"], "na_rec": t["na_recall"],
               "value_right": int((per_q.correct & ~per_q.gold_na).sum()), "value_q": int((~per_q.gold_na).sum())}
        for k in s["by_kind"]:
            row[f"acc.{k['kind']}"] = k["answer_accuracy"]
        row.update({f"{k}/q": v for k, v in run_costs(run, set(per_q.qid), [Path(x) for x in a.uncached_from]).items()})
        out.append(row)
    with pd.option_context("display.width", 250, "display.max_columns", 40):
        print(pd.DataFrame(out).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
