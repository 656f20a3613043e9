"""Stage 07: score an ERC submission against gold (answers.json and/or hand labels).

Contract:
- ``run_evaluate(cfg, ds, progress=True, gold_source="both", labels_path=None) -> DataFrame`` scores
  ``06_answer/submission.json`` into ``07_evaluate/`` (scores.json, CSV tables, PNG plots).
- ``evaluate_submission(path, ds, gold_source, labels_path) -> (per-question table, summary)``: no
  files written; ``compare_runs(*runs)`` puts evaluated runs side by side.
- The scoring rules of the Enterprise RAG Challenge (round 2) are :mod:`rag.evaluate.scoring`.

Pages: the submission's ``page_index`` is 0-based; gold ``PageRef.page`` is 1-based; the conversion
happens in :func:`load_submission` only.
"""
from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from ..core.artifacts import file_sha256, hash_key, read_json, run_dir_of

from ..core import stages
from ..core.stage import Stage
from ..core.config import RunConfig
from ..core.dataset import Dataset, Gold, PageRef
# score_answer, score_references: re-exported, tests import them from rag.evaluate.
from .scoring import score_answer, score_references, score_submission, summarize  # noqa: F401
from .groups import group_table, paired_groups
# load_submission, SubmissionError: re-exported (callers and tests import them from rag.evaluate).
from .submission_file import SubmissionError, load_submission  # noqa: F401

STAGE = stages.name_of("evaluate")  # this package's folder, from the registry (rag.core.stages)


def gold_for(ds: Dataset, source: str = "both", labels_path: Path | str | None = None) -> dict[str, tuple[Gold, str]]:
    """``{question text: (Gold, origin)}``; ``source`` in answers | labels | both (labels override)."""
    if source not in ("answers", "labels", "both"):
        raise ValueError(f"gold source must be answers, labels or both, not {source!r}")
    out: dict[str, tuple[Gold, str]] = {}
    if source in ("answers", "both"):
        out.update({t: (g, "answers") for t, g in ds.gold.items()})
    if source in ("labels", "both"):
        from ..core.labels import labels_as_gold, labels_path as default_path

        p = Path(labels_path) if labels_path else default_path(ds)
        if p.exists():
            out.update({t: (g, "labels") for t, g in labels_as_gold(p).items()})
    return out


