"""Right filing by class on FinanceBench, from routing alone (no index, no model: seconds).

    python benchmarks/fb_routing.py --data data/fb-dev [--half tuning|report|all] [--misses]

The halves are data/splits.json's "financebench" companies (the report half is scored with group totals
only: ``--misses``, one line per wrong question, is refused there). Classes:

- how the company is written, as routing found it (rag.retrieve.route.Routed.how): "named" (its name, or the
  name without Inc./Co.), "ticker or short name" (an alias from subset.csv, a short form, an acronym), "no
  company" (none recognised: the one-company rule, a period only one filing has, or unrouted);
- how the filing is named, from the question's words (rag.retrieve.filing): "by date or kind" (a date, a
  document type, or an adjusted / non-GAAP figure), "by period" (a fiscal year or quarter), "no period".

Each row: right filing (the first routed report is the question's doc_name) in the shared setting (the
pipeline routes itself) and in the per-filing setting (``retrieve.given_filing``: the question's filing
given). A last table checks the no-period rule: for questions naming no period, about a company with
several filings, how many the latest annual filing (the rule), the latest filing of any kind, or the
earliest annual filing would get right.

``--run R`` (a shared-setting run with 05 records) adds that run's right filing and evidence hit@10 by answer
form for the half (rag.evaluate.financebench.score_run), and the same in the per-filing setting (see
:func:`run_table`): group totals only.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag.core.dataset import load_dataset  # noqa: E402
from rag.evaluate.financebench import load_meta, score_run  # noqa: E402
from rag.retrieve.periods import NON_GAAP, question_doc_type, question_periods  # noqa: E402
from rag.retrieve.names import normalize_tokens  # noqa: E402
from rag.retrieve.route import route_filings  # noqa: E402

COMPANY_CLASS = {"name": "named", "alias": "ticker or short name", "short form": "ticker or short name",
                 "acronym": "ticker or short name", "spelling": "ticker or short name", "one company": "no company", "period only": "no company"}


def filing_class(text: str) -> str:
    periods = question_periods(text)
    if question_doc_type(text) or NON_GAAP.search(text) or any(p.day for p in periods):
        return "by date or kind"
    return "by period" if periods else "no period"


def halves(data: Path) -> dict[str, set[str]]:
    splits = json.loads((ROOT / "data" / "splits.json").read_text(encoding="utf-8"))["financebench"]
    return {h: {c.casefold() for c in splits[h]} for h in ("tuning", "report")}


def rows(ds, half_companies: set[str] | None) -> list[dict]:
    meta = load_meta(ds)
    sha1_of_doc = {r.pdf.stem: r.sha1 for r in ds.reports}
    out = []
    for q in ds.questions:
        m = meta.get(q.text)
        if m is None or (half_companies is not None and m.get("company", "").casefold() not in half_companies):
            continue
        gold = sha1_of_doc.get(m["doc_name"])
        routed = route_filings(q.text, ds.reports)
        given = route_filings(q.text, ds.reports, q.filing)
        out.append({"id": m.get("financebench_id"), "company": m.get("company", ""), "doc": m["doc_name"],
                    "company_class": COMPANY_CLASS.get(routed[0].how, "no company") if routed else "no company",
                    "filing_class": filing_class(q.text),
                    "right": bool(routed) and routed[0].sha1 == gold,
                    "right_given": bool(given) and given[0].sha1 == gold,
                    "routed": [ds.report(r.sha1).filing for r in routed], "why": routed[0].reason if routed else "",
                    "no_period_rule": _no_period(q.text, ds, routed, gold)})
    return out


def _no_period(text: str, ds, routed, gold: str) -> dict[str, bool] | None:
    """For a question naming no period about a company with several filings: which rule gets it right."""
    if question_periods(text) or not routed:
        return None
    company = tuple(normalize_tokens(ds.report(routed[0].sha1).company))
    filings = [r for r in ds.reports if tuple(normalize_tokens(r.company)) == company and r.period]
    if len(filings) < 2:
        return None
    key = lambda r: (r.period[:4], r.period)  # noqa: E731 - fiscal year, then quarter / date
    annual = sorted((r for r in filings if r.doc_type in ("10-K", "annual report")), key=key)
    latest_any = max(filings, key=key)
    return {"latest annual (the rule)": bool(annual) and annual[-1].sha1 == gold,
            "latest filing of any kind": latest_any.sha1 == gold,
            "earliest annual": bool(annual) and annual[0].sha1 == gold}


def table(rs: list[dict], by: str) -> list[str]:
    lines = [f"| {by.replace('_', ' ')} | questions | right filing, shared | right filing, per filing |",
             "|---|---|---|---|"]
    for key in sorted({r[by] for r in rs}):
        g = [r for r in rs if r[by] == key]
        lines.append(f"| {key} | {len(g)} | {sum(r['right'] for r in g)} | {sum(r['right_given'] for r in g)} |")
    lines.append(f"| all | {len(rs)} | {sum(r['right'] for r in rs)} | {sum(r['right_given'] for r in rs)} |")
    return lines


def no_period_table(rs: list[dict]) -> list[str]:
    np_rows = [r["no_period_rule"] for r in rs if r["no_period_rule"] is not None]
    if not np_rows:
        return ["(no question names no period about a company with several filings)"]
    counts = Counter(k for r in np_rows for k, ok in r.items() if ok)
    return ["| no period named, company with several filings | right filing |", "|---|---|",
            *[f"| {k} | {counts[k]} of {len(np_rows)} |" for k in np_rows[0]]]


def run_table(ds, run: str, half_companies: set[str] | None) -> list[str]:
    """Right filing and evidence hit@10 of run ``run``'s 05 records (the shared setting), by answer form
    (group totals over the questions 05 has done), and the same in the per-filing setting: a question whose
    own filing is the one 05 routed it to has the same candidates in both settings (05's search reads the
    routed filing and the question only), any other is retrieved again here in its own filing (no file
    written)."""
    from rag.core.config import load_config
    from rag.retrieve import load_records, retrieve_question

    cfg = load_config("offline", data_dir=str(ds.root), run=run)
    given_cfg = load_config("offline", data_dir=str(ds.root), run=run, overrides={"retrieve.given_filing": True})
    meta = load_meta(ds)
    keep = {q.qid for q in ds.questions if q.text in meta and (
        half_companies is None or meta[q.text].get("company", "").casefold() in half_companies)}
    shared = {k: v for k, v in load_records(cfg, ds).items() if k in keep}
    given = {qid: rec if rec.routed and rec.routed[0].sha1 == ds.question(qid).filing
             else retrieve_question(given_cfg, ds.question(qid), ds) for qid, rec in shared.items()}
    again = sum(given[k] is not shared[k] for k in shared)
    lines = [f"run {run}: 05 records of {len(shared)} of {len(keep)} questions; per filing: {again} retrieved "
             "again in their own filing, the others' candidates as in the shared run", "",
             "| form | questions | right filing, shared | evidence hit@10, shared | right filing, per filing "
             "| evidence hit@10, per filing |", "|---|---|---|---|---|---|"]
    tables = [score_run(ds, {}, recs)[0] for recs in (shared, given)]
    tables = [t[t["qid"].isin(shared)] for t in tables]
    for form in [*sorted(tables[0]["form"].unique()), "all"]:
        cells = []
        for t in tables:
            g = t if form == "all" else t[t["form"] == form]
            cells += [f"{int(g['right_filing'].astype(float).sum())}/{len(g)}",
                      f"{int(g['evidence_hit@10'].dropna().sum())}/{len(g['evidence_hit@10'].dropna())}"]
        lines.append(f"| {form} | {len(tables[0] if form == 'all' else tables[0][tables[0]['form'] == form])} | "
                     + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="data/fb-dev")
    ap.add_argument("--half", choices=("tuning", "report", "all"), default="tuning")
    ap.add_argument("--misses", action="store_true", help="one line per wrong filing (tuning half only)")
    ap.add_argument("--run", action="append", default=[], help="also score this run's 05 records (repeatable)")
    a = ap.parse_args(argv)
    if a.misses and a.half != "tuning":
        print("error: --misses shows questions: the tuning half only (the report half is scored by group totals)",
              file=sys.stderr)
        return 2
    ds = load_dataset(a.data, check_hashes=False)
    rs = rows(ds, None if a.half == "all" else halves(Path(a.data))[a.half])
    print(f"{a.data}, {a.half} half: {len(rs)} questions, routing only\n")
    print("\n".join(table(rs, "company_class")) + "\n")
    print("\n".join(table(rs, "filing_class")) + "\n")
    print("\n".join(no_period_table(rs)))
    for run in a.run:
        print("\n" + "\n".join(run_table(ds, run, None if a.half == "all" else halves(Path(a.data))[a.half])))
    if a.misses:
        for r in rs:
            if not r["right"]:
                print(f"  miss {r['id']} {r['doc']}: routed {r['routed']} ({r['why']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
