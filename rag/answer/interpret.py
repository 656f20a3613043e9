"""Interpreting the model's structured answers of stage 06 (pure functions, no model call).

Contracts:
- ``map_pages(labels, part)``: the context labels the model cited (1..n) -> pages, and the dropped labels.
- ``interpret_number(cfg, parsed, cited, part, question, report_currency)``: the model's printed figure
  -> final value, the scale applied in code (rules in its docstring), currency checked against the
  question's; N/A with ``na_reason`` when the figure is missing, not in the context, printed on no line
  naming the metric (``rag.answer.numbers.figure_check``, ``company`` words excluded) or in another currency.
- ``part_value(cfg, kind, call, ...)`` -> (value, info) of one part's call per question kind (a text answer keeps,
  with ``answer.text_figures_on_pages``, the sentences whose figures the part's pages print:
  :mod:`rag.answer.text.grounding`; the others in ``info["dropped_sentences"]``);
  ``is_answer(kind, value)`` says whether it settles the question; ``pages_holding`` finds the pages
  that print it.
- ``finalize_references(cfg, kind, value, cited, retrieved, part)``: the answer's page references
  (retrieved pages only, de-duplicated, filled or empty by the rules in its docstring).
"""
from __future__ import annotations

from typing import Any

from .numbers import figure_check as metric
from .common import printed as nums
from ..core.config import RunConfig
from .booleans import decide, p_decides
from .common.context import CtxPage
from .common.prompts import NA


def map_pages(labels: list[int], part: list[CtxPage]) -> tuple[list[CtxPage], list[int]]:
    """Context labels (1..n) -> pages; labels outside the part are returned as dropped."""
    kept, dropped = [], []
    for n in labels:
        if 1 <= n <= len(part) and part[n - 1] not in kept:
            kept.append(part[n - 1])
        else:
            dropped.append(n)
    return kept, dropped


def interpret_number(cfg: RunConfig, parsed: dict[str, Any], cited: list[CtxPage], part: list[CtxPage],
                     question: str, report_currency: str | None, company: str = "") -> dict[str, Any]:
    """Model's printed figure + scale -> final value (scale applied in code), with the evidence.

    Scale, in order: percent sign (kept as a percentage) > scale word in the figure ("1.2 billion") >
    per-share / percentage questions (never scaled) > the unit line of the table holding the printed
    value on a cited page (its "except ..." clause honoured) > the model's ``scale``.
    Currency: when the question names one, the figure's currency (table unit line > symbol in the
    figure > report currency > model's field) must match or the answer is N/A.
    """
    printed = str(parsed.get("value_as_printed", NA))
    p = nums.parse_printed(printed)
    info: dict[str, Any] = {"printed": printed, "model_scale": parsed.get("scale"),
                            "model_currency": parsed.get("currency")}
    if p is None:
        return {**info, "value": NA, "na_reason": "model found no figure"}
    # Search cited pages first, then the rest of the part (the model may cite the wrong label).
    search = cited + [pg for pg in part if pg not in cited]
    holding = [pg for pg in search if nums.contains_value(pg.text, printed)]
    info["found_in_context"] = bool(holding)
    info["value_pages"] = [pg.page for pg in holding]  # pages printing the figure, cited ones first
    if cfg.answer.require_printed_in_context and not info["found_in_context"]:
        return {**info, "value": NA, "na_reason": "printed figure not in the context (made up or computed)"}
    if cfg.answer.require_metric_on_line and holding:
        terms = metric.metric_terms(question, company)
        named = [pg for pg in holding if metric.names_metric(pg.text, printed, terms, cfg.answer.metric_title_lines,
                                                     cfg.answer.metric_min_share, tuple(cfg.answer.metric_window_words))]
        info["metric_terms"] = sorted(terms)
        if not named:
            return {**info, "value": NA, "na_reason": "no line printing the figure names the metric"}
        holding = named + [pg for pg in holding if pg not in named]
        info["value_pages"] = [pg.page for pg in holding]
    table = nums.Scale()
    for page in search:
        table = nums.table_unit_for_value(page.text, printed, cfg.answer.unit_lookback_lines)
        if table.factor is not None or table.currency is not None:
            info["unit_page"] = page.page
            break
    q = question.lower()
    per_share, pct = nums.asks_per_share(question), nums.asks_percent(question)
    counting = "number of" in q
    if p.percent:
        factor, source = 1, "percent"
    elif p.word_scale:
        factor, source = p.word_scale, "printed word"
    elif per_share or pct:
        factor, source = 1, "per share/percentage"
    elif table.factor is not None:
        exempt = (per_share and "per share" in table.exceptions) or (counting and "count" in table.exceptions)
        factor, source = (1, f"{table.where} unit exception") if exempt else (table.factor, f"{table.where} unit")
    else:
        factor, source = nums.normalize_scale(parsed.get("scale")) or 1, "model"
    info.update(unit_text=table.text, factor=factor, scale_source=source)
    asked = nums.question_currency(question)
    if asked:
        model_cur = str(parsed.get("currency") or "").upper()
        model_cur = model_cur if model_cur in nums.ISO_CODES else None
        cur = nums.resolve_dollar(table.currency or p.currency, report_currency) or report_currency or model_cur
        info.update(asked_currency=asked, figure_currency=cur)
        if cur and cur.upper() != asked:
            return {**info, "value": NA, "na_reason": f"currency mismatch: asked {asked}, figure in {cur}"}
    value = p.value * factor
    return {**info, "value": int(value) if float(value).is_integer() and abs(value) < 1e15 else value}


