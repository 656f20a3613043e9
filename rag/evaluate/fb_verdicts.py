"""FinanceBench text answers: hand verdicts (08_label writes them, 07 scores with them) and the LLM judge.

Contract:
- ``hand_verdicts(path, answers) -> {question: verdict}``: the last labels.jsonl line per question with a
  ``verdict`` field (correct / incorrect / refusal; written by ``append_verdict``); with ``answers``
  ({question: value}, e.g. :func:`submission_answers`) the last verdict on the run's current answer.
- ``append_verdict(path, question, answer, verdict)``: one appended, fsynced labels.jsonl line.
- ``llm_judge(llm, question, gold, answer) -> (verdict, reason)``: the judge prompt
  (prompts/judge/financebench.txt) through any model of rag.models; used only when one is passed.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal, Mapping

from pydantic import BaseModel

VERDICTS = ("correct", "incorrect", "refusal")


def hand_verdicts(path: Path | str, answers: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The last ``verdict`` per question in a labels.jsonl (lines without one are ignored). With ``answers``
    ({question: the run's answer}) the last verdict on *that* answer: a rerun that answers a question
    differently has that question unjudged again, never scored by another answer's verdict, and verdicts on two
    runs' answers to one question both stay usable."""
    path = Path(path)
    last: dict[str, str] = {}
    by_answer: dict[tuple[str, str], str] = {}
    if not path.exists():
        return last
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue  # a torn append (rag.core.labels reads it the same way)
        if isinstance(rec, dict) and rec.get("verdict") in VERDICTS and rec.get("question"):
            last[rec["question"]] = rec["verdict"]
            by_answer[rec["question"], _answer_text(rec.get("value"))] = rec["verdict"]
    if answers is None:
        return last
    return {q: by_answer[q, _answer_text(answers.get(q))] for q in last
            if (q, _answer_text(answers.get(q))) in by_answer}


def submission_answers(submission: Mapping[str, Any]) -> dict[str, Any]:
    """{question: the run's answer value} of a loaded submission (what :func:`hand_verdicts` compares)."""
    return {t: (v or {}).get("value") for t, v in submission.items()}


def _answer_text(value: Any) -> str:
    return " ".join(str(value).split()) if value is not None else ""


def append_verdict(path: Path | str, question: str, answer: Any, verdict_: str, labeller: str = "") -> dict:
    """Append a hand verdict on a text answer to labels.jsonl: a "skipped" label (no gold value) with a
    ``verdict`` field, flushed and fsynced like every label line."""
    import os
    import time

    if verdict_ not in VERDICTS:
        raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}, not {verdict_!r}")
    rec = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "qid": None, "question": question,
           "kind": "text", "value": answer, "pages": [], "status": "skipped", "labeller": labeller,
           "verdict": verdict_}
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(rec, ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())
    return rec


class JudgeVerdict(BaseModel):
    reason: str
    verdict: Literal["correct", "incorrect", "refusal"]


def llm_judge(llm: Any, question: str, gold: str, answer: Any, prompt_path: Path | None = None) -> tuple[str, str]:
    """(verdict, reason) from a model judging ``answer`` against the gold (FinanceBench's labels)."""
    from ..core.config import PROJECT_ROOT

    template = (prompt_path or PROJECT_ROOT / "prompts" / "judge" / "financebench.txt").read_text(encoding="utf-8")
    user = template.format(question=question, gold=gold, answer=answer)
    res = llm.complete([{"role": "user", "content": user}], schema=JudgeVerdict)
    return res.value.verdict, res.value.reason
