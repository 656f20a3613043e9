"""Numbers matched by meaning (stage 06): when no table row or sentence names the asked metric in the question's
words, the reader chooses among the lines closest to it in meaning, and its probability decides.

Why: the question generator's metric names are not the report's ("Year-end total headcount" against "our 4,100
team members", "Total revenue" against "Turnover"). Word overlap (:mod:`rag.answer.numbers.labels`, the search lexicon)
finds a figure only under the words someone listed; on held-out questions 5 of 7 values came back N/A with "no
candidate names the metric" although the gold page was retrieved. Here every figure of the top pages is a
candidate; the embedder ranks them by meaning and the reader picks one line or none, with a probability.

Contracts:
- ``metric_phrase(question, company) -> str``: the asked quantity alone ("Number of stores at year-end").
- ``relaxed_candidates(cfg, question, pages, report_currency, company) -> [Candidate]``: every table row with a
  figure in the period's column and every figure of a sentence of ``pages`` that passes the unit, percent,
  per-share, count, period and currency rules of :mod:`rag.answer.numbers.figures` / :mod:`rag.answer.numbers.prose`, whatever
  its words say; one per value.
- ``shortlist(cfg, metric, cands, k) -> [(Candidate, cosine)]``: the ``k`` closest in meaning (the embedder's
  cosine between the metric phrase and the row label or the sentence's words), best first.
- ``choose(llm, cfg, question, shown) -> dict``: one call whose answer is ``{"choice": n}`` (0 = none); ``probs``
  is P(0..k) read from the first token of ``n`` (:func:`rag.models.logprobs.field_choice_probs`), None when the
  backend gives no log-probabilities or the call failed (then the parsed choice is taken at probability 1).
- ``decide(probs, min_p) -> (n, p)``: the likeliest line (1..k) and its probability when that is at least
  ``min_p`` (``answer.metric_choice_min_p``, chosen on the tuning half), else (0, P(0)): N/A.
- With ``answer.metric_choice_by = "lines"`` the choice is :func:`rag.answer.numbers.line_check.check_lines` instead
  (each line alone, P(true) per line), decided by ``decide`` the same way.
- ``answer_by_meaning(llm, cfg, question, pages, report_currency, counter, company)``: the result shape of
  :func:`rag.answer.numbers.figure_pick.answer_from_tables`; ``interpretation["meaning"]`` holds the shown lines
  (label, value, page, cosine), ``probs`` and the decision, so a threshold can be replayed without a call.
"""
from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, field_validator

from ...core.config import RunConfig
from ...core.questions import asking_part
from ..common.calls import as_choice, one_shot_messages, prompt_sections, prompts_dir, sections_version
from ..common.context import CtxPage
from .figures import NA, Candidate, build_candidates, dedupe, format_candidates

CHOOSE_FILE = Path("figures") / "choose.txt"
TOP_LOGPROBS = 20  # alternatives per token: every digit 0..9 must be among them to be read
MAX_TOKENS = 12  # '{"choice": 3}' is ~6 tokens
RELAXED_MAX = 400  # candidates kept before the shortlist (one per value): a 10-page context holds fewer
_SECTIONS = ("system", "lines", "question", "answer")


class MetricChoice(BaseModel):
    """The reader's choice: a line's number (1..k), or 0 when no line states the asked quantity."""
    choice: int

    _choice = field_validator("choice", mode="before")(lambda v: as_choice(v))


# ---- what is asked ----------------------------------------------------------------------------------------
_ASKED = (re.compile(r"what was the value of (?P<m>.+?) at the end of the period", re.I),  # "For <company>, ..."
          re.compile(r"\bvalue of (?P<m>.+?) of (?P<c>.+?) at the end of the period", re.I),
          re.compile(r"\bwhat (?:was|is) the (?P<m>.+?) for (?P<c>.+?) (?:according to|\s*\()", re.I))
_UNIT_PAREN = re.compile(r"\s*\(in [A-Z]{3}\)")
_ANY_UNIT_PAREN = re.compile(r"\s*\((?:in|as)\b[^)]*\)", re.I)  # "(in USD millions)", "(as a %)"


