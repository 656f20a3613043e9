"""Per-stage seconds of a finished run and the projection for a whole ERC round (issue 29).

    .venv/bin/python benchmarks/round.py outputs/<run> [--reports 100 --pages-per-report 150 --questions 100]
        [--cores 2] [--scale-cores 2,4,8,16] [--nodes 1,2,4,8] [--rate 04_index=45] [--assume 06_answer=21.9]

Reads ``outputs/<run>/NN_stage/manifest.json`` of stages 01..06 (a run made by ``rag.pipeline`` or the
notebooks, on this machine at the current settings) and prints, per stage: its wall seconds (the
invocation that last finished items), items, the unit it scales with (pages for 01..04: chunks follow
pages; questions for 05..06), seconds per unit and the slowest single item. Then the projection for a
round of ``--reports`` x ``--pages-per-report`` pages and ``--questions`` questions:

- **local, N cores**: measured seconds per unit x round units x ``--cores``/N. Assumes the stage scales
  linearly with cores (parse workers, ONNX/torch intra-op threads, llama.cpp threads): a lower bound.
- **Ray, N nodes** (each like this machine): items spread over N nodes, so per-unit seconds x units / N,
  but never below the slowest measured item (one report or question is not split across nodes).

``--rate STAGE=UNITS_PER_S`` replaces a stage's measured rate (e.g. ``04_index=45`` chunks/s from
``benchmarks/index.py``) to project a setting the run did not use; ``--assume STAGE=SECONDS_PER_UNIT``
supplies a stage the run lacks (e.g. 05/06 of a run that stopped after 04: seconds per question measured
elsewhere). The row's note says which. Numbers only.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

STAGES = ("01_parse", "02_clean", "03_chunk", "04_index", "05_retrieve", "06_answer")
# The ERC round the issue sizes: 100 reports (~15,000 pages) and 100 questions released at once.
ROUND_REPORTS, ROUND_PAGES_PER_REPORT, ROUND_QUESTIONS = 100, 150, 100


def _items(man: dict) -> dict[str, dict]:
    return {k: v for k, v in man.get("items", {}).items() if v.get("status", "done") == "done"}


def _item_seconds(v: dict) -> float:
    return float((v.get("usage") or {}).get("seconds") or v.get("seconds") or 0.0)


def stage_rows(run_dir: Path) -> tuple[list[dict], dict]:
    """One row per stage present: seconds, items, unit, units, slowest item; and the run's totals."""
    mans = {s: json.loads((run_dir / s / "manifest.json").read_text()) for s in STAGES
            if (run_dir / s / "manifest.json").is_file()}
    parse_items = _items(mans.get("01_parse", {}))
    pages = sum(int(v.get("pages") or 0) for v in parse_items.values())
    reports = len(parse_items)
    chunks = sum(int((v.get("counts") or {}).get("chunks") or 0) for v in _items(mans.get("03_chunk", {})).values())
    questions = len(_items(mans.get("06_answer", mans.get("05_retrieve", {}))))
    rows = []
    for s, man in mans.items():
        items = _items(man)
        unit, units = ("questions", questions) if s in ("05_retrieve", "06_answer") else ("pages", pages)
        rows.append({"stage": s, "seconds": float(man.get("seconds") or 0.0), "items": len(items), "unit": unit,
                     "units": units, "max_item_s": max((_item_seconds(v) for v in items.values()), default=0.0)})
    return rows, {"reports": reports, "pages": pages, "chunks": chunks, "questions": questions}


