"""Asking the model in stage 06: one structured call per context part, fused into one report's answer.

Contracts:
- ``ask(llm, cfg, kind, question, context) -> call dict`` (kind, prompt_version, raw, parsed, repaired,
  usage, model, error, seconds); a StructuredOutputError becomes ``parsed=None`` with its raw text kept.
- ``answer_pages(llm, cfg, kind, question, pages, report_currency, counter)`` answers one question
  from one report's ranked pages (long context split into parts by :func:`rag.answer.common.context.pack_parts`,
  part answers fused) -> {value, cited, calls, interpretation, answering_part}. It reads the top
  ``answer.max_pages_by_kind[kind]`` (else ``max_pages``) pages, cut to their lines on the question's topic
  when ``answer.focus_tokens[kind]`` is set (:mod:`rag.answer.common.focus`). With
  ``answer.table_candidates`` a number question is first answered by picking among table figures
  (:func:`rag.answer.numbers.answer_from_tables`); pages are read only when no table candidate exists (or,
  with ``answer.figure_na_fallback``, when the model picked none). With ``answer.computed_figures`` a number
  question asking for a ratio, margin, growth or average is first computed in code
  (:func:`rag.answer.computed.answer_computed`); a missing operand falls back to the above, its reason kept
  in ``interpretation["computed"]``. A boolean question asking for the sign of a figure or the direction of
  its change between two years is decided the same way (:mod:`rag.answer.booleans.computed_bool`), else as before.
  With ``answer.boolean_p_true`` each boolean part also gets P(true) from the value token's log-probabilities
  (:mod:`rag.answer.booleans.bool_logprob`; ``answer.boolean_decision`` says whether it or the reasoning decides).
  With ``answer.boolean_claim_check`` a page's true stands only when the reader judges its own note on the page to
  say the asked event took place (:mod:`rag.answer.booleans.claim_check`; ``claim_p`` in the page's call). With
  ``answer.boolean_calibration`` it stands only when its P(true) exceeds the other yes/no templates' mean P(true)
  on the same page by ``boolean_calibration_min`` (:mod:`rag.answer.booleans.calibration`; ``calib_score``).
  For the kinds in ``answer.page_choice`` the pages are first put in the order of the reader's P(the page answers)
  (:mod:`rag.answer.common.page_check`; its call record comes first in ``calls``).
- ``structured_call``, ``prompts_dir``: :mod:`rag.answer.common.calls` (figure_pick asks the model through them too).
"""
from __future__ import annotations

import time
from typing import Any

from ..core.config import RunConfig
from .booleans import calibration_call, claim_call, p_true_call
from .common.calls import prompts_dir, structured_call  # noqa: F401 - re-exported
from .common.context import Counter, CtxPage, pack_parts
from .common.focus import focus_pages
from .common.page_check import choose_pages
from .interpret import is_answer, map_pages, pages_holding, part_value
from .common.prompts import NA, SCHEMAS, build_messages, format_context, prompt_version


def ask(llm: Any, cfg: RunConfig, kind: str, question: str, context: str) -> dict[str, Any]:
    """One structured call (:func:`structured_call`) with its prompt version and seconds."""
    messages = build_messages(kind, context, question, prompts_dir(cfg))
    t0 = time.perf_counter()
    call: dict[str, Any] = {"kind": kind, "prompt_version": prompt_version(kind, prompts_dir(cfg))}
    call.update(structured_call(llm, messages, SCHEMAS[kind]))
    call["seconds"] = round(time.perf_counter() - t0, 3)
    return call


# ---- one report -------------------------------------------------------------------------------------
def answer_pages(llm: Any, cfg: RunConfig, kind: str, question: str, pages: list[CtxPage],
                 report_currency: str | None, counter: Counter, company: str = "") -> dict[str, Any]:
    """Answer from one report's ranked pages; long context split into parts and fused.

    Fusion: parts are answered in page-rank order; number/name take the first non-N/A part, boolean is
    true when any part says true, names is the union over parts. With ``answer.early_stop`` the first
    settling part ends the loop (names always reads every part).
    """
    if kind == "text" and cfg.answer.text_from_evidence:  # evidence lines picked, then written (issue 48)
        from .text import answer_text

        return answer_text(llm, cfg, question, pages, report_currency, counter, company)
    if kind == "text" and cfg.answer.text_registered:  # "which debt securities are registered": the cover's table
        from .text import answer_registered

        registered = answer_registered(cfg, question, pages, company)
        if registered is not None:
            return registered
    tried: list[dict[str, Any]] = []
    if kind == "text":  # a ranking, a change, a list of events, a change's causes: answered in code (issue 48)
        done, tried = _text_in_code(cfg, question, pages, report_currency, company)
        if done is not None:
            return done
    computed: dict[str, Any] | None = None
    solve = _computed_answerer(kind) if cfg.answer.computed_figures else None
    if solve is not None:  # a ratio, margin, growth... (number) or a figure's sign / change (boolean), in code
        res = solve(cfg, question, pages, report_currency, company)
        if res is not None and res["value"] != NA:
            return res
        computed = res["interpretation"]["computed"] if res is not None else None
    res = _answer_pages(llm, cfg, kind, question, pages, report_currency, counter, company)
    for other in tried:  # no table, figure or sentence in code: the free answer, why on record
        res["interpretation"] = {**(res["interpretation"] or {}), **other["interpretation"]}
    if computed is not None:  # the formula was recognised, an operand missing: say why beside the answer
        res["interpretation"] = {**(res["interpretation"] or {}), "computed": computed}
    return res