def metric_phrase(question: str, company: str = "") -> str:
    """See module docstring; when no template fits, the part asking (:func:`rag.core.questions.asking_part`)
    without the company and a unit in parentheses; the first sentence without the company when it has none."""
    if company:  # "value of Number of drugs on the market of Acme": the company, not the first "of", ends it
        m = re.search(rf"\bvalue of (?P<m>.+) of {re.escape(company)} at the end of the period", question, re.I)
        if m:
            return _UNIT_PAREN.sub("", m.group("m")).strip(" ,")
    for rx in _ASKED:
        m = rx.search(question)
        if m:
            return _UNIT_PAREN.sub("", m.group("m")).strip(" ,")
    phrase = asking_part(question)  # FinanceBench's instructions around its question left out
    if phrase == question:  # no "what is" clause: the first sentence, as it is
        first = re.split(r"(?<=[?.])\s", question.strip(), maxsplit=1)[0]
        return re.sub(r"\s+", " ", first.replace(company, "") if company else first).strip()
    if company:
        phrase = re.sub(rf"\b{re.escape(company)}(?:'s|’s)?", " ", phrase)
    phrase = _ANY_UNIT_PAREN.sub("", phrase)
    phrase = re.sub(r"^the\s+", "", re.sub(r"\s+", " ", phrase).strip(" ,?"), flags=re.I)
    return phrase.removesuffix(" for").strip()


# ---- candidates ---------------------------------------------------------------------------------------------
def relaxed_candidates(cfg: RunConfig, question: str, pages: list[CtxPage], report_currency: str | None,
                       company: str = "") -> list[Candidate]:
    """See module docstring."""
    from .prose import prose_candidates

    loose = cfg.model_copy(update={"answer": cfg.answer.model_copy(update={
        "prose_min_share": 0.0, "prose_max_candidates": RELAXED_MAX, "figure_max_candidates": RELAXED_MAX})})
    cands = build_candidates(loose, question, pages, report_currency, company, any_label=True)
    if cfg.answer.prose_candidates:
        cands += prose_candidates(loose, question, pages, report_currency, company)[0]
    return dedupe(cands)[:RELAXED_MAX]


def _text(c: Candidate) -> str:
    return c.label if c.source == "prose" or not c.title else f"{c.label} ({c.title})"


def shortlist(cfg: RunConfig, metric: str, cands: list[Candidate], k: int) -> list[tuple[Candidate, float]]:
    """See module docstring (ties: the better-retrieved page, then the candidate's own score)."""
    if not cands:
        return []
    from ...index import query_cosines

    sims = query_cosines(cfg, metric, [_text(c) for c in cands])
    order = sorted(range(len(cands)), key=lambda i: (-float(sims[i]), cands[i].rank, -cands[i].score))
    return [(cands[i], round(float(sims[i]), 4)) for i in order[:k]]


# ---- the choice ---------------------------------------------------------------------------------------------
def _parts(pdir: Path) -> dict[str, str]:
    return prompt_sections(pdir / CHOOSE_FILE, _SECTIONS)


def choose_version(pdir: Path) -> str:
    return sections_version(_parts(pdir))


def choose_messages(question: str, shown: list[Candidate], pdir: Path) -> list[dict[str, str]]:
    return one_shot_messages(_parts(pdir), "lines", format_candidates(shown), question, "LINES",
                             footer="\n0. none of these lines states it")


