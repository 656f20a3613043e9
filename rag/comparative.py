"""Comparative questions of stage 06 ("Which company had the highest …?").

Contracts:
- ``answer_comparative(llm, cfg, ds, q, rec, counter)``: one number question per company, each
  answered from its own report's pages (:func:`rag.fuse.answer_pages`); the winner is picked in code
  (max/min over the non-N/A values, see ``comparison_direction``) or, when the direction is unclear or
  ``answer.comparative_pick`` is "prompt", by the comparison prompt over the sub-answers. References are
  those of every sub-answer with a value.
- A 05 record without ``sub_questions`` is split and retrieved here (``rag.route.split_comparative``,
  ``rag.retrieve.retrieve_pages``, no reranking).
- ``comparison_direction(question) -> "max" | "min" | None``.
"""
from __future__ import annotations

import re
from typing import Any

from .config import RunConfig
from .context import Counter, candidates_by_report, page_row, report_or_none, to_ctx_pages
from .dataset import Dataset, Question
from .fuse import answer_pages, ask
from .interpret import finalize_references
from .prompts import NA

# Words that say which end of a comparison wins (a question with words of both sides goes to the prompt).
_MAX_WORDS = ("highest", "largest", "greatest", "most", "biggest", "maximum", "higher", "larger", "more")
_MIN_WORDS = ("lowest", "smallest", "least", "fewest", "minimum", "lower", "smaller", "less", "fewer")


def comparison_direction(question: str) -> str | None:
    words = set(re.findall(r"[a-z]+", question.lower()))
    hi, lo = bool(words & set(_MAX_WORDS)), bool(words & set(_MIN_WORDS))
    return "max" if hi and not lo else "min" if lo and not hi else None


def answer_comparative(llm: Any, cfg: RunConfig, ds: Dataset, q: Question, rec: dict[str, Any],
                       counter: Counter) -> dict[str, Any]:
    """One number question per company (own retrieval), then pick in code (max/min over non-N/A
    values) or, when the direction is unclear or ``comparative_pick`` is "prompt", by the comparison
    prompt over the sub-answers."""
    subs = rec.get("sub_questions")
    per_report = candidates_by_report(rec)
    live = not isinstance(subs, dict) or not subs
    if live:  # a record written without sub-questions: split and retrieve here (no reranking)
        from .route import split_comparative

        subs = split_comparative(q.text, q.kind, ds.reports)
    sub_answers = []
    for sha1, sub_q in subs.items():
        sub_pages = per_report.get(sha1, [])
        if live:
            from .retrieve import retrieve_pages

            sub_pages = to_ctx_pages(retrieve_pages(cfg, sub_q, sha1))
        rep = report_or_none(ds, sha1)
        res = answer_pages(llm, cfg, "number", sub_q, sub_pages, rep.currency if rep else None, counter,
                           rep.company if rep else "") \
            if sub_pages else {"value": NA, "cited": [], "calls": [], "interpretation": {}, "answering_part": None}
        refs = finalize_references(cfg, "number", res["value"], res["cited"], sub_pages, res["answering_part"])
        sub_answers.append({"sha1": sha1, "company": rep.company if rep else sha1, "question": sub_q,
                            "value": res["value"], "references": refs, "calls": res["calls"],
                            "interpretation": res["interpretation"],
                            "retrieved": [page_row(p) for p in sub_pages]})
    have = [s for s in sub_answers if isinstance(s["value"], (int, float))]
    direction = comparison_direction(q.text)
    pick_call = None
    if not have:
        value = NA
    elif direction and cfg.answer.comparative_pick == "code":
        pick = (max if direction == "max" else min)(have, key=lambda s: s["value"])
        value = pick["company"]
    else:
        lines = "\n".join(f'"{s["company"]}": {s["value"]}' for s in sub_answers)
        pick_call = ask(llm, cfg, "comparative", q.text, lines)
        v = (pick_call.get("parsed") or {}).get("final_answer", NA) or NA
        value = next((s["company"] for s in have if s["company"].lower() == str(v).strip().lower()), NA)
    refs = [r for s in sub_answers if s["value"] != NA for r in s["references"]]
    return {"value": value, "references": refs, "sub_answers": sub_answers, "direction": direction,
            "pick_call": pick_call}