def _text_in_code(cfg: RunConfig, question: str, pages: list[CtxPage], report_currency: str | None,
                  company: str) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The open-text answerers in code, each behind its switch, tried in order: "which row is largest"
    (``answer.text_ranking``), "how much has X changed between FY A and FY B" (``text_change``), "what are major
    acquisitions ... in FY A, B, C" (``text_events``), "what drove X's change" (``text_drivers``). Returns the first
    answer, else None and the results of those that recognised the question but found no answer (their records)."""
    from . import text

    answerers = ((cfg.answer.text_ranking, lambda: text.answer_ranking(cfg, question, pages, company)),
                 (cfg.answer.text_change, lambda: text.answer_change(cfg, question, pages, report_currency, company)),
                 (cfg.answer.text_events, lambda: text.answer_events(cfg, question, pages)),
                 (cfg.answer.text_drivers, lambda: text.answer_drivers(cfg, question, pages, report_currency, company)))
    tried: list[dict[str, Any]] = []
    for on, answer in answerers:
        res = answer() if on else None
        if res is not None and res["value"] is not None:
            return res, tried
        if res is not None:
            tried.append(res)
    return None, tried


def _computed_answerer(kind: str):
    """The computed-figures answerer of an answer kind (None: the kind has none); imported when used."""
    if kind == "number":
        from .computed import answer_computed

        return answer_computed
    if kind == "boolean":
        from .booleans import answer_computed_bool

        return answer_computed_bool
    return None


def _answer_pages(llm: Any, cfg: RunConfig, kind: str, question: str, pages: list[CtxPage],
                  report_currency: str | None, counter: Counter, company: str = "") -> dict[str, Any]:
    picked: list[dict[str, Any]] = []
    if kind == "number" and cfg.answer.table_candidates:  # pick among table figures (rag.answer.numbers.figures)
        from .numbers import answer_from_tables

        res = answer_from_tables(llm, cfg, question, pages, report_currency, counter, company)
        none = bool(res["interpretation"].get("no_candidate"))
        if none and cfg.answer.figure_fallback == "na":
            return res
        if not none and (is_answer(kind, res["value"]) or not cfg.answer.figure_na_fallback):
            return res
        picked = res["calls"]
    if kind in cfg.answer.page_choice:  # read in the order of the reader's P(the page answers)
        pages, choice = choose_pages(llm, cfg, question, pages, counter)
        picked.append(choice)
    top = pages[: cfg.answer.max_pages_by_kind.get(kind, cfg.answer.max_pages)]
    top = focus_pages(cfg, kind, question, company, top, counter)
    parts = pack_parts(top, cfg.answer.max_context_tokens, counter, cfg.answer.pages_per_call.get(kind, 0))
    calls, value, cited_all, info_used = list(picked), (False if kind == "boolean" else NA), [], {}
    names: list[str] = []
    settled = False
    for part in parts:
        context = format_context([p.text for p in part])
        if kind == "boolean" and cfg.answer.boolean_decision == "logprob" and not cfg.answer.boolean_reasoning:
            call = {"kind": kind, "prompt_version": prompt_version(kind, prompts_dir(cfg)), "parsed": None,
                    "raw": "", "repaired": False, "error": None}  # the decision call alone (no reasoning)
            call.update(p_true_call(llm, cfg, question, context))
            call.update(usage={}, seconds=call["p_seconds"])  # its tokens are p_usage (summed by 06 as for every call)
        else:
            call = ask(llm, cfg, kind, question, context)
            if kind == "boolean" and (cfg.answer.boolean_p_true or cfg.answer.boolean_decision == "logprob"):
                call.update(p_true_call(llm, cfg, question, context))  # P(true) from the value token's log-probs
        labels = (call.get("parsed") or {}).get("relevant_pages", [])
        cited, dropped = map_pages(labels, part)
        v, info = part_value(cfg, kind, call, cited, part, question, report_currency, company)
        if kind == "boolean" and v is True and cfg.answer.boolean_claim_check:  # the reader's note says it?
            call.update(claim_call(llm, cfg, question, call.get("parsed")))
            if call["claim_p"] is not None and call["claim_p"] < cfg.answer.boolean_claim_min_p:
                v, info = False, {**info, "claim_rejected": True}
        if kind == "boolean" and v is True and cfg.answer.boolean_calibration:  # above the page's other events?
            call.update(calibration_call(llm, cfg, question, context, call.get("p_true")))
            if call["calib_score"] is not None and call["calib_score"] < cfg.answer.boolean_calibration_min:
                v, info = False, {**info, "calibration_rejected": True}
        # Cite where the answer is printed: the small model often copies the example's page label.
        holding = pages_holding(kind, v, info, part)
        if holding and not any(p in holding for p in cited):
            cited, info = holding[: max(1, len(cited))], {**info, "citation_fixed": True}
        call.update(pages=[{"sha1": p.sha1, "page": p.page, "rank": p.rank} for p in part],
                    context_tokens=sum(counter(p.text) for p in part), cited_labels=labels,
                    dropped_labels=dropped, value=v, interpretation=info, part_pages=part)
        calls.append(call)
        if kind == "names":
            if isinstance(v, list):
                names += [x for x in v if x not in names]
                cited_all += [p for p in cited if p not in cited_all]
            continue
        if is_answer(kind, v) and not settled:
            value, cited_all, info_used, settled = v, cited, info, True
            if cfg.answer.early_stop:
                break
        elif not settled and not cited_all and kind == "boolean":
            cited_all = cited  # a "false" answer keeps what the model looked at, unfilled
    if kind == "names":
        value = names or NA
    return {"value": value, "cited": cited_all, "calls": calls, "interpretation": info_used,
            "answering_part": next((c["part_pages"] for c in calls if is_answer(kind, c.get("value"))), None)}