def choose(llm: Any, cfg: RunConfig, question: str, shown: list[Candidate]) -> dict[str, Any]:
    """See module docstring."""
    from ...models.base import ModelError, StructuredOutputError
    from ...models.logprobs import field_choice_probs

    pdir = prompts_dir(cfg)
    messages = choose_messages(question, shown, pdir)
    call: dict[str, Any] = {"kind": "metric_choice", "prompt_version": choose_version(pdir), "messages_chars":
                            sum(len(m["content"]) for m in messages)}
    t0 = time.perf_counter()
    try:
        res = llm.complete(messages, schema=MetricChoice, logprobs=True, top_logprobs=TOP_LOGPROBS,
                           max_tokens=MAX_TOKENS)
        parsed = res.value.model_dump() if isinstance(res.value, BaseModel) else None
        probs = field_choice_probs(res.logprobs, "choice", len(shown))
        call.update(raw=res.raw, parsed=parsed, usage=res.usage.as_dict(), model=res.model,
                    error=None, probs=None if probs is None else [round(p, 6) for p in probs])
        if probs is None:  # no log-probabilities (some backends): the parsed choice, taken as certain
            n = MetricChoice.model_validate(parsed or {"choice": 0}).choice
            call["probs"] = [1.0 if i == n else 0.0 for i in range(len(shown) + 1)] if 0 <= n <= len(shown) else None
    except (ModelError, StructuredOutputError) as e:
        call.update(raw=getattr(e, "raw", ""), parsed=None, usage={}, model="", error=str(e)[:300], probs=None)
    call["seconds"] = round(time.perf_counter() - t0, 3)
    call["messages"] = messages
    return call


def decide(probs: list[float] | None, min_p: float) -> tuple[int, float]:
    """See module docstring."""
    if not probs or len(probs) < 2:
        return 0, 1.0
    best = max(range(1, len(probs)), key=lambda i: probs[i])
    return (best, probs[best]) if probs[best] >= min_p else (0, probs[0])


def answer_by_meaning(llm: Any, cfg: RunConfig, question: str, pages: list[CtxPage], report_currency: str | None,
                      counter: Any, company: str = "") -> dict[str, Any]:
    """See module docstring."""
    a = cfg.answer
    top = pages[: a.figure_pages or a.max_pages]
    metric = metric_phrase(question, company)
    short = shortlist(cfg, metric, relaxed_candidates(cfg, question, top, report_currency, company),
                      a.metric_choice_list)
    info: dict[str, Any] = {"source": "meaning", "metric": metric, "candidates": [c.row() for c, _ in short]}
    if not short:
        info["na_reason"] = "no figure on the top pages passes the unit, period and currency checks"
        return {"value": NA, "cited": [], "calls": [], "interpretation": info, "answering_part": None}
    shown = [c for c, _ in short]
    if a.metric_choice_by == "lines":  # each line put to the reader alone, P(true) per line
        from .line_check import check_lines

        call = check_lines(llm, cfg, question, shown)
    else:
        call = choose(llm, cfg, question, shown)
    n, p = decide(call.get("probs"), a.metric_choice_min_p)
    info["meaning"] = {"shown": [{"label": c.label, "value": c.value, "page": c.page, "sha1": c.sha1,
                                  "cosine": s, "source": c.source} for c, s in short],
                       "probs": call.get("probs"), "choice": n, "p": round(p, 6), "min_p": a.metric_choice_min_p}
    messages = call.pop("messages")
    info["context_tokens"] = counter(messages[-1]["content"])
    if n:
        c = shown[n - 1]
        value: Any = c.value
        cited = [q for q in top if q.sha1 == c.sha1 and q.page == c.page]
        info.update(printed=c.printed, factor=c.factor, unit=c.unit, value_pages=[c.page], picked_source=c.source,
                    scale_source="table" if c.source == "table" else "sentence", picked_by="meaning")
    else:
        value, cited = NA, []
        info["na_reason"] = (f"the reader chose none of the {len(shown)} lines closest in meaning "
                             f"(best P {max(call['probs'][1:]):.2f} < {a.metric_choice_min_p})" if call.get("probs")
                             else f"the choice call failed: {call.get('error')}")
    call.update(pages=[{"sha1": q.sha1, "page": q.page, "rank": q.rank} for q in top], cited_labels=[],
                dropped_labels=[], value=value, interpretation=info, part_pages=cited or top,
                context_tokens=info["context_tokens"])
    return {"value": value, "cited": cited, "calls": [call], "interpretation": info, "answering_part": cited or None}
