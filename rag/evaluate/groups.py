"""Scores by group: what a total hides (values found vs N/A, True vs False booleans).

A set where half the gold is N/A rewards abstaining; one total cannot show it. :func:`group_table` splits the
per-question rows of :func:`rag.evaluate.evaluate_submission` (or a run's ``07_evaluate/per_question.csv``)
into groups, each "``right`` of ``n``":

- ``number value``, ``name value``, ``names value``, ``comparative value``: questions whose gold is a real
  value (not N/A); ``right`` = answered right (names: Jaccard 1.0; ``score`` = summed answer score, i.e.
  partial names credit), ``as_na`` = answered N/A, ``wrong`` = answered another value (or nothing);
- ``all values``: the four above together (the "values found" of issue 28);
- ``N/A recall``: gold-N/A questions answered N/A; ``N/A precision``: N/A answers whose gold is N/A;
- ``boolean True-gold`` / ``boolean False-gold``: booleans by their gold.

:func:`paired_groups` puts two runs' groups side by side (questions matched by text) with the questions that
flipped in each group. Differences of one or two questions are noise on sets of this size.
"""
from __future__ import annotations

import ast
from typing import Any

import pandas as pd

VALUE_KINDS = ("number", "name", "names", "comparative")
COLUMNS = ["group", "n", "right", "pct", "score", "as_na", "wrong"]


def gold_list(g: Any) -> list[str]:
    """Gold answers as a list: the per-question table holds a list, its CSV the list's repr."""
    if isinstance(g, str):
        try:
            g = ast.literal_eval(g)
        except (ValueError, SyntaxError):
            g = [g]
    return [str(x) for x in (g if isinstance(g, (list, tuple)) else [g])]


def _bool_gold(g: Any) -> str | None:
    vals = {x.strip().lower() for x in gold_list(g)}
    return "True" if vals == {"true"} else "False" if vals == {"false"} else None


def _bools(s: pd.Series) -> pd.Series:
    """bool column of the table or of its CSV (which may read back "True"/"False" strings)."""
    return s.map(lambda v: v if isinstance(v, bool) else str(v).strip().lower() == "true").astype(bool)


def group_masks(per_q: pd.DataFrame) -> dict[str, pd.Series]:
    """``{group: boolean mask over per_q}`` for every group but the N/A precision one."""
    gold_na, kind = _bools(per_q.gold_na), per_q.kind
    bool_gold = per_q.gold.map(_bool_gold)
    masks = {f"{k} value": (kind == k) & ~gold_na for k in VALUE_KINDS}
    masks["all values"] = kind.isin(VALUE_KINDS) & ~gold_na
    masks["N/A recall"] = gold_na
    masks["boolean True-gold"] = (kind == "boolean") & (bool_gold == "True")
    masks["boolean False-gold"] = (kind == "boolean") & (bool_gold == "False")
    return masks


def _row(group: str, frame: pd.DataFrame) -> dict[str, Any]:
    n, right = len(frame), int(_bools(frame.correct).sum())
    answer_na = _bools(frame.answer_na)
    return {"group": group, "n": n, "right": right, "pct": round(100 * right / n, 1) if n else None,
            "score": round(float(frame.answer_score.sum()), 2), "as_na": int(answer_na.sum()),
            "wrong": int((~answer_na & ~_bools(frame.correct)).sum())}


def group_table(per_q: pd.DataFrame) -> pd.DataFrame:
    """One row per group (:data:`COLUMNS`); groups with no question are left out, except the N/A rows."""
    if per_q is None or not len(per_q):
        return pd.DataFrame(columns=COLUMNS)
    rows = []
    for group, mask in group_masks(per_q).items():
        if mask.any() or group == "N/A recall":
            rows.append(_row(group, per_q[mask]))
    na_answers = per_q[_bools(per_q.answer_na)]  # precision: of the N/A answers, how many had N/A gold
    prec = _row("N/A precision", na_answers)
    prec.update(right=int(_bools(na_answers.gold_na).sum()), wrong=int((~_bools(na_answers.gold_na)).sum()))
    prec["pct"] = round(100 * prec["right"] / prec["n"], 1) if prec["n"] else None
    rows.insert(next(i for i, r in enumerate(rows) if r["group"] == "N/A recall") + 1, prec)
    return pd.DataFrame(rows, columns=COLUMNS)


def paired_groups(per_a: pd.DataFrame, per_b: pd.DataFrame) -> pd.DataFrame:
    """Groups of run a and run b side by side over the questions both scored (matched by text):
    ``right_a``, ``right_b``, ``gained`` (right in b only), ``lost`` (right in a only)."""
    keep = ["question", "kind", "gold", "gold_na", "correct", "answer_na", "answer_score"]
    m = per_a[keep].merge(per_b[keep].drop(columns=["kind", "gold", "gold_na"]), on="question", suffixes=("_a", "_b"))
    side = {s: m.rename(columns={f"{c}_{s}": c for c in ("correct", "answer_na", "answer_score")}) for s in "ab"}
    ta, tb = group_table(side["a"]).set_index("group"), group_table(side["b"]).set_index("group")
    ca, cb = _bools(m.correct_a), _bools(m.correct_b)
    masks = group_masks(side["a"])
    masks["N/A precision"] = None  # a different question set per run: no flips
    out = []
    for group in ta.index:
        row = {"group": group, "n_a": int(ta.at[group, "n"]), "right_a": int(ta.at[group, "right"]),
               "n_b": int(tb.at[group, "n"]), "right_b": int(tb.at[group, "right"])}
        mask = masks.get(group)
        row["gained"] = int((mask & cb & ~ca).sum()) if mask is not None else None
        row["lost"] = int((mask & ca & ~cb).sum()) if mask is not None else None
        out.append(row)
    return pd.DataFrame(out).astype({"gained": "Int64", "lost": "Int64"})  # <NA> for N/A precision
