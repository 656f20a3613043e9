"""FinanceBench scoring: answers as the paper judges them, filing routing, evidence hit@k, by type and form.

Applies to a dataset written by ``rag import financebench`` (it has ``financebench.jsonl``: per question its
FinanceBench type, answer form, asked unit, decimals shown and gold as written).

Contract:
- ``judge_number``, ``judge_yes_no``, ``polarity``, ``verdict``: how one answer is judged, :mod:`rag.evaluate.fb_judge`
  (re-exported here).
- ``hand_verdicts``, ``append_verdict``, ``llm_judge``, ``submission_answers``: :mod:`rag.evaluate.fb_verdicts`
  (re-exported here).
- ``score_run(ds, submission, records, verdicts) -> (per_question DataFrame, summary dict)``: per question
  verdict, right filing (first routed report is the gold doc's) and evidence hit@k (any gold page within the
  first k pages of the routed filings' lists); the summary has totals and tables by question type and by
  answer form (accuracy over judged questions, refusals, filing accuracy, evidence hit@k, seconds) and
  ``setting``: the retrieval setting scored (:func:`setting_row`) beside the paper's baseline for it.
- ``setting_row(given_filing) -> dict``: "shared" (the pipeline routes itself: the paper's one shared
  vector store) or "per filing" (``retrieve.given_filing``: each question's filing given, the paper's store
  per filing), with the paper's GPT-4-Turbo accuracy in that setting on fb-dev's 65 questions
  (:data:`PAPER_BASELINES`, from fb-dev's README).
- ``routing_accuracy(ds, given_filing=False)``: right filing from routing alone, with each miss's reason.
- ``half_of(ds, half)``: the questions of one half of data/splits.json's FinanceBench split (CLI ``--half``;
  ``--half report`` prints no per-question line).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from ..core.dataset import Dataset
from .fb_verdicts import (VERDICTS, JudgeVerdict, append_verdict, hand_verdicts, llm_judge,  # noqa: F401 - re-exported
                          submission_answers)
from .fb_judge import NUMBER_REL_TOL, judge_number, judge_yes_no, polarity, verdict  # noqa: F401 - re-exported
from .scoring import is_na

META_FILE = "financebench.jsonl"
EVIDENCE_KS = (1, 5, 10)
# The paper's GPT-4-Turbo on fb-dev's 65 questions (human-judged, the benchmark's results/; fb-dev README).
# On the other half of the open sample: 20% shared, 53% per filing (issue 48).
PAPER_BASELINES = {"shared": ("GPT-4-Turbo, one shared vector store", 0.17),
                   "per filing": ("GPT-4-Turbo, a vector store per filing", 0.46)}


def load_meta(ds: Dataset) -> dict[str, dict]:
    """``{question text: FinanceBench metadata}``; {} when the dataset was not imported from FinanceBench."""
    path = ds.root / META_FILE
    if not path.exists():
        return {}
    return {m["text"]: m for m in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if m}


# ---- text answers: the verdicts so far (rag.evaluate.fb_verdicts) -------------------------------
def text_verdicts_table(cfg: Any, ds: Dataset) -> pd.DataFrame | None:
    """08_label's list of a run's FinanceBench text answers with gold and the hand verdict so far (None for
    other datasets); verdicts are recorded with :func:`append_verdict` into the dataset's labels.jsonl."""
    meta = load_meta(ds)
    if not meta:
        return None
    from ..answer import submission_path
    from .submission_file import load_submission

    sub = load_submission(submission_path(cfg)) if submission_path(cfg).exists() else {}
    done = hand_verdicts(ds.root / "labels.jsonl", submission_answers(sub))
    return pd.DataFrame([{"question": t, "answer": (sub.get(t) or {}).get("value"), "gold": m["gold_as_written"],
                          "verdict": done.get(t, "")} for t, m in meta.items() if m["form"] == "text"])


# ---- the run ------------------------------------------------------------------------------------
def _evidence_hits(ranked: Mapping[str, list[int]], pools, ks=EVIDENCE_KS) -> dict[str, float | None]:
    if not pools:
        return {f"evidence_hit@{k}": None for k in ks}
    ranks = [ranked.get(p.sha1, []).index(p.page) + 1 for pool in pools for p in pool
             if p.page in ranked.get(p.sha1, [])]
    best = min(ranks, default=None)
    return {f"evidence_hit@{k}": float(best is not None and best <= k) for k in ks}


def setting_row(given_filing: bool) -> dict[str, Any]:
    """The retrieval setting a run used and the paper's baseline in that setting (module contract)."""
    name = "per filing" if given_filing else "shared"
    who, acc = PAPER_BASELINES[name]
    return {"setting": name, "given_filing": given_filing, "paper_baseline": who,
            "paper_baseline_accuracy": acc}


