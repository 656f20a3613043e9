"""The tuning half and the report half of a labelled set (``data/splits.json``), and the report half's score as
group totals only.

Rules, thresholds, lexicon entries and prompts are chosen by reading the tuning half; the report half is
scored by this command, which never prints a question, an answer or a gold value, only group totals::

    python -m rag.evaluate.halves --data data/erc2-cat --run outputs/RUN [--half report] [--against outputs/RUN0]

A question belongs to a half when every company it names is in that half (a comparative across halves belongs
to neither). ERC sets name companies by ``subset.csv``'s company_name in the text and are split by sha1;
FinanceBench datasets (``financebench.jsonl`` beside ``questions.json``) carry each question's company and are
split by company name. erc2-dev is report-only: all its companies are in the report half.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from ..core.dataset import Dataset, load_dataset

SPLITS = Path(__file__).resolve().parents[2] / "data" / "splits.json"
HALVES = ("tuning", "report")


def load_splits(path: Path | str = SPLITS) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def question_companies(ds: Dataset) -> dict[str, frozenset[str]]:
    """``{question text: companies it names}``: sha1s for ERC sets, company names for FinanceBench ones."""
    fb = ds.root / "financebench.jsonl"
    if fb.exists():
        rows = [json.loads(ln) for ln in fb.read_text(encoding="utf-8").splitlines() if ln.strip()]
        by_text = {r["text"]: frozenset([r["company"]]) for r in rows}
        return {q.text: by_text.get(q.text, frozenset()) for q in ds.questions}
    return {q.text: frozenset(r.sha1 for r in ds.reports if r.company and r.company in q.text)
            for q in ds.questions}


def half_texts(ds: Dataset, half: str, splits: dict | None = None) -> set[str]:
    """Texts of the questions of ``ds`` in ``half`` (every company named is in it; none named: in neither)."""
    if half not in HALVES:
        raise ValueError(f"half must be one of {HALVES}, not {half!r}")
    splits = splits or load_splits()
    fb = (ds.root / "financebench.jsonl").exists()
    members = set(splits["financebench" if fb else "erc2"][half])
    return {t for t, cs in question_companies(ds).items() if cs and cs <= members}


def half_per_question(per_q: pd.DataFrame, ds: Dataset, half: str, splits: dict | None = None) -> pd.DataFrame:
    """Rows of a per-question table (:func:`rag.evaluate.evaluate_submission`) in ``half``."""
    keep = half_texts(ds, half, splits)
    return per_q[per_q.question.isin(keep)].reset_index(drop=True)


def totals(per_q: pd.DataFrame) -> dict:
    """ERC's totals over the rows: G (answer score), R (reference score), score = G + R/2, and n."""
    if not len(per_q):
        return {"n": 0, "G": 0.0, "R": 0.0, "score": 0.0}
    g, r = float(per_q.answer_score.sum()), float(per_q.ref_score.sum())
    return {"n": len(per_q), "G": round(g, 3), "R": round(r, 3), "score": round(g + r / 2, 3)}


def _submission(run_or_file: Path) -> Path:
    from ..answer import submission_path

    p = Path(run_or_file)
    return p if p.is_file() else submission_path(p)


def half_report(data: Path, run: Path, half: str = "report", against: Path | None = None,
                kinds: tuple[str, ...] = ()) -> str:
    """The printed report: group table (with paired gained/lost counts when ``against`` is given) and totals;
    ``kinds``: only questions of these answer kinds (a run made over one kind of a larger set)."""
    from . import evaluate_submission
    from .groups import group_table, paired_groups

    ds = load_dataset(data, check_hashes=False)
    per_q, _ = evaluate_submission(_submission(run), ds)
    part = half_per_question(per_q, ds, half)
    if kinds:
        part = part[part.kind.isin(kinds)].reset_index(drop=True)
    lines = [f"{ds.name}: {half} half, {len(part)} graded questions{' of kind ' + ','.join(kinds) if kinds else ''} "
             f"({len(half_texts(ds, half))} in the half); "
             f"submission {_submission(run)}"]
    if against is not None:
        base, _ = evaluate_submission(_submission(against), ds)
        base = half_per_question(base, ds, half)
        table = paired_groups(base[base.kind.isin(kinds)] if kinds else base, part)
        lines.append(f"a = {_submission(against)}, b = {_submission(run)}")
    else:
        table = group_table(part)
    lines.append(table.to_string(index=False))
    t = totals(part)
    lines.append(f"totals: n={t['n']} G={t['G']} R={t['R']} score={t['score']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rag.evaluate.halves", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--run", type=Path, required=True, help="a run folder (its 06 submission) or a submission file")
    ap.add_argument("--half", choices=HALVES, default="report")
    ap.add_argument("--against", type=Path, help="a second run (a) to compare with --run (b): gained / lost counts")
    ap.add_argument("--kinds", default="", help="comma-separated answer kinds to score (default: all)")
    a = ap.parse_args(argv)
    for p in [a.run] + ([a.against] if a.against else []):
        if not _submission(p).exists():
            print(f"rag.evaluate.halves: no submission at {_submission(p)}", file=sys.stderr)
            return 2
    print(half_report(a.data, a.run, a.half, a.against, tuple(k for k in a.kinds.split(",") if k)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
