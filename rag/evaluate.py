"""Stage 07: score an ERC submission against gold (answers.json and/or hand labels).

Scoring rules (Enterprise RAG Challenge, round 2), per question ``q``:

- **Answer score** ``a_q`` in [0, 1]:
  - ``"N/A"`` must match ``"N/A"`` exactly: gold N/A scores 1 only for the string ``"N/A"`` (whitespace
    stripped; a one-element list ``["N/A"]`` counts as N/A too); a non-N/A gold scores 0 for an N/A answer.
    ``None`` / a missing answer is *not* N/A and scores 0.
  - number: 1 when ``abs(|answer| - |gold|) <= NUMBER_REL_TOL * |gold|`` (within 1%), else 0. The sign is
    ignored on purpose: the original ranking script tested ``abs(a - g) < 0.01 * g``, which can never
    score a negative gold number; reports print negatives as "(1,234)" and the sign is rarely the
    point. Numeric strings are accepted ("1,234.5" -> 1234.5); booleans are not numbers.
  - boolean: exact, case-insensitive, stripped text (``True``, ``"True"`` and ``"true"`` are equal).
    (The original script's ``bool("False") == True`` bug is not reproduced.)
  - name and comparative: exact, case-insensitive, stripped text.
  - names: Jaccard similarity |A ∩ B| / |A ∪ B| of the sets of normalized (stripped, lower-cased)
    strings; the gold set is all of ``Gold.answers``.
  For kinds other than names, ``Gold.answers`` are alternatives: the best one counts.
- **Reference score** ``r_q = max(0, 1 - REF_WRONG_PENALTY * wrong - REF_MISSED_POOL_PENALTY * missed)``:
  ``wrong`` = distinct cited pages in no gold pool, ``missed`` = gold pools none of whose pages is cited
  (one page per pool is enough). A question with no gold pools (N/A gold, some booleans) therefore
  scores 1 when nothing is cited and loses 0.1 per cited page: every citation is wrong.
- **Total** ``Score = G + R / 2`` with ``G = sum a_q`` and ``R = sum r_q`` over the graded questions;
  the maximum is ``1.5 * n``. Answering N/A with no references to the 22 erc2-dev questions gives
  G = 7, R = 9 * 1 + 13 * 0.75 = 18.75, Score = 16.375 of 33.

Pages: the submission's ``page_index`` is 0-based; gold ``PageRef.page`` is 1-based; the conversion
happens in :func:`load_submission` only.
"""
from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any, Iterable, Mapping

import pandas as pd

from .artifacts import Stage, file_sha256, hash_key, read_json
from .config import RunConfig
from .dataset import Dataset, Gold, PageRef

# Rule constants of the challenge (not tuning knobs): see the module docstring.
NUMBER_REL_TOL = 0.01  # relative tolerance on |gold| for numbers
REF_WRONG_PENALTY = 0.1  # per cited page that is in no gold pool
REF_MISSED_POOL_PENALTY = 0.25  # per gold pool with no cited page
REF_WEIGHT = 0.5  # Score = G + REF_WEIGHT * R
NA = "N/A"
STAGE = "07_evaluate"


class SubmissionError(ValueError):
    """A submission file that does not follow the ERC format; the message names the file and entry."""


# ---- answer scoring --------------------------------------------------------------------
def _norm(v: Any) -> str:
    return str(v).strip().lower()


def is_na(value: Any) -> bool:
    """True only for the exact string "N/A" (stripped) or a one-element list holding it."""
    if isinstance(value, (list, tuple)) and len(value) == 1:
        value = value[0]
    return isinstance(value, str) and value.strip() == NA


