"""The meaning-choice threshold (``answer.metric_choice_min_p``) replayed on a run's recorded probabilities,
group totals by threshold on one half of ``data/splits.json`` (no model call, no question printed).

    python benchmarks/metric_choice_replay.py --run outputs/RUN --data D [--half tuning] [--grid 0.3,0.5,0.7]

RUN: a 06 run made with ``answer.metric_choice=true`` (its records keep, per question answered by meaning, the
lines shown and P(0..k)). Each row: the words-only answers (``off``: every question the meaning path answered
becomes N/A) or the threshold ``t`` applied to the recorded probabilities; columns: value-gold numbers right /
answered N/A / wrong, N/A-gold answered N/A, N/A precision (N/A answers whose gold is N/A). Choose ``t`` on
the tuning half; quote the report half at the chosen ``t`` only.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag.answer import load_answers  # noqa: E402
from rag.answer.numbers.metric_choice import decide  # noqa: E402
from rag.core.dataset import load_dataset  # noqa: E402
from rag.evaluate.halves import half_texts  # noqa: E402
from rag.evaluate.scoring import score_number  # noqa: E402


def replayed(rec, t: float | None):
    """The record's value with the meaning choice re-decided at ``t`` (None: words only)."""
    m = (rec.model_extra.get("interpretation") or {}).get("meaning")
    if not m:
        return rec.value
    if t is None or not m.get("probs"):
        return "N/A"
    n, _ = decide(m["probs"], t)
    return m["shown"][n - 1]["value"] if n else "N/A"


def table(recs, gold: dict[str, list[str]], thresholds: list[float], na_weight: float = 1.0) -> list[dict]:
    """One row per threshold (module docstring); ``na_weight``: how many questions of the half each N/A-gold
    question stands for (a run over a sample of them), used for the weighted N/A precision."""
    rows = []
    for t in [None, *thresholds]:
        r = {"t": "off" if t is None else t, "n": 0, "values": 0, "right": 0, "as_na": 0, "wrong": 0,
             "na_gold": 0, "na_gold_na": 0, "na_answers": 0}
        for rec in recs:
            g = gold[rec.question_text]
            v = replayed(rec, t)
            r["n"] += 1
            gold_na = [x.upper() for x in g] == ["N/A"]
            is_na = v == "N/A"
            r["na_answers"] += is_na
            if gold_na:
                r["na_gold"] += 1
                r["na_gold_na"] += is_na
                continue
            r["values"] += 1
            ok = not is_na and max(score_number(v, x) for x in g) == 1.0
            r["right"] += ok
            r["as_na"] += is_na
            r["wrong"] += not ok and not is_na
        r["na_precision"] = round(r["na_gold_na"] / r["na_answers"], 3) if r["na_answers"] else None
        weighted = r["na_gold_na"] * na_weight + r["as_na"]
        r["na_precision_w"] = round(r["na_gold_na"] * na_weight / weighted, 3) if weighted else None
        rows.append(r)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", required=True, type=Path)
    ap.add_argument("--data", required=True, type=Path, help="the labelled set whose halves are read")
    ap.add_argument("--half", choices=("tuning", "report"), default="tuning")
    ap.add_argument("--grid", default="0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9")
    ap.add_argument("--na-weight", type=float, default=1.0, help="questions of the half each N/A-gold question "
                    "of the run stands for (a sample: N/A-gold in the half / N/A-gold in the run)")
    a = ap.parse_args()
    ds = load_dataset(a.data, check_hashes=False)
    keep = half_texts(ds, a.half)
    gold = {q.text: list(ds.gold[q.text].answers) for q in ds.questions if q.text in ds.gold and q.kind == "number"}
    recs = [r for r in load_answers(a.run).values() if r.question_text in keep and r.question_text in gold]
    if not recs:
        print(f"no number question of the {a.half} half of {a.data} in {a.run}", file=sys.stderr)
        return 2
    meant = sum(bool((r.model_extra.get("interpretation") or {}).get("meaning")) for r in recs)
    print(f"{a.run} on {a.data}, {a.half} half: {len(recs)} number questions, {meant} answered by meaning")
    cols = ["t", "n", "values", "right", "as_na", "wrong", "na_gold", "na_gold_na", "na_precision", "na_precision_w"]
    print("  ".join(f"{c:>10}" for c in cols))
    for r in table(recs, gold, [float(x) for x in a.grid.split(",")], a.na_weight):
        print("  ".join(f"{str(r[c]):>10}" for c in cols))
    return 0


if __name__ == "__main__":
    sys.exit(main())