# ---- scoring a whole submission --------------------------------------------------------
def evaluate_submission(path: Path | str, ds: Dataset, gold_source: str = "both",
                        labels_path: Path | str | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Score one submission file: (per-question table, summary dict). No files written."""
    sub = load_submission(path)
    gold = gold_for(ds, gold_source, labels_path)
    per_q = score_submission(sub, ds, gold)
    summary = summarize(per_q)
    known = {q.text for q in ds.questions}
    summary["unknown_questions"] = sorted(t for t in sub if t not in known)
    summary["ungraded_questions"] = sorted(q.qid for q in ds.questions if q.text not in gold)
    return per_q, summary


# ---- stage ------------------------------------------------------------------------------
def retrieval_table(cfg: RunConfig, ds: Dataset) -> pd.DataFrame | None:
    """``rag.evaluate.retrieval_metrics.retrieval_metrics`` of this run (column ``order`` = "final"; with a reranker also
    the pre-rerank "retrieval" order), or None when the module or 05_retrieve outputs are absent."""
    try:
        from .retrieval_metrics import retrieval_metrics
        from ..retrieve import load_records
    except ImportError:
        return None
    if not load_records(cfg, ds):
        return None
    orders = ["final"] + (["retrieval"] if cfg.rerank.mode != "none" else [])
    tables = []
    for order in orders:
        try:
            res = retrieval_metrics(cfg, ds, order=order)
        except (FileNotFoundError, ValueError, KeyError) as e:
            warnings.warn(f"retrieval metrics ({order}) skipped: {e}")
            continue
        if res is None:
            continue
        df = res if isinstance(res, pd.DataFrame) else pd.DataFrame([res] if isinstance(res, Mapping) else res)
        tables.append(df.assign(order=order))
    return pd.concat(tables, ignore_index=True) if tables else None


def run_evaluate(cfg: RunConfig, ds: Dataset, progress: bool = True, gold_source: str = "both",
                 labels_path: Path | str | None = None) -> pd.DataFrame:
    """Score ``outputs/<run>/06_answer/submission.json``; write ``07_evaluate/`` files; return per-question rows.

    Writes ``scores.json`` (totals, by_kind, groups, retrieval, stage costs), ``per_question.csv``,
    ``by_kind.csv``, ``groups.csv`` (:mod:`rag.evaluate.groups`: values found, N/A precision/recall, booleans by gold), ``retrieval.csv`` (when ``rag.evaluate.retrieval_metrics`` exists), ``stage_costs.csv`` (per stage:
    seconds, items, tokens by kind, cost in USD, from the summed item usage records) and PNG plots.
    Always recomputes (cheap); the manifest records the hashes of the submission and gold it used.
    """
    from . import plots

    from ..answer import submission_path

    sub_path = submission_path(cfg)
    stage = Stage(cfg, STAGE)
    with stage.timed("score"):
        per_q, summary = evaluate_submission(sub_path, ds, gold_source, labels_path)
    retrieval = retrieval_table(cfg, ds)
    costs = plots.stage_costs(cfg)
    summary["retrieval"] = None if retrieval is None else retrieval.to_dict(orient="records")
    summary["stage_costs"] = costs.to_dict(orient="records")
    summary["gold_source"] = gold_source
    summary["groups"] = json.loads(group_table(per_q).to_json(orient="records"))  # NaN (no question) -> null
    stage.write_json("scores.json", summary)
    stage.write_text("per_question.csv", per_q.to_csv(index=False))
    stage.write_text("by_kind.csv", pd.DataFrame(summary["by_kind"]).to_csv(index=False))
    stage.write_text("groups.csv", pd.DataFrame(summary["groups"]).to_csv(index=False))
    stage.write_text("stage_costs.csv", costs.to_csv(index=False))
    if retrieval is not None:
        stage.write_text("retrieval.csv", retrieval.to_csv(index=False))
    summary["financebench"] = _financebench(cfg, ds, stage, sub_path)
    if summary["financebench"] is not None:  # after the write above: scores.json gets it too
        stage.write_json("scores.json", summary)
    with stage.timed("plots"):
        stage.write_bytes("score_by_kind.png", plots.score_by_kind_png(pd.DataFrame(summary["by_kind"])))
        if retrieval is not None and plots.hit_at_k(retrieval):
            stage.write_bytes("retrieval_hit_at_k.png", plots.retrieval_hit_png(retrieval))
        if len(costs):
            stage.write_bytes("stage_costs.png", plots.stage_costs_png(costs))
        if cfg.answer.table_candidates and "kind" in per_q and (per_q.kind == "number").any():  # N/A threshold
            from .tradeoff import tradeoff

            curve = tradeoff([run_dir_of(cfg)])
            stage.write_text("na_tradeoff.csv", curve.to_csv(index=False))
            stage.write_bytes("na_tradeoff.png", plots.tradeoff_png(curve))
    key = hash_key(file_sha256(sub_path), gold_source, sorted(ds.gold), summary["totals"])
    stage.mark_done("scores", key)
    stage.finish(counts=summary["totals"], inputs={"submission": file_sha256(sub_path)})
    if progress:
        t = summary["totals"]
        print(f"[07_evaluate] score {t['score']} / {t['max_score']} (G={t['G']}, R={t['R']}, "
              f"accuracy={t.get('answer_accuracy')}) over {t['questions']} questions", flush=True)
        print("[07_evaluate] cost by stage:\n" + costs.to_string(index=False), flush=True)
    return per_q


def _financebench(cfg: RunConfig, ds: Dataset, stage: Stage, sub_path: Path) -> dict[str, Any] | None:
    """FinanceBench scores (rag.evaluate.financebench) when the dataset was imported from it, else None."""
    from . import financebench

    if not financebench.load_meta(ds):
        return None
    from ..answer import load_answers
    from ..retrieve import load_records

    # seconds per question = 05's retrieval + 06's answering (it was 05's alone: 0.1 s for ~90 s answers)
    answering = {qid: float(rec.seconds or 0.0) for qid, rec in load_answers(cfg).items()}
    return financebench.write_financebench(stage, ds, load_submission(sub_path), load_records(cfg, ds),
                                           answer_seconds=answering, given_filing=cfg.retrieve.given_filing)


def scores_path(cfg_or_run: RunConfig | Path | str) -> Path:
    """``07_evaluate/scores.json`` of a run (may not exist yet)."""
    return run_dir_of(cfg_or_run) / STAGE / "scores.json"


# ---- runs side by side ------------------------------------------------------------------
def run_row(run_dir: Path) -> dict[str, Any]:
    """One flat row for a run folder: totals, per-kind scores, retrieval hit@k means, time, tokens."""
    from .plots import hit_at_k, stage_costs_from_dir

    path = scores_path(run_dir)
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: run stage 07_evaluate for {run_dir.name} first")
    s = read_json(path)
    row: dict[str, Any] = {"run": run_dir.name, **s.get("totals", {})}
    for k in s.get("by_kind", []):
        row[f"score.{k['kind']}"] = k["score"]
    if s.get("retrieval"):
        for k, v in hit_at_k(pd.DataFrame(s["retrieval"])).items():
            row[f"hit@{k}"] = v
    costs = stage_costs_from_dir(run_dir)
    row["seconds"] = round(float(costs.seconds.sum()), 2) if len(costs) else None
    row["tokens"] = int(costs.tokens.sum()) if len(costs) else None
    return row


def compare_runs(*runs: RunConfig | Path | str) -> pd.DataFrame:
    """Runs side by side (one row each) from their ``07_evaluate/scores.json`` and stage manifests.

    Each argument is a RunConfig, a run folder ``outputs/<run>`` or its ``07_evaluate`` folder.
    """
    if len(runs) == 1 and isinstance(runs[0], (list, tuple)):
        runs = tuple(runs[0])
    return pd.DataFrame([run_row(run_dir_of(r)) for r in runs]).set_index("run")


def paired(run_a: RunConfig | Path | str, run_b: RunConfig | Path | str) -> pd.DataFrame:
    """Questions (matched by text) whose answer score or reference score differs between two scored runs:
    one row each with both values and scores, ``flip`` = "gained"/"lost" (answer correct in b, not in a /
    the other way) or "refs" (same correctness, other references)."""
    cols = ["question", "kind", "gold", "value", "correct", "answer_score", "ref_score"]
    a, b = (pd.read_csv(run_dir_of(r) / STAGE / "per_question.csv")[cols] for r in (run_a, run_b))
    m = a.merge(b, on=["question", "kind", "gold"], suffixes=("_a", "_b"))
    m = m[(m.answer_score_a != m.answer_score_b) | (m.ref_score_a != m.ref_score_b)].copy()
    m["flip"] = ["gained" if cb and not ca else "lost" if ca and not cb else "refs"
                 for ca, cb in zip(m.correct_a, m.correct_b)]
    return m.reset_index(drop=True)


def per_question(run: RunConfig | Path | str) -> pd.DataFrame:
    """A scored run's ``07_evaluate/per_question.csv``."""
    path = run_dir_of(run) / STAGE / "per_question.csv"
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: run stage 07_evaluate for {run_dir_of(run).name} first")
    if not path.read_text(encoding="utf-8").strip():  # 07 on a dataset without gold writes an empty table
        raise ValueError(f"{path} is empty: run {run_dir_of(run).name} was scored without gold answers "
                         "(the dataset has no answers.json and no labels.jsonl)")
    return pd.read_csv(path)


def _run_arg(run: str) -> str:
    """A run given on the command line: a folder, or a run's name under the default outputs folder
    (``dev`` -> ``outputs/dev``) when no such folder is here."""
    if Path(run).exists():
        return run
    named = RunConfig().path("outputs_dir") / run
    return str(named) if named.exists() else run


def _warn_stale(run: str) -> None:
    """One line before a run's scores when they are older than its submission (rag.evaluate.staleness)."""
    from .staleness import stale_note

    note = stale_note(run)
    if note:
        print(f"warning: {run}: scores are {note}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """``python -m rag.evaluate --data DIR --submission FILE [--gold answers|labels|both]``: print the score.
    ``python -m rag.evaluate --run RUN``: the by-group table of a run scored by 07.
    ``python -m rag.evaluate --paired RUN_A RUN_B``: totals and groups side by side, the questions that flipped."""
    import argparse

    from ..core.dataset import load_dataset

    ap = argparse.ArgumentParser(prog="python -m rag.evaluate", description=main.__doc__)
    ap.add_argument("--data")
    ap.add_argument("--submission")
    ap.add_argument("--gold", default="both", choices=("answers", "labels", "both"))
    ap.add_argument("--paired", nargs=2, metavar="RUN", help="two run folders (outputs/<run>) scored by 07")
    ap.add_argument("--run", help="a run folder (outputs/<run>) scored by 07: print its groups")
    a = ap.parse_args(argv)
    if a.run:
        a.run = _run_arg(a.run)
        try:
            table = per_question(a.run)
        except (FileNotFoundError, ValueError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        _warn_stale(a.run)
        print(group_table(table).to_string(index=False))
        return 0
    if a.paired:
        a.paired = [_run_arg(r) for r in a.paired]
        for r in a.paired:
            _warn_stale(r)
        keep = ["score", "max_score", "G", "R", "answer_accuracy", "na_precision", "na_recall", "seconds", "tokens"]
        both = compare_runs(*a.paired)
        print(both[[c for c in keep if c in both.columns]].to_string())
        flips = paired(*a.paired)
        with pd.option_context("display.max_colwidth", 70, "display.width", 250):
            print(flips[["flip", "kind", "question", "gold", "value_a", "value_b", "ref_score_a", "ref_score_b"]]
                  .to_string(index=False) if len(flips) else "no question changed")
        print("gained", int((flips.flip == "gained").sum()), "lost", int((flips.flip == "lost").sum()),
              "references only", int((flips.flip == "refs").sum()))
        print(paired_groups(*(per_question(r) for r in a.paired)).to_string(index=False))
        return 0
    if not (a.data and a.submission):
        ap.error("--data and --submission are required (or --paired RUN_A RUN_B)")
    per_q, s = evaluate_submission(a.submission, load_dataset(a.data, check_hashes=False), a.gold)
    cols = ["qid", "kind", "value", "gold", "answer_score", "ref_score", "wrong", "missed"]
    print(per_q[cols].to_string(index=False))
    print(pd.DataFrame(s["by_kind"]).to_string(index=False))
    print(group_table(per_q).to_string(index=False))
    print(json.dumps(s["totals"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