def to_number(value: Any) -> float | None:
    """Float of an int/float or numeric string ("1,234.5"); None for anything else (bools included)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            x = float(value.strip().replace(",", "").replace("_", ""))
        except ValueError:
            return None
        return x if math.isfinite(x) else None
    return None


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple, set)):
        return list(value)
    return [value]


def score_number(value: Any, gold: str) -> float:
    a, g = to_number(value), to_number(gold)
    if a is None or g is None:
        return 0.0
    # |answer| vs |gold|: the sign is ignored (see module docstring); <= so a gold 0 can be matched.
    return 1.0 if abs(abs(a) - abs(g)) <= NUMBER_REL_TOL * abs(g) else 0.0


def jaccard(a: Iterable[Any], b: Iterable[Any]) -> float:
    sa = {_norm(x) for x in a if _norm(x)}
    sb = {_norm(x) for x in b if _norm(x)}
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def score_answer(value: Any, gold: Gold) -> float:
    """Answer score in [0, 1] of ``value`` against ``gold`` under the rules in the module docstring."""
    gold_na = any(is_na(g) for g in gold.answers) and (gold.kind != "names" or len(gold.answers) == 1)
    if gold_na:
        return 1.0 if is_na(value) else 0.0
    if value is None or is_na(value):
        return 0.0
    if gold.kind == "names":
        return jaccard(_as_list(value), gold.answers)
    if isinstance(value, (list, tuple)):  # a list where a scalar was due: only a single item can match
        if len(value) != 1:
            return 0.0
        value = value[0]
    best = 0.0
    for g in gold.answers:
        if gold.kind == "number":
            s = score_number(value, g)
        else:  # boolean, name, comparative: exact, case-insensitive, stripped
            s = 1.0 if _norm(value) == _norm(g) else 0.0
        best = max(best, s)
    return best


# ---- reference scoring -----------------------------------------------------------------
def score_references(cited: Iterable[PageRef], pools: Iterable[Iterable[PageRef]]) -> dict[str, Any]:
    """``{"ref_score", "wrong", "missed", "pools", "cited"}`` for one question (1-based pages)."""
    cited_set = {(c.sha1.lower(), c.page) for c in cited}
    pool_sets = [{(p.sha1.lower(), p.page) for p in pool} for pool in pools]
    pool_sets = [p for p in pool_sets if p]
    in_any = set().union(*pool_sets) if pool_sets else set()
    wrong = len(cited_set - in_any)
    missed = sum(1 for p in pool_sets if not (p & cited_set))
    r = max(0.0, 1.0 - REF_WRONG_PENALTY * wrong - REF_MISSED_POOL_PENALTY * missed)
    return {"ref_score": round(r, 10), "wrong": wrong, "missed": missed, "pools": len(pool_sets),
            "cited": len(cited_set)}


# ---- inputs ----------------------------------------------------------------------------
def load_submission(path: Path | str) -> dict[str, dict[str, Any]]:
    """Read an ERC submission -> ``{question_text: {"kind", "value", "refs": [PageRef 1-based]}}``.

    Raises :class:`SubmissionError` naming the file and the entry for anything off-format.
    """
    path = Path(path)
    if not path.exists():
        raise SubmissionError(f"{path}: no submission file (run stage 06_answer first)")
    try:
        data = read_json(path)
    except ValueError as e:
        raise SubmissionError(str(e)) from None
    answers = data.get("answers") if isinstance(data, dict) else None
    if not isinstance(answers, list):
        raise SubmissionError(f"{path}: expected an object with an 'answers' list")
    out: dict[str, dict[str, Any]] = {}
    for i, a in enumerate(answers):
        where = f"{path}: answers[{i}]"
        if not isinstance(a, dict) or not isinstance(a.get("question_text"), str):
            raise SubmissionError(f"{where}: missing 'question_text'")
        refs = []
        for j, r in enumerate(a.get("references") or []):
            idx = r.get("page_index") if isinstance(r, dict) else None
            if not isinstance(r, dict) or not isinstance(r.get("pdf_sha1"), str) or \
                    not isinstance(idx, int) or isinstance(idx, bool) or idx < 0:
                raise SubmissionError(f"{where}.references[{j}]: expected {{pdf_sha1: str, page_index: int >= 0}}, got {r!r}")
            refs.append(PageRef(sha1=r["pdf_sha1"], page=idx + 1))  # 0-based page_index -> 1-based page
        if a["question_text"] in out:
            warnings.warn(f"{where}: question answered twice; the last answer counts")
        out[a["question_text"]] = {"kind": a.get("kind"), "value": a.get("value"), "refs": refs}
    return out


def gold_for(ds: Dataset, source: str = "both", labels_path: Path | str | None = None) -> dict[str, tuple[Gold, str]]:
    """``{question text: (Gold, origin)}``; ``source`` in answers | labels | both (labels override)."""
    if source not in ("answers", "labels", "both"):
        raise ValueError(f"gold source must be answers, labels or both, not {source!r}")
    out: dict[str, tuple[Gold, str]] = {}
    if source in ("answers", "both"):
        out.update({t: (g, "answers") for t, g in ds.gold.items()})
    if source in ("labels", "both"):
        from .labels import labels_as_gold, labels_path as default_path

        p = Path(labels_path) if labels_path else default_path(ds)
        if p.exists():
            out.update({t: (g, "labels") for t, g in labels_as_gold(p).items()})
    return out


# ---- scoring a whole submission --------------------------------------------------------
def score_submission(submission: Mapping[str, Mapping[str, Any]], ds: Dataset,
                     gold: Mapping[str, tuple[Gold, str]]) -> pd.DataFrame:
    """One row per dataset question that has gold; an unanswered question scores as no answer, no refs."""
    rows = []
    for q in ds.questions:
        if q.text not in gold:
            continue
        g, origin = gold[q.text]
        sub = submission.get(q.text)
        value = sub["value"] if sub else None
        refs = sub["refs"] if sub else []
        a = score_answer(value, g)
        r = score_references(refs, g.pools)
        rows.append({
            "qid": q.qid, "kind": q.kind, "question": q.text, "answered": sub is not None,
            "value": value, "gold": list(g.answers), "gold_source": origin,
            "answer_score": a, "correct": a == 1.0, "gold_na": score_answer(NA, g) == 1.0,
            "answer_na": is_na(value), **r,
            "cited_pages": ";".join(f"{c.sha1[:8]}:{c.page}" for c in refs),
            "gold_pages": " | ".join(";".join(f"{p.sha1[:8]}:{p.page}" for p in pool) for pool in g.pools),
            "score": a + REF_WEIGHT * r["ref_score"],
        })
    return pd.DataFrame(rows)


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def summarize(per_q: pd.DataFrame) -> dict[str, Any]:
    """Totals (G, R, score, max_score, accuracy, N/A precision/recall) and per-kind rows."""
    n = len(per_q)
    if n == 0:
        return {"totals": {"questions": 0, "G": 0.0, "R": 0.0, "score": 0.0, "max_score": 0.0}, "by_kind": []}
    G, R = float(per_q.answer_score.sum()), float(per_q.ref_score.sum())
    both_na = int((per_q.gold_na & per_q.answer_na).sum())
    totals = {
        "questions": n, "answered": int(per_q.answered.sum()),
        "G": round(G, 4), "R": round(R, 4), "score": round(G + REF_WEIGHT * R, 4),
        "max_score": (1 + REF_WEIGHT) * n, "score_pct": round(100 * (G + REF_WEIGHT * R) / ((1 + REF_WEIGHT) * n), 2),
        "answer_accuracy": round(float(per_q.correct.mean()), 4),
        "mean_answer_score": round(G / n, 4), "mean_ref_score": round(R / n, 4),
        "na_precision": _ratio(both_na, int(per_q.answer_na.sum())),
        "na_recall": _ratio(both_na, int(per_q.gold_na.sum())),
        "wrong_refs": int(per_q.wrong.sum()), "missed_pools": int(per_q.missed.sum()),
    }
    by_kind = []
    for kind, grp in per_q.groupby("kind", sort=True):
        g_, r_ = float(grp.answer_score.sum()), float(grp.ref_score.sum())
        by_kind.append({"kind": kind, "questions": len(grp), "G": round(g_, 4), "R": round(r_, 4),
                        "score": round(g_ + REF_WEIGHT * r_, 4), "max_score": (1 + REF_WEIGHT) * len(grp),
                        "answer_accuracy": round(float(grp.correct.mean()), 4)})
    return {"totals": totals, "by_kind": by_kind}


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
    """``rag.metrics.retrieval_metrics`` of this run (column ``order`` = "final"; with a reranker also
    the pre-rerank "retrieval" order), or None when the module or 05_retrieve outputs are absent."""
    try:
        from .metrics import retrieval_metrics
    except ImportError:
        return None
    if not (cfg.run_dir / "05_retrieve").is_dir():
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

    Writes ``scores.json`` (totals, by_kind, retrieval, stage costs), ``per_question.csv``,
    ``by_kind.csv``, ``retrieval.csv`` (when ``rag.metrics`` exists), ``stage_costs.csv`` and PNG plots.
    Always recomputes (cheap); the manifest records the hashes of the submission and gold it used.
    """
    from . import plots

    sub_path = cfg.run_dir / "06_answer" / "submission.json"
    stage = Stage(cfg, STAGE)
    with stage.timed("score"):
        per_q, summary = evaluate_submission(sub_path, ds, gold_source, labels_path)
    retrieval = retrieval_table(cfg, ds)
    costs = plots.stage_costs(cfg)
    summary["retrieval"] = None if retrieval is None else retrieval.to_dict(orient="records")
    summary["stage_costs"] = costs.to_dict(orient="records")
    summary["gold_source"] = gold_source
    stage.write_json("scores.json", summary)
    stage.write_text("per_question.csv", per_q.to_csv(index=False))
    stage.write_text("by_kind.csv", pd.DataFrame(summary["by_kind"]).to_csv(index=False))
    stage.write_text("stage_costs.csv", costs.to_csv(index=False))
    if retrieval is not None:
        stage.write_text("retrieval.csv", retrieval.to_csv(index=False))
    with stage.timed("plots"):
        stage.write_bytes("score_by_kind.png", plots.score_by_kind_png(pd.DataFrame(summary["by_kind"])))
        if retrieval is not None and plots.hit_at_k(retrieval):
            stage.write_bytes("retrieval_hit_at_k.png", plots.retrieval_hit_png(retrieval))
        if len(costs):
            stage.write_bytes("stage_costs.png", plots.stage_costs_png(costs))
    key = hash_key(file_sha256(sub_path), gold_source, sorted(ds.gold), summary["totals"])
    stage.mark_done("scores", key)
    stage.finish(counts=summary["totals"], inputs={"submission": file_sha256(sub_path)})
    if progress:
        t = summary["totals"]
        print(f"[07_evaluate] score {t['score']} / {t['max_score']} (G={t['G']}, R={t['R']}, "
              f"accuracy={t.get('answer_accuracy')}) over {t['questions']} questions", flush=True)
    return per_q


