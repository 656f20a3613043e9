"""The pick among table candidates (stage 06, number questions; candidates from :mod:`rag.answer.numbers.figures`).

Contracts:
- ``pick_messages(question, cands, prompts_dir)`` / ``parse_pick(parsed, n) -> int`` (0 = N/A): the
  short prompt (``prompts/figures/pick.txt``: system, one worked example, the candidate list) and its
  parsed answer; a malformed pick or a number out of range is N/A.
- ``gather_candidates(cfg, question, pages, report_currency, company)`` -> (candidates, dropped, pages
  searched): table candidates (:mod:`rag.answer.numbers.figures`) and, with ``answer.prose_candidates``, figures
  printed in sentences (:mod:`rag.answer.numbers.prose`) in one list; ``answer.figure_min_score`` drops weak ones.
- ``answer_from_tables(llm, cfg, question, pages, report_currency, counter, company)`` -> the
  ``rag.answer.fuse.answer_pages`` result shape; no candidate: N/A with ``interpretation["no_candidate"]``
  (the caller may read the pages instead). ``answer.figure_pick``: "model" asks, "code" takes the
  best-scoring candidate without a call, "auto" takes it in code when it clearly fits, else asks among
  the best ``figure_pick_list``. The debug record lists every candidate and every dropped one with why.
  The reference is the picked candidate's page.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, field_validator

from ...core.config import RunConfig
from ..common.calls import as_choice, one_shot_messages, prompt_sections, prompts_dir, sections_version, structured_call
from ..common.context import CtxPage
from .figures import NA, Candidate, build_candidates, dedupe, format_candidates  # noqa: F401 - re-exported
from .wholes import whole_first


# ---- the pick ---------------------------------------------------------------------------------------------
class FigurePick(BaseModel):
    """The model's pick: ``choice`` is a candidate's number (1..n) or 0 for N/A."""
    reason: str = ""
    choice: int

    _choice = field_validator("choice", mode="before")(lambda v: as_choice(v))


PICK_FILE = Path("figures") / "pick.txt"


def _pick_parts(prompts_dir: Path) -> dict[str, str]:
    return prompt_sections(prompts_dir / PICK_FILE, ("system", "candidates", "question", "answer"))


def pick_version(prompts_dir: Path) -> str:
    return sections_version(_pick_parts(prompts_dir))


def pick_messages(question: str, cands: list[Candidate], prompts_dir: Path) -> list[dict[str, str]]:
    return one_shot_messages(_pick_parts(prompts_dir), "candidates", format_candidates(cands), question, "CANDIDATES")


def parse_pick(parsed: dict[str, Any] | None, n: int) -> int:
    """The picked candidate's number (1..n), 0 for N/A, an unparsed answer or a number out of range."""
    if not parsed:
        return 0
    try:
        choice = FigurePick.model_validate(parsed).choice
    except Exception:  # noqa: BLE001 - a malformed pick is N/A
        return 0
    return choice if 1 <= choice <= n else 0


def gather_candidates(cfg: RunConfig, question: str, pages: list[CtxPage], report_currency: str | None,
                      company: str = "") -> tuple[list[Candidate], list[dict[str, Any]], list[CtxPage]]:
    """Table candidates of the top pages plus, with ``answer.prose_candidates``, figures from their sentences,
    one per value, best first, at most ``figure_max_candidates``; candidates below ``figure_min_score`` move to
    the dropped list. -> (candidates, dropped (with why), pages searched)."""
    a = cfg.answer
    top = pages[: a.figure_pages or a.max_pages]
    cands = build_candidates(cfg, question, top, report_currency, company, context_pages=pages)
    dropped: list[dict[str, Any]] = []
    searched = list(top)
    if a.prose_candidates:
        from .prose import prose_candidates

        ptop = pages[: a.prose_pages] if a.prose_pages else top
        searched += [p for p in ptop if p not in searched]
        pc, dropped = prose_candidates(cfg, question, ptop, report_currency, company, context_pages=pages)
        cands = dedupe(cands + pc)[: a.figure_max_candidates]
    cands, _ = whole_first(cands, question, company)
    if a.figure_min_score is not None:
        low = [c for c in cands if c.score < a.figure_min_score]
        dropped += [{"printed": c.printed, "page": c.page, "words": c.label, "source": c.source,
                     "reason": f"score {c.score:.3f} below answer.figure_min_score {a.figure_min_score}"} for c in low]
        cands = [c for c in cands if c.score >= a.figure_min_score]
    return cands, dropped, searched


