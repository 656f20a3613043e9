"""Open (text) answers built from their evidence (issue 48 item 4, ``answer.text_from_evidence``).

Two short calls instead of one free answer over whole pages:
1. pick: the reader gets the numbered candidate lines of the top pages (rag.answer.text.evidence_lines: sentences and
   table rows with their table's title and period columns) and lists the ones that answer the question
   (prompts/text/pick.txt). None -> N/A without a second call. Else the table row closest to the question in
   meaning joins the pick (the small reader passes over the row holding the figure).
2. write: it gets only the picked lines and the figures computed from them in code (rag.answer.text.evidence_math:
   changes, shares, per-share values, the largest / smallest line, and the project's computed figures of
   prompts/figures/formulas.toml), and writes at most three sentences (prompts/text/write.txt).
A sentence of the answer stating a figure printed neither in the picked lines, nor in a computed fact, nor in
the question is dropped (the reader's own arithmetic); none left -> N/A. The answer's pages are the picked
lines' pages. An answer copying a prompt example is N/A (rag.answer.common.example_check reads prompts/text/ too).

Contracts:
- ``text_version(prompts_dir) -> str``: 12-hex hash of both prompt files and :data:`EVIDENCE_CODE` (06's question key
  when on).
- ``answer_text(llm, cfg, question, pages, report_currency, counter, company) -> dict``: the result shape of
  :func:`rag.answer.fuse.answer_pages` (value, cited, calls, interpretation, answering_part);
  ``interpretation["evidence"]`` holds the shown line count, the picked lines (number, page, text), the computed
  facts and the dropped sentences, so a reader can see what the answer rests on.
- ``supported(sentence, sources) -> bool`` (from :mod:`.grounding`): every figure of the sentence is printed in one
  of ``sources``.
"""
from __future__ import annotations

import hashlib
import re
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, field_validator

from ...core.config import RunConfig
from ..common.calls import prompt_sections, prompts_dir, structured_call
from ..common.context import Counter, CtxPage
from .evidence_lines import Line, candidate_lines, format_lines
from .evidence_math import computed_facts, formula_fact
from ..common.prompts import NA
from .grounding import supported  # noqa: F401 - re-exported (the check this module's contract names)
from .text_kind import MAX_SENTENCES, _SENTENCE_END, text_value

PROMPT_FILES = {"pick": ("system", "lines", "question", "answer"), "write": ("system", "evidence", "question", "answer")}
# What the evidence modules do (line building, ranking, the check) without a prompt or config field saying it:
# part of text_version, so 06's question key moves when it changes (as a stage's CODE_VERSION).
EVIDENCE_CODE = 4
MAX_PICKED = 6  # lines kept of the reader's pick (the prompt asks for at most 4)


class EvidencePick(BaseModel):
    """The reader's pick: numbers of the candidate lines that answer ([] when none)."""
    lines: list[int]

    @field_validator("lines", mode="before")
    @classmethod
    def _ints(cls, v: Any) -> list[int]:
        if v is None or isinstance(v, bool):
            return []
        v = v if isinstance(v, list) else [v]
        return [int(m.group(0)) for x in v if (m := re.search(r"\d+", str(x)))]


class EvidenceAnswer(BaseModel):
    final_answer: str

    @field_validator("final_answer", mode="before")
    @classmethod
    def _text(cls, v: Any) -> str:
        return NA if v is None else str(v)


# ---- prompts ------------------------------------------------------------------------------------------------
def _parts(pdir: Path, name: str) -> dict[str, str]:
    return prompt_sections(pdir / "text" / f"{name}.txt", tuple(PROMPT_FILES[name]))


def text_version(pdir: Path | str) -> str:
    """See module docstring."""
    both = [EVIDENCE_CODE] + [sorted(_parts(Path(pdir), n).items()) for n in PROMPT_FILES]
    return hashlib.sha256(repr(both).encode()).hexdigest()[:12]


def _messages(pdir: Path, name: str, body: str, question: str) -> list[dict[str, str]]:
    p = _parts(pdir, name)
    head = "LINES" if name == "pick" else "EVIDENCE"
    ex_body = p["lines" if name == "pick" else "evidence"]
    # The question before the lines (a small reader then reads them for it) and again after them.
    def user(b: str, q: str) -> str:
        return f"QUESTION: {q}\n\n{head}:\n{b}\n\nQUESTION: {q}"

    return [{"role": "system", "content": p["system"]},
            {"role": "user", "content": user(ex_body, p["question"])},
            {"role": "assistant", "content": p["answer"]},
            {"role": "user", "content": user(body, question)}]