# ---- runs side by side ------------------------------------------------------------------
def _run_dir(x: RunConfig | Path | str) -> Path:
    if isinstance(x, RunConfig):
        return x.run_dir
    p = Path(x)
    return p.parent if p.name == STAGE else p


def run_row(run_dir: Path) -> dict[str, Any]:
    """One flat row for a run folder: totals, per-kind scores, retrieval hit@k means, time, tokens."""
    from .plots import hit_at_k, stage_costs_from_dir

    path = run_dir / STAGE / "scores.json"
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
    return pd.DataFrame([run_row(_run_dir(r)) for r in runs]).set_index("run")


def main(argv: list[str] | None = None) -> int:
    """``python -m rag.evaluate --data DIR --submission FILE [--gold answers|labels|both]``: print the score."""
    import argparse

    from .dataset import load_dataset

    ap = argparse.ArgumentParser(prog="python -m rag.evaluate", description=main.__doc__)
    ap.add_argument("--data", required=True)
    ap.add_argument("--submission", required=True)
    ap.add_argument("--gold", default="both", choices=("answers", "labels", "both"))
    a = ap.parse_args(argv)
    per_q, s = evaluate_submission(a.submission, load_dataset(a.data, check_hashes=False), a.gold)
    cols = ["qid", "kind", "value", "gold", "answer_score", "ref_score", "wrong", "missed"]
    print(per_q[cols].to_string(index=False))
    print(pd.DataFrame(s["by_kind"]).to_string(index=False))
    print(json.dumps(s["totals"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
