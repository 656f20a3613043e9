"""Value questions for the validation set: ERC templates over figures the reports really print.

``rag.valgen`` draws templates at random, so most of its number questions ask for metrics a report does not
print (gold N/A). This module appends questions chosen where the report prints the value, from a hand-made
candidate list, with the same templates word for word:

- ``python -m rag.valgen_values --data DIR --candidates DIR/value_candidates.csv --seed 42`` keeps the first
  :data:`BASE` questions of ``DIR/questions.json`` (made by ``python -m rag.valgen --count 110``) and appends one
  question per candidate row, in file order, so appending rows never renumbers a qid. Same seed + same rows ->
  byte-identical ``questions.json``. The seeded LCG (``rag.valgen.LCG``) draws one template variant per row.
- Candidate rows (CSV, header ``family,sha1,metric,cur,ref,companies[,printed]``; ``printed`` = where the page
  prints the gold, ``sentence`` or ``table`` row, for reading results by that split; not used to make text):

  ========  =====================================================================================
  family    question (kind)
  ========  =====================================================================================
  custom    "What was the value of {metric} of {company} at the end of the period listed in annual
            report?..." or its "For {company}, ..." variant (number); ``metric`` is free text, the
            figure's name as the report prints it (employees, stores, patents, MW, backlog...)
  fin       "What was the {metric} for {company} according to the annual report..." or "According to
            the annual report, what is the ..." (number); ``metric`` one of ``rag.valgen.FIN_METRICS``
            with ``{cur}`` = the row's ``cur`` (the currency the report uses, not subset.csv's)
  layoffs   "How many employees were laid off by..." / "What is the total number of employees let go
            by..." (number)
  ma        "What was the latest merger or acquisition that {company} was involved in? Return name of
            the entity or 'N/A'" (name); ``metric`` empty
  compare   "Which of the companies had the {ref} {metric} in {cur} at the end of the period listed in
            annual report: "A", "B"...?" (comparative); ``ref`` highest|lowest, ``metric`` total
            revenue|net income|total assets, ``companies`` ``;``-separated sha1 prefixes (in that order)
  ========  =====================================================================================

  ``sha1`` is a sha1 prefix naming the report (empty for compare). Problems (unknown report or family, a
  metric outside FIN_METRICS, a text or row already in the set) raise :class:`CandidateError` naming file and line.
- Labels are hand labels in ``DIR/labels.jsonl`` as before (``rag.valgen label``; evidence on a cited page,
  checked by ``tests/test_valset.py``); :func:`append_labels` appends a batch of them by question text.
- ``python -m rag.valgen_values makeup [--data DIR]``: questions by kind x gold (value / N/A / True / False)
  x source (valgen draw, erc2-extra verbatim, value candidates).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from pathlib import Path

from .labels import append_label, latest_labels
from .valgen import COMPARE, FAMILIES, FIN_METRICS, LCG, SHARED
from .widgets.label_widget import parse_value

BASE = 110  # questions.json entries made by ``python -m rag.valgen --seed 42 --count 110``; never changed here
FIELDS = ("family", "sha1", "metric", "cur", "ref", "companies")
_BY = {family or flag: variants for _, flag, family, variants in FAMILIES["number"]}  # valgen's wording
TEMPLATES = {"custom": _BY["industry"], "fin": _BY["fin"], "layoffs": _BY["has_layoffs"],
             "ma": FAMILIES["name"][0][3]}  # "What was the latest merger or acquisition that C was involved in?..."
KINDS = {"ma": "name"}  # kind of each family's questions; number unless listed (compare: comparative)
COMPARE_METRICS = ("total revenue", "net income", "total assets")


class CandidateError(ValueError):
    """A candidate row that cannot become a question; the message names the file and line."""


def read_candidates(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if rows and set(FIELDS) - set(rows[0]):
        raise CandidateError(f"{path}: header must be {','.join(FIELDS)}")
    return [{k: (r.get(k) or "").strip() for k in FIELDS + ("printed",)} for r in rows]


def _report(prefix: str, names: dict[str, str], where: str) -> tuple[str, str]:
    hits = [s for s in names if prefix and s.startswith(prefix.lower())]
    if len(hits) != 1:
        raise CandidateError(f"{where}: sha1 prefix {prefix!r} names {len(hits)} reports of subset.csv")
    return hits[0], names[hits[0]]


def question_for(row: dict[str, str], names: dict[str, str], rng: LCG, where: str) -> dict[str, str]:
    """``{"text", "kind"}`` of one candidate row (one LCG draw per row, whatever the family)."""
    variant, fam = rng.below(2), row["family"]
    if fam == "compare":
        if row["ref"] not in ("highest", "lowest") or row["metric"] not in COMPARE_METRICS or not row["cur"]:
            raise CandidateError(f"{where}: compare needs ref highest|lowest, metric in {COMPARE_METRICS}, cur")
        cos = [_report(p, names, where)[1] for p in row["companies"].split(";") if p.strip()]
        if len(cos) < 2:
            raise CandidateError(f"{where}: compare needs at least two companies")
        text = COMPARE.format(ref=row["ref"], metric=row["metric"], cur=row["cur"],
                              companies=", ".join(f'"{c}"' for c in cos))
        return {"text": text, "kind": "comparative"}
    if fam not in TEMPLATES:
        raise CandidateError(f"{where}: family must be custom, fin, layoffs, ma or compare, not {fam!r}")
    _, company = _report(row["sha1"], names, where)
    metric = row["metric"]
    if fam == "fin" and metric not in {m.format(cur=row["cur"]) for m in FIN_METRICS}:
        raise CandidateError(f"{where}: {metric!r} is not a FIN_METRICS entry in {row['cur'] or 'no currency'}")
    if fam == "custom" and not metric:
        raise CandidateError(f"{where}: custom needs a metric")
    variants = TEMPLATES[fam]
    return {"text": variants[variant % len(variants)].format(metric=metric, company=company),
            "kind": KINDS.get(fam, "number")}


def append_questions(data: Path, candidates: Path, seed: int) -> list[dict]:
    """Rewrite ``data/questions.json`` as its first :data:`BASE` questions + one per candidate row."""
    qs = json.loads((data / "questions.json").read_text(encoding="utf-8"))
    if len(qs) < BASE:
        raise CandidateError(f"{data / 'questions.json'}: {len(qs)} questions, expected at least the {BASE} "
                             "made by rag.valgen")
    with open(data / "subset.csv", newline="", encoding="utf-8-sig") as f:
        names = {r["sha1"].lower(): r["company_name"] for r in csv.DictReader(f)}
    out, seen, rows, rng = qs[:BASE], {q["text"] for q in qs[:BASE]}, {}, LCG(seed)
    for n, row in enumerate(read_candidates(candidates), 2):
        q = question_for(row, names, rng, f"{candidates}:{n}")
        key = tuple(row[k] for k in FIELDS)  # the same ask in the other template variant is no new question
        if q["text"] in seen or key in rows:
            raise CandidateError(f"{candidates}:{n}: question already in the set"
                                 f"{f' (row {rows[key]})' if key in rows else ''}: {q['text'][:90]}")
        seen.add(q["text"])
        rows[key] = n
        out.append(q)
    tmp = data / "questions.json.tmp"
    tmp.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, data / "questions.json")
    return out


def append_labels(data: Path, batch: list[dict], labeller: str) -> int:
    """Append hand labels ``{"text", "value", "pages": "sha:page, ...", "evidence"}`` for questions of
    ``data/questions.json`` whose latest label differs (value, pages or evidence); returns lines written."""
    from .core.dataset import load_dataset
    from .widgets.label_widget import parse_pages

    ds = load_dataset(data, check_hashes=False)
    by_text = {q.text: q for q in ds.questions}
    latest, n = latest_labels(data / "labels.jsonl"), 0
    for b in batch:
        q = by_text.get(b["text"])
        if q is None:
            raise CandidateError(f"label for a question not in {data / 'questions.json'}: {b['text'][:90]}")
        value, pages = parse_value(str(b["value"]), q.kind), parse_pages(b["pages"], ds)
        old = latest.get(q.text)
        if old and old.get("value") == value and old.get("evidence") == b.get("evidence") and \
                [(p["sha1"], p["page"]) for p in old["pages"]] == [(p.sha1, p.page) for p in pages]:
            continue
        append_label(data / "labels.jsonl", q.text, value, pages, "corrected", labeller, q.kind, q.qid,
                     evidence=b.get("evidence"), searched=b.get("searched"))
        n += 1
    return n


def makeup(data: Path) -> "pd.DataFrame":
    """Questions by kind x gold (value, N/A, True, False, unlabelled) x source (the rag.valgen draw, the
    erc2-extra questions it includes verbatim, the value candidates by where the gold is printed: "values:
    sentence" / "values: table"), from ``data/labels.jsonl`` and ``data/value_candidates.csv``."""
    import pandas as pd

    qs = json.loads((data / "questions.json").read_text(encoding="utf-8"))
    extra = SHARED / "erc2-extra" / "questions.json"
    verbatim = {q["text"] for q in json.loads(extra.read_text(encoding="utf-8"))} if extra.exists() else set()
    latest = latest_labels(data / "labels.jsonl")
    cands = data / "value_candidates.csv"
    printed = [r["printed"] for r in read_candidates(cands)] if cands.exists() else []
    rows = []
    for i, q in enumerate(qs):
        rec = latest.get(q["text"])
        v = None if rec is None or rec["status"] == "skipped" else rec["value"]
        gold = ("unlabelled" if v is None else "N/A" if v == "N/A" else str(v) if isinstance(v, bool) else "value")
        src = ("erc2-extra verbatim" if q["text"] in verbatim else "valgen draw") if i < BASE else \
            f"values: {printed[i - BASE] if i - BASE < len(printed) and printed[i - BASE] else 'candidates'}"
        rows.append({"kind": q["kind"], "gold": gold, "source": src})
    df = pd.DataFrame(rows)
    table = pd.crosstab([df.kind, df.gold], df.source, margins=True, margins_name="all")
    return table


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["makeup"]:  # python -m rag.valgen_values makeup [--data DIR]
        ap = argparse.ArgumentParser(prog="python -m rag.valgen_values makeup")
        ap.add_argument("--data", type=Path, default=Path("data/erc2-val"))
        return print(makeup(ap.parse_args(argv[1:]).data).to_string())
    ap = argparse.ArgumentParser(prog="python -m rag.valgen_values", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path("data/erc2-val"))
    ap.add_argument("--candidates", type=Path, help="default: DATA/value_candidates.csv")
    ap.add_argument("--seed", type=int, required=True)
    a = ap.parse_args(argv)
    qs = append_questions(a.data, a.candidates or a.data / "value_candidates.csv", a.seed)
    print(f"{a.data / 'questions.json'}: {len(qs)} questions ({BASE} from rag.valgen, {len(qs) - BASE} value "
          "questions from candidates)")


if __name__ == "__main__":
    main()