def score_run(ds: Dataset, submission: Mapping[str, Mapping[str, Any]], records: Mapping[str, Any],
              verdicts: Mapping[str, str] | None = None,
              answer_seconds: Mapping[str, float] | None = None,
              given_filing: bool = False) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Per-question FinanceBench rows and the summary (module contract). ``submission`` as
    rag.evaluate.load_submission returns it; ``records`` {qid: RetrievalRecord} (may be empty)."""
    from .retrieval_metrics import rank_lists

    meta = load_meta(ds)
    sha1_of_doc = {r.pdf.stem: r.sha1 for r in ds.reports}
    verdicts = verdicts or {}
    rows = []
    for q in ds.questions:
        m = meta.get(q.text)
        gold = ds.gold.get(q.text)
        if m is None or gold is None:
            continue
        sub = submission.get(q.text) or {}
        rec = records.get(q.qid)
        routed = rec.routed_sha1s if rec is not None else []
        row = {"qid": q.qid, "financebench_id": m.get("financebench_id"), "type": m.get("question_type"),
               "form": m.get("form"), "doc_name": m.get("doc_name"),
               "verdict": verdict(sub.get("value"), m, gold.answers[0] if gold.answers else "", verdicts.get(q.text)),
               "value": sub.get("value"), "gold": m.get("gold_as_written"),
               "right_filing": (bool(routed) and routed[0] == sha1_of_doc.get(m.get("doc_name"))) if rec else None,
               "routed": " ".join(ds.report(s).filing for s in routed) if rec else "",
               "why": "; ".join(r.why for r in rec.routed if r.why) if rec else "",
               "seconds": (rec.seconds or 0.0) + (answer_seconds or {}).get(q.qid, 0.0) if rec else None}
        row.update(_evidence_hits(rank_lists(rec), gold.pools) if rec else {f"evidence_hit@{k}": None for k in EVIDENCE_KS})
        rows.append(row)
    per_q = pd.DataFrame(rows)
    return per_q, {"setting": setting_row(given_filing), "totals": _group_row(per_q),
                   "by_type": _table(per_q, "type"), "by_form": _table(per_q, "form")}


def _group_row(g: pd.DataFrame) -> dict[str, Any]:
    if g.empty:
        return {"questions": 0}
    judged = g[g["verdict"] != "unjudged"]
    out = {"questions": len(g), "judged": len(judged),
           "correct": int((g["verdict"] == "correct").sum()),
           "accuracy_judged": round(float((judged["verdict"] == "correct").mean()), 3) if len(judged) else None,
           "accuracy_all": round(float((g["verdict"] == "correct").mean()), 3),
           "refusals": int((g["verdict"] == "refusal").sum()),
           "unjudged": int((g["verdict"] == "unjudged").sum())}
    rf = g["right_filing"].dropna()
    out["right_filing"] = round(float(rf.astype(float).mean()), 3) if len(rf) else None
    for k in EVIDENCE_KS:
        col = g[f"evidence_hit@{k}"].dropna()
        out[f"evidence_hit@{k}"] = round(float(col.mean()), 3) if len(col) else None
    sec = g["seconds"].dropna()
    out["seconds_per_question"] = round(float(sec.mean()), 1) if len(sec) else None
    return out


def _table(per_q: pd.DataFrame, by: str) -> list[dict[str, Any]]:
    if per_q.empty:
        return []
    return [{by: key, **_group_row(g)} for key, g in per_q.groupby(by, sort=True)]


def write_financebench(stage: Any, ds: Dataset, submission: Mapping, records: Mapping,
                       verdicts: Mapping[str, str] | None = None, answer_seconds: Mapping[str, float] | None = None,
                       given_filing: bool = False) -> dict[str, Any] | None:
    """07's hook: ``financebench.json`` (summary) and ``financebench_per_question.csv`` in the stage folder;
    None (nothing written) for a dataset that is not FinanceBench's."""
    if not load_meta(ds):
        return None
    verdicts = {**hand_verdicts(ds.root / "labels.jsonl", submission_answers(submission)), **(verdicts or {})}
    per_q, summary = score_run(ds, submission, records, verdicts, answer_seconds, given_filing)
    stage.write_json("financebench.json", summary)
    stage.write_text("financebench_per_question.csv", per_q.to_csv(index=False))
    return summary


