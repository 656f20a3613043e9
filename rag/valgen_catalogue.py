"""The catalogue-worded validation set: every question the ERC round-2 generator can ask of a report, in the
generator's words (``../shared/erc2-catalogue.json``), not the report's.

``python -m rag.valgen_catalogue --out data/erc2-cat`` (or ``rag valgen catalogue ...``) writes ``subset.csv``, ``pdf_dirs.txt`` and
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
import json
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
    rows = valgen.shared_reports(extra, dev)
    qs = generate(rows, load_catalogue(catalogue))
    valgen.write_reports(out, rows, extra, dev)
    (out / "questions.json").write_text(json.dumps(qs, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return qs


def check_part_line(rec: dict, q: dict, n_pages: int) -> list[str]:
    """Problems of one labeller line against its question (``q``: questions.json entry + kind) and the
    report's page count; empty when the line can be appended."""
    problems, v, kind = [], rec.get("value"), q["kind"]
    if rec.get("how_found") not in HOW_FOUND:
        problems.append(f"how_found must be one of {', '.join(HOW_FOUND)}, not {rec.get('how_found')!r}")
    if kind == "boolean" and not isinstance(v, bool):
        problems.append(f"a boolean question needs true or false, not {v!r}")
    if kind == "number" and v != "N/A" and (isinstance(v, bool) or not isinstance(v, (int, float))):
        problems.append(f"a number question needs a number or 'N/A', not {v!r}")
    pages = rec.get("pages") or []
    if not all(isinstance(p, int) and not isinstance(p, bool) and 1 <= p <= n_pages for p in pages):
        problems.append(f"pages must be 1-based page numbers within 1..{n_pages}, not {pages!r}")
    has_value = v is True or (kind == "number" and v != "N/A")
    if has_value and not pages:
        problems.append("a value (or true) needs the pages that state it")
    if has_value and not rec.get("evidence"):
        problems.append("a value (or true) needs its evidence (the printed words)")
    if not has_value and not rec.get("searched"):
        problems.append("N/A (or false) needs what was searched")
    if has_value == (rec.get("how_found") == "na"):
        problems.append("how_found 'na' goes with N/A or false only")
    return problems


def import_parts(data: Path, parts: list[Path], labeller_of=lambda p: p.parent.name) -> tuple[int, list[str]]:
    """Append every valid line of the labellers' part files to ``data/labels.jsonl`` (status "corrected",
    1-based pages; the last line per question wins as everywhere); returns (lines appended, problems as
    ``file:line: message``). A question already labelled in labels.jsonl with the same record is skipped."""
    from .core.dataset import load_dataset
    from .core.labels import append_label, read_labels
    from .core.pdf import pdf_page_count

    ds = load_dataset(data, check_hashes=False)
    qs = {q.qid: q for q in ds.questions}
    sha1_of = {q.qid: next((r.sha1 for r in ds.reports if r.company in q.text), None) for q in ds.questions}
    n_pages = {r.sha1: pdf_page_count(r.pdf) for r in ds.reports}
    have = {(r.get("qid"), json.dumps(r.get("value")), tuple(p["page"] for p in r.get("pages", [])))
            for r in read_labels(data / "labels.jsonl")} if (data / "labels.jsonl").exists() else set()
    n, problems = 0, []
    for part in parts:
        for i, ln in enumerate(Path(part).read_text(encoding="utf-8").splitlines(), 1):
            if not ln.strip():
                continue
            where = f"{part}:{i}"
            try:
                rec = json.loads(ln)
            except json.JSONDecodeError as e:
                problems.append(f"{where}: not JSON ({e.msg})")
                continue
            q = qs.get(rec.get("qid"))
            if q is None:
                problems.append(f"{where}: no question {rec.get('qid')!r} in {data}/questions.json")
                continue
            sha1 = sha1_of[q.qid]
            bad = check_part_line(rec, {"kind": q.kind}, n_pages[sha1])
            if bad:
                problems += [f"{where}: {q.qid}: {b}" for b in bad]
                continue
            key = (q.qid, json.dumps(rec["value"]), tuple(rec.get("pages") or []))
            if key in have:
                continue
            append_label(data / "labels.jsonl", q.text, rec["value"], [(sha1, p) for p in rec.get("pages") or []],
                         "corrected", labeller_of(Path(part)), q.kind, q.qid, evidence=rec.get("evidence"),
                         searched=rec.get("searched"), how_found=rec["how_found"])
            have.add(key)
            n += 1
    return n, problems


def makeup(data: Path, splits: dict | None = None) -> "pd.DataFrame":
    """Questions by kind, gold (value / N/A / True / False), how found and half: the set's make-up table."""
    import pandas as pd

    from .core.dataset import load_dataset
    from .core.labels import read_labels
    from .evaluate.halves import half_texts

    ds = load_dataset(data, check_hashes=False)
    last = {r["qid"]: r for r in read_labels(data / "labels.jsonl")} if (data / "labels.jsonl").exists() else {}
    half = {t: h for h in ("tuning", "report") for t in half_texts(ds, h, splits)}
    rows = []
    for q in ds.questions:
        r = last.get(q.qid)
        gold = ("unlabelled" if r is None else str(r["value"]) if q.kind == "boolean"
                else "N/A" if r["value"] == "N/A" else "value")
        rows.append({"kind": q.kind, "gold": gold, "how_found": (r or {}).get("how_found", ""),
                     "half": half.get(q.text, "")})
    return pd.DataFrame(rows).value_counts().rename("n").reset_index().sort_values(
        ["kind", "gold", "how_found", "half"]).reset_index(drop=True)


def main(argv: list[str] | None = None) -> None:
    """``--out DIR`` writes the set; ``import --data DIR PART...`` appends labellers' part
    files; ``makeup --data DIR`` prints the make-up table."""
    import sys

    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("import", "makeup"):
        ap = argparse.ArgumentParser(prog=f"python -m rag.valgen_catalogue {argv[0]}")
        ap.add_argument("--data", type=Path, default=Path("data/erc2-cat"))
        ap.add_argument("parts", nargs="*", type=Path)
        a = ap.parse_args(argv[1:])
        if argv[0] == "makeup":
            t = makeup(a.data)
            print(t.pivot_table(index=["kind", "gold", "how_found"], columns="half", values="n", aggfunc="sum",
                                fill_value=0, margins=True, margins_name="all").to_string())
            return
        n, problems = import_parts(a.data, a.parts)
        print("".join(p + "\n" for p in problems), end="")
        print(f"{a.data / 'labels.jsonl'}: {n} labels appended, {len(problems)} lines refused")
        raise SystemExit(2 if problems else 0)
    ap = argparse.ArgumentParser(prog="python -m rag.valgen_catalogue")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--extra", type=Path, default=valgen.SHARED / "erc2-extra")
    ap.add_argument("--dev", type=Path, default=valgen.SHARED / "erc2-dev")
    a = ap.parse_args(argv)
    qs = write_set(a.out, a.extra, a.dev)
    kinds = {k: sum(q["kind"] == k for q in qs) for k in ("number", "boolean")}
    print(f"{a.out}: {len(qs)} questions", kinds)


if __name__ == "__main__":
    main()
