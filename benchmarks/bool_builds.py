"""A yes/no rule chosen for every llama.cpp build at once: sets the tables of ``benchmarks/bool_calibration.py
--json`` (one or more per build, same question set) side by side and picks the row whose worst build does best.

    python benchmarks/bool_builds.py A.json B.json [...] [--rows both:0.2:0.11]

Why: a cut read off one build's P(true) can sit where another build's P(true) of the same page moves across it
(issue 46: the cut 0.11 of the avx512 build's tuning half gave the avx2 build one True-gold answer fewer on the
report half). The criterion, fixed before any report-half run: the largest balanced accuracy (mean of the
True-gold and False-gold shares) of the worst build; ties -> the largest mean over builds; then the rule of the
current default (``both``, t 0.2) and the cut nearest 0.11. Prints every row (decision, t, cut: each build's
True-gold and False-gold counts, the worst and mean balanced accuracy) and the chosen one; on a report half only
the rows asked for with ``--rows`` (the tuning half's choice), as group totals.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

DEFAULT = ("both", 0.2, 0.11)


def key(row: dict) -> tuple[str, float, float]:
    return row["decision"], round(row["t"], 4), round(row["cut"], 4)


def table(files: list[str]) -> tuple[list[str], dict[tuple, list[dict]]]:
    """The runs' names and ``{(decision, t, cut): [row of each run]}`` for the rows every run has; files of one
    run (one build: a table per decision rule) are merged."""
    runs: dict[str, list[dict]] = {}
    for f in files:
        d = json.loads(Path(f).read_text())
        runs.setdefault(d["run"], []).extend(d["rows"])
    keys = set.intersection(*({key(r) for r in rows} for rows in runs.values()))
    by = {k: [next(r for r in rows if key(r) == k) for rows in runs.values()] for k in keys}
    return list(runs), by


def choose(by: dict[tuple, list[dict]]) -> tuple:
    """The criterion of the module docstring."""
    def rank(k: tuple) -> tuple:
        bal = [r["balanced"] for r in by[k]]
        return (min(bal), sum(bal) / len(bal), k[:2] == DEFAULT[:2], -abs(k[2] - DEFAULT[2]))
    return max(by, key=rank)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python benchmarks/bool_builds.py")
    ap.add_argument("files", nargs="+")
    ap.add_argument("--rows", default=None, help="only these rows, 'decision:t:cut' comma-separated")
    a = ap.parse_args(argv)
    runs, by = table(a.files)
    if a.rows:
        want = {(d, round(float(t), 4), round(float(c), 4)) for d, t, c in (x.split(":") for x in a.rows.split(","))}
        by = {k: v for k, v in by.items() if k in want}
    print("builds: " + ", ".join(runs))
    print(f"{'decision':>8} {'t':>5} {'cut':>6}  " + "  ".join(f"{'T->T':>7} {'F->F':>7}" for _ in runs)
          + f" {'worst':>6} {'mean':>6}")
    for k in sorted(by):
        rows = by[k]
        bal = [r["balanced"] for r in rows]
        cells = "  ".join(f"{r['true_gold_true']:>3}/{r['true_gold']:<3} {r['false_gold_false']:>3}/{r['false_gold']:<3}"
                          for r in rows)
        print(f"{k[0]:>8} {k[1]:>5.2f} {k[2]:>6.2f}  {cells} {min(bal):>6.3f} {sum(bal) / len(bal):>6.3f}")
    if by and not a.rows:
        d, t, c = choose(by)
        print(f"chosen (worst build's balanced accuracy, then the mean): decision {d}, t {t}, cut {c}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
