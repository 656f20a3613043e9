"""N/A as a decision: values found vs N/A precision over the picker's threshold (number questions).

With the candidates picked in code (``answer.figure_pick = "code"``), a number question's answer under a
threshold ``t`` is its best candidate scoring at least ``t``, else N/A: every 06 debug record lists its
candidates with their scores, so one run gives the whole curve without new model calls.

Contracts:
- ``tradeoff(runs, thresholds) -> DataFrame``: one row per threshold (rising): ``value_gold`` number
  questions with a real value, ``found`` of them answered right, ``answered_na``, ``na_right`` (N/A
  answers whose gold is N/A), ``na_precision``, ``na_recall``, ``wrong_value`` (a value where gold is
  another value or N/A). ``runs``: run folders (``outputs/<run>``) scored by 07 (``per_question.csv``
  gives the gold); their number questions are pooled. Comparative questions are left out (their answer
  is a pick between companies' values).
- ``python -m rag.evaluate.tradeoff RUN... [--thresholds 0,0.5,...]`` prints the table.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Iterable, Sequence

import pandas as pd

from .groups import gold_list

THRESHOLDS = (None, 0.0, 0.3, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0)  # None: no threshold


def _questions(run: Path) -> list[tuple[list[str], list[tuple[float, Any]]]]:
    """(gold answers, [(score, value)] of its candidates) of each number question of a run."""
    from ..answer import load_answers
    from ..core.stages import name_of

    EVAL = name_of("evaluate")  # 07's folder (the registry's)

    per_q = pd.read_csv(run / EVAL / "per_question.csv")
    gold = {r.qid: gold_list(r.gold) for r in per_q.itertuples() if r.kind == "number"}
    out = []
    for qid, rec in load_answers(run).items():
        if qid not in gold:
            continue
        info = getattr(rec, "interpretation", None) or {}
        cands = [(float(c["score"]), c["value"]) for c in info.get("candidates", [])]
        out.append((gold[qid], cands))
    return out


def tradeoff(runs: Iterable[Path | str], thresholds: Sequence[float | None] = THRESHOLDS) -> pd.DataFrame:
    """Values found vs N/A precision of the code pick at each threshold (module docstring)."""
    from .scoring import score_number

    qs = [q for r in runs for q in _questions(Path(r))]
    rows = []
    for t in thresholds:
        found = na = na_right = wrong = value_gold = gold_na = 0
        for gold, cands in qs:
            is_na_gold = [g.strip().upper() for g in gold] == ["N/A"]
            value_gold += not is_na_gold
            gold_na += is_na_gold
            ok = [v for s, v in cands if t is None or s >= t]
            if not ok:
                na += 1
                na_right += is_na_gold
            elif not is_na_gold and max(score_number(ok[0], g) for g in gold) == 1.0:
                found += 1
            else:
                wrong += 1
        rows.append({"threshold": "none" if t is None else t, "questions": len(qs), "value_gold": value_gold,
                     "found": found, "found_pct": round(100 * found / value_gold, 1) if value_gold else None,
                     "answered_na": na, "na_right": na_right,
                     "na_precision": round(na_right / na, 3) if na else None,
                     "na_recall": round(na_right / gold_na, 3) if gold_na else None, "wrong_value": wrong})
    return pd.DataFrame(rows)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rag.evaluate.tradeoff", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="run folders scored by 07 (their number questions are pooled)")
    ap.add_argument("--thresholds", default=None, help="comma-separated (default: %s)" % ",".join(map(str, THRESHOLDS)))
    ap.add_argument("--png", default=None, help="also write the curve to this PNG")
    a = ap.parse_args(argv)
    ts = THRESHOLDS if a.thresholds is None else [None if x == "none" else float(x) for x in a.thresholds.split(",")]
    table = tradeoff(a.runs, ts)
    print(table.to_markdown(index=False))
    if a.png:
        from .plots import tradeoff_png

        Path(a.png).write_bytes(tradeoff_png(table))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
