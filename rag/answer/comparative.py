"""Comparative questions of stage 06 ("Which company had the highest …?").

Contracts:
- ``answer_comparative(llm, cfg, ds, q, rec, counter)``: one number question per company, each
  answered from its own report's pages (:func:`rag.answer.fuse.answer_pages`); the winner is picked in code
  (max/min over the non-N/A values, see ``comparison_direction``) or, when the direction is unclear or
  ``answer.comparative_pick`` is "prompt", by the comparison prompt over the sub-answers. References are
  those of every sub-answer with a value.
- Stays in its lane: it reads only the 05 record. A record without the sub-questions (or without the
  candidates of one) raises :class:`MissingRetrieval` saying to re-run 05; it never searches itself.
- ``comparison_direction(question) -> "max" | "min" | None``.
"""
from __future__ import annotations

import re
from typing import Any

from ..core.config import RunConfig
from .common.context import Counter, candidates_by_report, page_row, report_or_none
from ..core.dataset import Dataset, Question
from .fuse import answer_pages, ask
from .interpret import finalize_references
from .common.prompts import NA
from .common.report_currency import report_currency
from ..core.records import RetrievalRecord

# Words that say which end of a comparison wins (a question with words of both sides goes to the prompt).
_MAX_WORDS = ("highest", "largest", "greatest", "most", "biggest", "maximum", "higher", "larger", "more")
_MIN_WORDS = ("lowest", "smallest", "least", "fewest", "minimum", "lower", "smaller", "less", "fewer")


def comparison_direction(question: str) -> str | None:
    words = set(re.findall(r"[a-z]+", question.lower()))
    hi, lo = bool(words & set(_MAX_WORDS)), bool(words & set(_MIN_WORDS))
    return "max" if hi and not lo else "min" if lo and not hi else None


class MissingRetrieval(ValueError):
    """A 05 record lacks what 06 needs (written by an older 05, or cut short): re-run stage 05."""


def answer_comparative(llm: Any, cfg: RunConfig, ds: Dataset, q: Question, rec: RetrievalRecord,
                       counter: Counter) -> dict[str, Any]:
    """One number question per company (own retrieval), then pick in code (max/min over non-N/A
    values) or, when the direction is unclear or ``comparative_pick`` is "prompt", by the comparison
    prompt over the sub-answers."""
    subs = rec.sub_questions
    if not subs:
        raise MissingRetrieval(f"{q.qid}: the 05_retrieve record has no sub-questions for this comparative "
                               f"question: re-run stage 05_retrieve")
    per_report = candidates_by_report(rec)
    sub_answers = []
    for sha1, sub_q in subs.items():
        if sha1 not in per_report:
            raise MissingRetrieval(f"{q.qid}: the 05_retrieve record has no candidates for sub-question "
                                   f"{sub_q!r} ({sha1}): re-run stage 05_retrieve")
        sub_pages = per_report[sha1]
        rep = report_or_none(ds, sha1)
        cur = report_currency(cfg, sha1, rep.currency if rep else None)
        res = answer_pages(llm, cfg, "number", sub_q, sub_pages, cur, counter, rep.company if rep else "") \
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
