"""What notebook 06 shows: ``answer_questions``, per question: answer, cited page snippet, gold and
right/wrong when gold exists.

Every function reads the run's artifacts through the owner readers only (never runs a stage), returns a pandas
DataFrame (or PNG bytes) and is cheap enough for every headless run. Views sit on top of the stages
(tests/test_layers.py): no stage code imports one. Pages are 1-based physical pages; scores "higher = better".
"""
from __future__ import annotations

import re
from typing import Any

import pandas as pd

from ..clean import page_texts
from ..core.config import RunConfig
from ..core.dataset import Dataset
from ..evaluate import evaluate_submission
from ..answer import load_answers, submission_path
from .common import QUESTION_CHARS, short

SNIPPET_CHARS = 160  # cited-page snippet in the 06 table


def _snippet(page_text: str, value: Any) -> str:
    """A window of the cited page around the answer when found (a number by its first digits, separators
    allowed: 406100000 finds "406,100"; text by its first word), else the page's start."""
    text = " ".join(page_text.split())
    probe = "" if value in (None, "N/A") or isinstance(value, bool) else str(value)
    digits = re.sub(r"\D", "", probe.split(".")[0]) if re.fullmatch(r"-?[\d.,]+", probe) else ""
    if len(digits) >= 3:
        pattern = r"[,.\s]?".join(digits[:4])
    else:
        words = re.findall(r"\w{3,}", probe)
        pattern = re.escape(words[0]) if words else ""
    m = re.search(pattern, text, re.I) if pattern else None
    start = max(0, m.start() - SNIPPET_CHARS // 2) if m else 0
    return short(text[start:], SNIPPET_CHARS)



def answer_questions(cfg: RunConfig, ds: Dataset) -> pd.DataFrame:
    """One row per answered question: answer, the first cited page and a snippet of it, and with gold the
    gold answer, ``right`` (answer score 1) and the reference score (1 = every pool hit, nothing wrong)."""
    answers = load_answers(cfg)
    graded: dict[str, dict[str, Any]] = {}
    if ds.gold and submission_path(cfg).exists():
        per_q, _ = evaluate_submission(submission_path(cfg), ds)
        graded = {row["qid"]: row for row in per_q.to_dict(orient="records")}
    rows = []
    for q in ds.questions:
        a = answers.get(q.qid)
        if a is None:
            continue
        ref = a.references[0] if a.references else None
        cited, snippet = "", ""
        if ref:
            sha1, page = ref.get("sha1", ""), int(ref.get("page", 0))  # debug records: 1-based pages
            cited = f"{sha1[:6]}:p{page}"
            try:
                snippet = _snippet(page_texts(cfg, sha1)[1].get(page, ""), a.value)
            except (FileNotFoundError, ValueError):
                snippet = ""
        row = {"qid": q.qid, "kind": q.kind, "question": short(q.text, QUESTION_CHARS), "answer": a.value,
               "cited": cited, "snippet": snippet}
        if q.qid in graded:
            gq = graded[q.qid]
            row.update({"gold": "; ".join(map(str, gq["gold"])), "right": bool(gq["correct"]),
                        "ref_score": round(float(gq["ref_score"]), 2)})
        rows.append(row)
    return pd.DataFrame(rows)
