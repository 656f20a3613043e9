"""The catalogue-worded validation set: every question the ERC round-2 generator can ask of a report, in the
generator's words (``../shared/erc2-catalogue.json``), not the report's.

``python -m rag.valgen catalogue --out data/erc2-cat`` writes ``subset.csv``, ``pdf_dirs.txt`` and
``questions.json`` for the 39 erc2-dev + erc2-extra reports, in sha1 order, per report:

- every metric of its industry's catalogue list (the generator's two industry templates, alternating);
- the 12 financial metrics in the report's currency (the two financial templates, alternating);
- the layoffs question (its two templates, alternating by report);
- on every second report (sha1 order, from the first: 20 of 39), the ten yes/no templates.

Deterministic: no draw, the same files from the same catalogue and subsets. The labels are made by reading the
pages (``labels.jsonl``, with a ``how_found`` field: :data:`HOW_FOUND`), never by the pipeline; ``import-parts``
appends labellers' part files after checking them (:func:`import_parts`).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
from pathlib import Path

from . import valgen

CATALOGUE = valgen.SHARED / "erc2-catalogue.json"
# How the labeller found a value (or settled on N/A), kept per label:
#   verbatim  the page names the quantity in the catalogue's words (or the same words inflected);
#   synonym   the page names it in its own words (staff / colleagues for employees, turnover for revenue);
#   na        searched (the words tried are in ``searched``) and the report does not state it.
HOW_FOUND = ("verbatim", "synonym", "na")
_INDUSTRY_TPL = [t for w, f, fam, ts in valgen.FAMILIES["number"] if fam == "industry" for t in ts]
_FIN_TPL = [t for w, f, fam, ts in valgen.FAMILIES["number"] if fam == "fin" for t in ts]
_LAYOFF_TPL = next(ts for w, f, fam, ts in valgen.FAMILIES["number"] if f == "has_layoffs")
_BOOL_TPL = [t for w, f, fam, ts in valgen.FAMILIES["boolean"] for t in ts]


def load_catalogue(path: Path = CATALOGUE) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def report_questions(r: dict, cat: dict, booleans: bool) -> list[dict]:
    """The questions of one report (``r``: a subset.csv row), in a fixed order."""
    company, cur = r["company_name"], r["cur"]
    out = []
    for i, metric in enumerate(cat["industry_metrics"].get(r["major_industry"], [])):
        out.append({"text": _INDUSTRY_TPL[i % 2].format(metric=metric, company=company), "kind": "number"})
    for i, metric in enumerate(cat["financial_metrics"]):
        out.append({"text": _FIN_TPL[i % 2].format(metric=metric.format(cur=cur), company=company),
                    "kind": "number"})
    return out + ([{"text": t.format(company=company), "kind": "boolean"} for t in _BOOL_TPL] if booleans else [])


def generate(reports: list[dict], cat: dict) -> list[dict]:
    """Questions of every report in sha1 order (see the module docstring)."""
    reports = sorted(reports, key=lambda r: r["sha1"])
    qs = []
    for n, r in enumerate(reports):
        rq = report_questions(r, cat, booleans=n % 2 == 0)
        layoff = {"text": _LAYOFF_TPL[n % 2].format(company=r["company_name"]), "kind": "number"}
        nb = sum(q["kind"] == "boolean" for q in rq)
        qs += rq[:len(rq) - nb] + [layoff] + rq[len(rq) - nb:]
    return qs


def write_set(out: Path, extra: Path, dev: Path, catalogue: Path = CATALOGUE) -> list[dict]:
    rows = []
    for d in (extra, dev):
        with open(d / "subset.csv", newline="", encoding="utf-8-sig") as f:
            rows += [{k: (v or "").strip() for k, v in row.items()} for row in csv.DictReader(f)]
    rows.sort(key=lambda r: r["sha1"])
    qs = generate(rows, load_catalogue(catalogue))
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "subset.csv", "w", newline="", encoding="utf-8") as f:
        cols = valgen.COLUMNS
        csv.writer(f, lineterminator="\n").writerows([cols] + [[r.get(c, "") for c in cols] for r in rows])
    (out / "pdf_dirs.txt").write_text("".join(os.path.relpath(d / "pdfs", out) + "\n" for d in (extra, dev)))
    (out / "questions.json").write_text(json.dumps(qs, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return qs


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="python -m rag.valgen catalogue")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--extra", type=Path, default=valgen.SHARED / "erc2-extra")
    ap.add_argument("--dev", type=Path, default=valgen.SHARED / "erc2-dev")
    a = ap.parse_args(argv)
    qs = write_set(a.out, a.extra, a.dev)
    kinds = {k: sum(q["kind"] == k for q in qs) for k in ("number", "boolean")}
    print(f"{a.out}: {len(qs)} questions", kinds)