def is_answer(kind: str, value: Any) -> bool:
    """Does this part's value settle the question (stop answering further parts)?"""
    if kind == "boolean":
        return value is True
    return value not in (NA, None, "", [])


def part_value(cfg: RunConfig, kind: str, call: dict[str, Any], cited: list[CtxPage], part: list[CtxPage],
               question: str, report_currency: str | None, company: str = "") -> tuple[Any, dict[str, Any]]:
    """One part's value by kind; an answer copied from a prompt's example (rag.answer.common.example_check) is N/A."""
    from .common.calls import prompts_dir
    from .common.example_check import copied
    from .common.prompts import reasoning_text

    value, info = _part_value(cfg, kind, call, cited, part, question, report_currency, company)
    why = copied(kind, value, reasoning_text(call.get("parsed")) if kind == "boolean" else "", prompts_dir(cfg),
                 [p.text for p in part])
    if why:
        return NA, {**info, "example_copied": True, "na_reason": f"the answer {why}"}
    return value, info


def _part_value(cfg: RunConfig, kind: str, call: dict[str, Any], cited: list[CtxPage], part: list[CtxPage],
                question: str, report_currency: str | None, company: str = "") -> tuple[Any, dict[str, Any]]:
    parsed = call.get("parsed")
    if parsed is None and not (kind == "boolean" and p_decides(cfg, call.get("p_true"))):
        return (False if kind == "boolean" else NA), {"na_reason": call.get("error")}
    parsed = parsed or {}
    if kind == "number":
        info = interpret_number(cfg, parsed, cited, part, question, report_currency, company)
        return info["value"], info
    v = parsed.get("final_answer")
    if kind == "text":
        from .text import grounded, text_value

        value = text_value(v)
        if value == NA or not cfg.answer.text_figures_on_pages:
            return value, {}
        kept, dropped = grounded(value, [p.text for p in part] + [question])
        if not dropped:
            return value, {}
        info = {"dropped_sentences": dropped}
        if not kept:
            return NA, {**info, "na_reason": "every sentence states a figure no page read prints"}
        return " ".join(kept), info
    if kind == "names":
        if isinstance(v, list):
            v = list(dict.fromkeys(x.strip() for x in v if x and x.strip() and x.strip().upper() != NA))
        return _printed_name(cfg, kind, *_evented(cfg, v or NA, part, question, company), cited, part)
    if kind in ("name", "comparative"):
        v = (v or "").strip()
        v = NA if not v or v.upper() == NA else v
        if kind == "name":
            return _printed_name(cfg, kind, *_evented(cfg, v, part, question, company), cited, part)
        return v, {}
    p = call.get("p_true")
    value, how = decide(cfg, p, bool(v))
    value, info = _evented_true(cfg, value, cited or part, question, company)
    return value, (info if p is None else {**info, "p_true": p, "cot_answer": bool(v), "decided_by": how})