def project(rows: list[dict], totals: dict, args) -> list[dict]:
    """Round seconds per stage: local on each core count, Ray on each node count."""
    rates = dict(kv.split("=", 1) for kv in args.rate)
    have = {r["stage"] for r in rows}
    for kv in args.assume + args.rate:  # stages this run lacks: at a given s/unit, or at a given chunks/s
        st, _, per = kv.partition("=")
        if st not in STAGES:
            raise SystemExit(f"--assume/--rate {kv!r}: unknown stage (one of {', '.join(STAGES)})")
        if st not in have:
            unit = "questions" if st in ("05_retrieve", "06_answer") else "pages"
            rows.append({"stage": st, "seconds": 0.0, "items": 0, "unit": unit, "units": 0, "max_item_s": 0.0,
                         **({} if kv in args.rate else {"assumed": float(per)})})
            have.add(st)
    if not rows:
        raise SystemExit(f"{args.run_dir}: no stage manifest (outputs/<run>/NN_stage/manifest.json) and no --assume")
    rows.sort(key=lambda r: STAGES.index(r["stage"]))
    round_units = {"pages": args.reports * args.pages_per_report, "questions": args.questions}
    chunks_per_page = args.chunks_per_page or (totals["chunks"] / totals["pages"] if totals["pages"] else 0.0)
    if rates and not chunks_per_page:
        raise SystemExit("--rate needs chunks per page: a run with 01 and 03, or --chunks-per-page")
    out = []
    for r in rows:
        per_unit = r["seconds"] / r["units"] if r["units"] else 0.0
        note = ""
        if r["stage"] in rates:  # e.g. 04_index=45: chunks/s measured by benchmarks/index.py
            per_unit = chunks_per_page / float(rates[r["stage"]])
            note = f"{rates[r['stage']]} chunks/s given ({chunks_per_page:.2f} chunks/page)"
        elif "assumed" in r:
            per_unit, note = r["assumed"], f"{r['assumed']} s/{r['unit'][:-1]} given"
        base = per_unit * round_units[r["unit"]]
        row = {**r, "s/unit": per_unit, "note": note}
        for n in args.scale_cores:
            row[f"local {n}c"] = base * args.cores / n
        for n in args.nodes:
            row[f"ray {n}n"] = max(base / n, r["max_item_s"] if not note else 0.0)
        out.append(row)
    return out


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.3f}" if v < 10 else f"{v:.0f}"
    return str(v)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", type=Path, help="outputs/<run> of a finished run")
    ap.add_argument("--reports", type=int, default=ROUND_REPORTS)
    ap.add_argument("--pages-per-report", type=int, default=ROUND_PAGES_PER_REPORT)
    ap.add_argument("--questions", type=int, default=ROUND_QUESTIONS)
    ap.add_argument("--cores", type=int, default=len(os.sched_getaffinity(0)), help="cores the run had")
    ap.add_argument("--scale-cores", default="2,4,8,16")
    ap.add_argument("--nodes", default="1,2,4,8")
    ap.add_argument("--rate", action="append", default=[], help="STAGE=chunks/s, e.g. 04_index=45")
    ap.add_argument("--assume", action="append", default=[], help="STAGE=s/unit for a stage the run lacks")
    ap.add_argument("--chunks-per-page", type=float, default=0.0, help="for --rate (default: the run's 03/01)")
    args = ap.parse_args(argv)
    args.scale_cores = [int(x) for x in args.scale_cores.split(",") if x]
    args.nodes = [int(x) for x in args.nodes.split(",") if x]
    rows, totals = stage_rows(args.run_dir)
    proj = project(rows, totals, args)
    print(f"run {args.run_dir}: {totals['reports']} reports, {totals['pages']} pages, {totals['chunks']} chunks, "
          f"{totals['questions']} questions, measured on {args.cores} cores")
    print(f"round: {args.reports} reports x {args.pages_per_report} pages, {args.questions} questions; "
          "local = linear in cores (lower bound); ray = N nodes like this one, floored at the slowest item\n")
    cols = ["stage", "seconds", "items", "unit", "units", "s/unit", "max_item_s"] \
        + [f"local {n}c" for n in args.scale_cores] + [f"ray {n}n" for n in args.nodes] + ["note"]
    table = [[_fmt(r[c]) for c in cols] for r in proj]
    total = ["total", _fmt(sum(r["seconds"] for r in proj)), "", "", "", "", ""] \
        + [_fmt(sum(r[c] for r in proj)) for c in cols[7:-1]] + [""]
    minutes = ["(minutes)", _fmt(sum(r["seconds"] for r in proj) / 60), "", "", "", "", ""] \
        + [_fmt(sum(r[c] for r in proj) / 60) for c in cols[7:-1]] + [""]
    widths = [max(len(str(x)) for x in col) for col in zip(cols, *table, total, minutes)]
    for line in [cols, *table, total, minutes]:
        print("  ".join(str(x).rjust(w) if i else str(x).ljust(w) for i, (x, w) in enumerate(zip(line, widths))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