def _clear_fit(cfg: RunConfig, cands: list[Candidate]) -> bool:
    """"auto": the only candidate, or the best leads the runner-up by ``figure_code_margin``."""
    return len(cands) == 1 or cands[0].score - cands[1].score >= cfg.answer.figure_code_margin


def answer_from_tables(llm: Any, cfg: RunConfig, question: str, pages: list[CtxPage], report_currency: str | None,
                       counter: Any, company: str = "") -> dict[str, Any]:
    """Pick among the candidates of the top pages (:func:`gather_candidates`). No candidate: value N/A,
    no call, ``interpretation["no_candidate"]`` True (the caller may read the pages instead)."""
    cands, dropped, top = gather_candidates(cfg, question, pages, report_currency, company)
    sources = "tables and sentences" if cfg.answer.prose_candidates else "tables"
    if not cands:
        info0 = {"source": sources, "candidates": [], "dropped": dropped, "no_candidate": True,
                 "na_reason": f"no candidate from the {sources} of the top pages names the metric"}
        if cfg.answer.metric_choice:  # no words name it: the lines closest in meaning, the reader chooses
            from .metric_choice import answer_by_meaning

            out = answer_by_meaning(llm, cfg, question, pages, report_currency, counter, company)
            out["interpretation"] = {**info0, **out["interpretation"], "dropped": dropped,
                                     "words_na_reason": info0["na_reason"]}
            return out
        return {"value": NA, "cited": [], "calls": [], "interpretation": info0, "answering_part": None}
    mode = cfg.answer.figure_pick
    by_code = mode == "code" or (mode == "auto" and _clear_fit(cfg, cands))
    shown = cands if mode == "model" else cands[: cfg.answer.figure_pick_list]
    pdir = prompts_dir(cfg)
    messages = pick_messages(question, shown, pdir)
    call: dict[str, Any] = {"kind": "figure_pick", "prompt_version": pick_version(pdir)}
    t0 = time.perf_counter()
    if by_code:  # the best-scoring candidate, no model call
        call.update(raw="", parsed={"reason": "code pick", "choice": 1}, repaired=False, usage={}, model="code",
                    error=None)
    else:
        call.update(structured_call(llm, messages, FigurePick))
    call["seconds"] = round(time.perf_counter() - t0, 3)
    choice = parse_pick(call.get("parsed"), len(shown))
    info: dict[str, Any] = {"source": sources, "candidates": [c.row() for c in cands], "dropped": dropped,
                            "choice": choice, "picked_by": "code" if by_code else "model",
                            "context_tokens": counter(messages[-1]["content"])}
    if choice:
        c = shown[choice - 1]
        value: Any = c.value
        cited = [p for p in top if p.sha1 == c.sha1 and p.page == c.page]
        info.update(printed=c.printed, factor=c.factor, unit=c.unit, value_pages=[c.page],
                    scale_source="table" if c.source == "table" else "sentence", picked_source=c.source)
    else:
        value, cited = NA, []
        info["na_reason"] = f"the model picked none of {len(shown)} candidates"
    call.update(pages=[{"sha1": p.sha1, "page": p.page, "rank": p.rank} for p in top], cited_labels=[],
                dropped_labels=[], value=value, interpretation=info, part_pages=cited or top,
                context_tokens=info["context_tokens"])
    return {"value": value, "cited": cited, "calls": [call], "interpretation": info,
            "answering_part": cited or None}