def routing_accuracy(ds: Dataset, given_filing: bool = False) -> dict[str, Any]:
    """Right filing for each question from routing alone (no index, no model): the cheap check of 05's
    first step. {"questions", "right", "misses": [(financebench_id, doc_name, routed, why)]}; with
    ``given_filing`` each question's own filing is routed (the per-filing setting)."""
    from ..retrieve.route import route_filings

    meta = load_meta(ds)
    sha1_of_doc = {r.pdf.stem: r.sha1 for r in ds.reports}
    misses, right = [], 0
    for q in ds.questions:
        m = meta.get(q.text)
        if m is None:
            continue
        routed = route_filings(q.text, ds.reports, q.filing if given_filing else "")
        if routed and routed[0].sha1 == sha1_of_doc.get(m["doc_name"]):
            right += 1
        else:
            misses.append((m.get("financebench_id"), m["doc_name"], [ds.report(r.sha1).filing for r in routed],
                           routed[0].reason if routed else "no company named"))
    return {"questions": right + len(misses), "right": right, "misses": misses}


def run_given_filing(run_dir: Path) -> bool:
    """Whether a run's 05 was made with ``retrieve.given_filing`` (its manifest's config); False without one."""
    from ..core import stages
    from ..core.artifacts import read_manifest

    try:
        m = read_manifest(Path(run_dir), stages.name_of("retrieve"), missing_ok=True) or {}
    except (ValueError, FileNotFoundError):
        return False
    return bool(((m.get("config") or {}).get("retrieve") or {}).get("given_filing", False))


def half_of(ds: Dataset, half: str) -> Dataset:
    """``ds`` with only the questions about one half's companies (data/splits.json "financebench": "tuning"
    or "report"; rules are chosen on the tuning half, the report half is scored in group totals)."""
    from ..core.config import PROJECT_ROOT

    companies = {c.casefold() for c in json.loads((PROJECT_ROOT / "data" / "splits.json").read_text(
        encoding="utf-8"))["financebench"][half]}
    meta = load_meta(ds)
    keep = tuple(q for q in ds.questions if (meta.get(q.text) or {}).get("company", "").casefold() in companies)
    return ds.model_copy(update={"questions": keep})


def main(argv: list[str] | None = None) -> int:
    """``python -m rag.evaluate.financebench --data D [--run R]``: routing accuracy (always) and, when the
    run has 05/06 outputs, the FinanceBench scores; ``--judge PRESET`` judges text answers with that preset's LLM."""
    import argparse

    from ..core.config import load_config
    from ..core.dataset import load_dataset

    ap = argparse.ArgumentParser(prog="python -m rag.evaluate.financebench")
    ap.add_argument("--data", required=True)
    ap.add_argument("--run", default=None)
    ap.add_argument("--judge", default=None, help="preset whose LLM judges text answers (else hand verdicts)")
    ap.add_argument("--given-filing", action="store_true", default=None,
                    help="score as the per-filing setting (default: the setting the run's 05 was made with)")
    ap.add_argument("--half", choices=("tuning", "report"), default=None,
                    help="only that half's companies (data/splits.json); the report half prints group totals only")
    a = ap.parse_args(argv)
    ds = load_dataset(a.data, check_hashes=False)
    if a.half:
        ds = half_of(ds, a.half)
    cfg = load_config("offline", data_dir=a.data, run=a.run or Path(a.data).name)
    given = a.given_filing if a.given_filing is not None else run_given_filing(cfg.run_dir)
    acc = routing_accuracy(ds, given)
    st = setting_row(given)
    print(f"setting: {st['setting']} (retrieve.given_filing={str(given).lower()}); the paper's baseline in it: "
          f"{st['paper_baseline']} {st['paper_baseline_accuracy']:.0%} (fb-dev)")
    print(f"right filing (routing only): {acc['right']}/{acc['questions']}")
    for miss in acc["misses"] if a.half != "report" else ():  # the report half: group totals only
        print("  miss:", *miss)
    from ..answer import submission_path
    from ..retrieve import load_records
    from .submission_file import load_submission

    records = load_records(cfg, ds)  # {} before 05 ran
    sub = load_submission(submission_path(cfg)) if submission_path(cfg).exists() else {}
    verdicts = hand_verdicts(ds.root / "labels.jsonl", submission_answers(sub))
    if a.judge and sub:
        from ..models import get_llm

        llm = get_llm(load_config(a.judge, data_dir=a.data, run=cfg.run))
        meta = load_meta(ds)
        for text, m in meta.items():
            if m["form"] == "text" and text in sub and not is_na(sub[text].get("value")) and text not in verdicts:
                verdicts[text] = llm_judge(llm, text, m["gold_as_written"], sub[text].get("value"))[0]
    per_q, summary = score_run(ds, sub, records, verdicts, given_filing=given)
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