def _evented_true(cfg: RunConfig, value: bool, pages: list[CtxPage], question: str,
                  company: str) -> tuple[bool, dict]:
    """With ``answer.require_event_for_true``: a boolean true whose ``pages`` print no word of the asked
    event (rag.answer.names.pages_state_event) becomes false, saying why."""
    if not (cfg.answer.require_event_for_true and value):
        return value, {}
    from .names import pages_state_event

    if pages_state_event(cfg, question, [p.text for p in pages], company):
        return True, {}
    return False, {"event_missing": True, "na_reason": "no cited page prints a word of the asked event"}


def _evented(cfg: RunConfig, value: Any, part: list[CtxPage], question: str, company: str) -> tuple[Any, dict]:
    """With ``answer.require_event_near_name``: the names printed next to words of the asked event
    (rag.answer.names.names_near_event); none left -> N/A with the dropped names in the interpretation."""
    if not cfg.answer.require_event_near_name or value == NA or not isinstance(value, (str, list)):
        return value, {}
    from .names import names_near_event

    names = value if isinstance(value, list) else [value]
    kept, dropped = names_near_event(cfg, question, names, [p.text for p in part], company)
    if not dropped:
        return value, {}
    info: dict[str, Any] = {"event_dropped": dropped}
    if not kept:
        return NA, {**info, "na_reason": "no context page states the asked event next to the name"}
    return (kept if isinstance(value, list) else kept[0]), info


def _printed_name(cfg: RunConfig, kind: str, value: Any, info: dict[str, Any], cited: list[CtxPage],
                  part: list[CtxPage]) -> tuple[Any, dict[str, Any]]:
    """Names checked like numbers (rag.answer.names.name_check): an entry printed on no page of the part (cited
    pages first) or copied from a prompt's example answer is dropped; none left -> N/A."""
    from .common.calls import prompts_dir
    from .names import check_names, example_answers

    pages = cited + [p for p in part if p not in cited]
    value, checked = check_names(kind, value, [p.text for p in pages], example_answers(prompts_dir(cfg)))
    return value, {**info, **checked}


def pages_holding(kind: str, value: Any, info: dict[str, Any], part: list[CtxPage]) -> list[CtxPage]:
    """Pages of the part that print the answer (number: its figure; name(s): the text, case-folded)."""
    if kind == "number":
        return [p for p in part if p.page in info.get("value_pages", [])]
    if kind in ("name", "names") and is_answer(kind, value):
        wanted = [x.casefold() for x in (value if isinstance(value, list) else [value])]
        return [p for p in part if any(w in p.text.casefold() for w in wanted)]
    return []


# ---- references -------------------------------------------------------------------------------------
def finalize_references(cfg: RunConfig, kind: str, value: Any, cited: list[CtxPage],
                        retrieved: list[CtxPage], part: list[CtxPage] | None) -> list[dict[str, Any]]:
    """Cited pages that were retrieved (others dropped), de-duplicated, at most ``max_references``.

    An N/A answer has no references, nor a boolean false unless ``answer.refs_for_false`` (then its
    valid citations are kept, never filled). Any other answer with no valid citation is filled with the
    top ``fill_references`` pages of the part that answered (else of retrieval).
    """
    if value in (NA, None) or value == [] or (value is False and not cfg.answer.refs_for_false):
        return []
    known = {(p.sha1, p.page) for p in retrieved}
    refs = [p for p in dict.fromkeys((p.sha1, p.page) for p in cited) if p in known]
    if not refs and value is not False and cfg.answer.fill_references > 0:
        pool = part or retrieved
        refs = [(p.sha1, p.page) for p in sorted(pool, key=lambda p: p.rank)[: cfg.answer.fill_references]]
    return [{"sha1": s, "page": pg} for s, pg in refs[: cfg.answer.max_references]]