def _call(llm: Any, kind: str, messages: list[dict[str, str]], schema: type, counter: Counter) -> dict[str, Any]:
    t0 = time.perf_counter()
    call: dict[str, Any] = {"kind": kind, "context_tokens": counter(messages[-1]["content"])}
    call.update(structured_call(llm, messages, schema))
    call["seconds"] = round(time.perf_counter() - t0, 3)
    return call


def _evidence_text(lines: list[Line]) -> str:
    out, page = [], None
    for ln in lines:
        if ln.page is not page:
            page = ln.page
            out.append(f"Page {ln.page.page}:")
        if ln.kind == "row":
            cols = " | ".join(c or "?" for c in ln.columns)
            title = f"{ln.title} " if ln.title else ""
            out.append(f"{ln.n}. {title}(columns: | {cols} |): {ln.text}")
        else:
            out.append(f"{ln.n}. {ln.text}")
    return "\n".join(out)


# ---- the answer ---------------------------------------------------------------------------------------------
def answer_text(llm: Any, cfg: RunConfig, question: str, pages: list[CtxPage], report_currency: str | None,
                counter: Counter, company: str = "") -> dict[str, Any]:
    """See module docstring."""
    from ..common.example_check import copied

    pdir = prompts_dir(cfg)
    shown = candidate_lines(cfg, question, pages, counter, company)
    info: dict[str, Any] = {"source": "evidence", "evidence": {"shown": len(shown)}}
    ev = info["evidence"]
    calls: list[dict[str, Any]] = []

    def done(value: Any, interp: dict[str, Any], cited: list[CtxPage]) -> dict[str, Any]:
        # 06 reads the last call's value and interpretation (its na_reason) as for every kind
        for c in calls:
            c.setdefault("value", NA)
            c.setdefault("interpretation", {})
        if calls:
            calls[-1].update(value=value, interpretation=interp)
        return {"value": value, "cited": cited, "calls": calls, "interpretation": interp,
                "answering_part": cited or None}

    def na(why: str) -> dict[str, Any]:
        return done(NA, {**info, "na_reason": why}, [])

    if not shown:
        return na("no sentence or table row of the top pages names the question's topic")
    pick = _call(llm, "text_pick", _messages(pdir, "pick", format_lines(shown), question), EvidencePick, counter)
    calls.append(pick)
    numbers = list(dict.fromkeys((pick.get("parsed") or {}).get("lines") or []))
    picked = [shown[n - 1] for n in numbers if 1 <= n <= len(shown)][:MAX_PICKED]
    if not picked:
        return na(pick.get("error") or "the reader picked no line that answers the question")
    # The 1.5B reader often passes over the row that holds the asked figure (AmEx's "Actual tax rates" for a
    # change of the effective tax rate, tuning half): the row closest to the question in meaning joins its pick.
    best_row = max((ln for ln in shown if ln.kind == "row"), key=lambda ln: ln.score, default=None)
    if best_row is not None and best_row not in picked:
        picked = sorted(picked[: MAX_PICKED - 1] + [best_row], key=lambda ln: ln.n)
        ev["added_row"] = best_row.n
    ev["picked"] = [{"n": ln.n, "page": ln.page.page, "sha1": ln.page.sha1, "kind": ln.kind, "text": ln.text,
                     **({"table": ln.title, "columns": ln.columns} if ln.kind == "row" else {})} for ln in picked]
    facts = computed_facts(question, picked)
    top = pages[: cfg.answer.text_evidence_pages]
    fact = formula_fact(cfg, question, top, report_currency, company)
    facts += [fact] if fact else []
    ev["computed"] = facts
    body = _evidence_text(picked) + ("\nCOMPUTED:\n" + "\n".join(f"- {f}" for f in facts) if facts else "")
    write = _call(llm, "text_write", _messages(pdir, "write", body, question), EvidenceAnswer, counter)
    calls.append(write)
    raw = (write.get("parsed") or {}).get("final_answer")
    text = text_value(raw)
    if text == NA:
        return na(write.get("error") or "the writer found no answer in the picked lines")
    sources = [ln.text for ln in picked] + [" ".join(ln.columns) for ln in picked] + facts + [question]
    kept, dropped = [], []
    for s in _SENTENCE_END.split(text):
        (kept if supported(s, sources) else dropped).append(s)
    ev["dropped_sentences"] = dropped
    value = " ".join(kept[:MAX_SENTENCES]) or NA
    if value == NA:
        return na("every sentence states a figure printed in no picked line nor computed")
    why = copied("text", value, "", pdir, [p.text for p in top])
    if why:
        info.update(example_copied=True)
        return na(f"the answer {why}")
    cited: list[CtxPage] = []
    for ln in picked:
        if ln.page not in cited:
            cited.append(ln.page)
    return done(value, info, cited)
