"""Scoring rules of stage 07 (pure functions): an answer and its references against gold.

The rules (Enterprise RAG Challenge, round 2), per question ``q``:

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

Functions: ``score_answer(value, gold)``, ``score_references(cited, pools)``, ``score_submission``
(one row per graded question) and ``summarize`` (totals and per-kind rows). Pages here are the
1-based ``PageRef.page``: :func:`rag.evaluate.load_submission` converts the submission's 0-based
``page_index``.
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

import pandas as pd

from ..core.dataset import Dataset, Gold, PageRef

# Rule constants of the challenge (not tuning knobs): see the module docstring.
NUMBER_REL_TOL = 0.01  # relative tolerance on |gold| for numbers
REF_WRONG_PENALTY = 0.1  # per cited page that is in no gold pool
REF_MISSED_POOL_PENALTY = 0.25  # per gold pool with no cited page
REF_WEIGHT = 0.5  # Score = G + REF_WEIGHT * R
NA = "N/A"


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


def _na_rates(frame: pd.DataFrame) -> dict[str, float | None]:
    """N/A precision (answered N/A and gold N/A / answered N/A) and recall (/ gold N/A) of ``frame``."""
    both = int((frame.gold_na & frame.answer_na).sum())
    return {"na_precision": _ratio(both, int(frame.answer_na.sum())),
            "na_recall": _ratio(both, int(frame.gold_na.sum()))}


def summarize(per_q: pd.DataFrame) -> dict[str, Any]:
    """Totals (G, R, score, max_score, accuracy, N/A precision/recall) and per-kind rows."""
    n = len(per_q)
    if n == 0:
        return {"totals": {"questions": 0, "G": 0.0, "R": 0.0, "score": 0.0, "max_score": 0.0}, "by_kind": []}
    G, R = float(per_q.answer_score.sum()), float(per_q.ref_score.sum())
    totals = {
        "questions": n, "answered": int(per_q.answered.sum()),
        "G": round(G, 4), "R": round(R, 4), "score": round(G + REF_WEIGHT * R, 4),
        "max_score": (1 + REF_WEIGHT) * n, "score_pct": round(100 * (G + REF_WEIGHT * R) / ((1 + REF_WEIGHT) * n), 2),
        "answer_accuracy": round(float(per_q.correct.mean()), 4),
        "mean_answer_score": round(G / n, 4), "mean_ref_score": round(R / n, 4),
        **_na_rates(per_q),
        "wrong_refs": int(per_q.wrong.sum()), "missed_pools": int(per_q.missed.sum()),
    }
    by_kind = []
    for kind, grp in per_q.groupby("kind", sort=True):
        g_, r_ = float(grp.answer_score.sum()), float(grp.ref_score.sum())
        by_kind.append({"kind": kind, "questions": len(grp), "G": round(g_, 4), "R": round(r_, 4),
                        "score": round(g_ + REF_WEIGHT * r_, 4), "max_score": (1 + REF_WEIGHT) * len(grp),
                        "answer_accuracy": round(float(grp.correct.mean()), 4),
                        "gold_na": int(grp.gold_na.sum()),
                        **_na_rates(grp),
                        # questions with a real value answered right (the recall N/A gates cost)
                        "value_correct": int((grp.correct & ~grp.gold_na).sum())})
    return {"totals": totals, "by_kind": by_kind}
