"""Stage 06: answer each question from its retrieved pages, check references, export the submission.

Contracts:
- ``run_answer(cfg, ds, progress=True, llm=None, counter=None) -> DataFrame`` (one row per question).
  Reads 05 records only through ``rag.retrieve.load_retrieval``; writes ``06_answer/debug/<qid>.json`` per question (prompt version,
  context pages, raw output, parsed answer, repair used, tokens, seconds), then ``answers.jsonl`` (rebuilt
  from every debug record) and ``submission.json`` (validated first: an invalid one is never written).
  A question whose key (05's key for it, prompt versions, answer+llm config, code version) is unchanged
  is skipped on a re-run. Owner of ``06_answer/``: ``load_answer``, ``load_answers``, ``submission_path``. ``llm``/``counter`` default to ``rag.models.get_llm(cfg)`` /
  ``rag.models.count_tokens``; tests pass fakes. When a local llama.cpp server answered in this
  invocation, the manifest's ``llm_server`` says what it logged about itself (``logits_patch``:
  "installed" / "refused (version X)", :func:`rag.models.server_notes`).
- ``answer_question(llm, cfg, ds, q, rec, counter)`` -> the debug record of one question.
- The parts, one module each: reading 05 records and packing the context (:mod:`rag.answer.common.context`),
  asking the model and fusing part answers (:mod:`rag.answer.fuse`, ``answer_pages``), interpreting answers
  and references (:mod:`rag.answer.interpret`), comparative questions (:mod:`rag.answer.comparative`).

Pages: ``page`` is 1-based everywhere here; the context labels pages 1..n in rank order ("=== Page
N ==="), the model cites those labels and they are mapped back to (sha1, page). Only
``rag.answer.common.submission`` converts to the 0-based ``page_index``.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pandas as pd

from .common import printed as nums
from .common.report_currency import report_currency
from ..core.artifacts import hash_key, read_json, run_dir_of
from ..core.stage import Stage
# comparison_direction, CtxPage, finalize_references: re-exported, tests import them from rag.answer.
from .comparative import answer_comparative, comparison_direction  # noqa: F401
from ..core.config import RunConfig
from .common.context import Counter, CtxPage, candidates_by_report, merged_pages, page_row, report_or_none  # noqa: F401
from ..core import deps, stages
from ..core.loop import Item, Json, Result, failures, outcome_counts, run_items, upstream_block
from ..core.loop import executor as make_executor
from ..core.usage import COST_DIGITS as USAGE_COST_DIGITS
from ..core.usage import ItemUsage
from ..core.dataset import Dataset, Question
from .fuse import answer_pages, prompts_dir
from .interpret import finalize_references, is_answer
from .common.prompts import NA, prompt_version
from ..core.records import AnswerRecord, RetrievalRecord
from .common.submission import build_submission, write_submission
from ..retrieve import routing_na_reason

CODE_VERSION = "06-answer-23"  # 23: an operand read on the named statement printing it, metric words from the part asking; 22: a computed operand tied with its preferred label takes the preferred; 21: a ranking counts a lexicon topic once and borrows what its rows are called from a table of the same names; 20: computed operands read on the statement the question names, an unstated table scale from the report's other tables, events quoted; 19: text ranking over a class across its subtotals, on the statement named, a change between dated columns; drivers carry "Increases were ..." back; 18: a computed share in a change is rounded before its difference; 17: a change question is its first sentence, not a which, who or why question; 16: a change between two years computed from a formula's operands when its figure is not printed; 15: a yes/no asking whether a formula's figure is consistent within a band, over three years; 14: a caption row above a table's period row is header (its years date the columns); 13: a yes/no naming one year and a direction compares it with the year before; 12: a ranking among listed candidates reads a table with a row for each; 11: a headerless grid continues the dated grid above it on its page for every question, not only those naming a period; 10: a computed figure in another currency than asked is missing; 9: total rows of breakdowns, periods below grids, measures, heading rows (bold and plain), bullet columns, pence cells, counted nouns, qualifier penalty, parent entity notes, header text rows, the whole over its parts; 8: full entity names, named rows, statement bonus, per-share rows; 7: number candidates on all 10 pages, label qualifiers, notes columns, initialisms, prose range/name/change rules; 6: boolean P(true) from log-probabilities; 4: sentence candidates, N/A threshold, whole-word percentage questions; 5: unrouted/ambiguous questions N/A, names checked on pages
STAGE = stages.name_of("answer")  # this package's folder, from the registry (rag.core.stages)
SUBMISSION = "submission.json"


# ---- one question -------------------------------------------------------------------------------
def _clean_calls(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in c.items() if k != "part_pages"} for c in calls]


def _full_name(res: dict[str, Any], pages: list[CtxPage]) -> dict[str, Any]:
    """A name answer as the retrieved pages name it in full ("IAA" -> "IAA, Inc.", rag.answer.names.name_check)."""
    from .names import full_name

    v = res["value"]
    if not isinstance(v, str) or v == NA:
        return res
    full = full_name(v, [p.text for p in pages])
    if full == v:
        return res
    return {**res, "value": full, "interpretation": {**(res.get("interpretation") or {}), "name_expanded": {v: full}}}


def answer_question(llm: Any, cfg: RunConfig, ds: Dataset, q: Question, rec: RetrievalRecord,
                    counter: Counter) -> dict[str, Any]:
    """The debug record of one question (see module docstring); ``value``/``references`` final."""
    t0 = time.perf_counter()
    sha1s = rec.routed_sha1s
    pages = merged_pages(candidates_by_report(rec), sha1s)
    out: dict[str, Any] = {"qid": q.qid, "question_text": q.text, "kind": q.kind, "routed": sha1s,
                           "retrieved": [page_row(p) for p in pages], "code_version": CODE_VERSION}
    na = False if q.kind == "boolean" else NA
    routing_na = routing_na_reason(rec)
    if routing_na:  # no company named, or several reports fit: N/A with the reason, never false or a guess
        out["prompt_version"] = {}
        out.update(value=NA, references=[], na_reason=routing_na)
    elif q.kind == "comparative":
        out["prompt_version"] = {k: prompt_version(k, prompts_dir(cfg)) for k in ("number", "comparative")}
        if not sha1s and not rec.sub_questions:
            out.update(value=NA, references=[], na_reason="no report routed")
        else:
            res = answer_comparative(llm, cfg, ds, q, rec, counter)
            subs = [{**s, "calls": _clean_calls(s["calls"])} for s in res["sub_answers"]]
            out.update(value=res["value"], references=res["references"], sub_answers=subs,
                       direction=res["direction"], pick_call=res["pick_call"],
                       na_reason=None if res["value"] != NA else "no company has a value")
    else:
        out["prompt_version"] = {q.kind: prompt_version(q.kind, prompts_dir(cfg))}
        if q.kind == "text" and cfg.answer.text_from_evidence:  # the pick / write prompts answer it (issue 48)
            from .text import text_version

            out["prompt_version"]["text_evidence"] = text_version(prompts_dir(cfg))
        if not sha1s:
            out.update(value=na, references=[], na_reason="no report routed")
        elif not pages:
            out.update(value=na, references=[], na_reason="no pages retrieved")
        else:
            rep = report_or_none(ds, sha1s[0])
            cur = report_currency(cfg, sha1s[0], rep.currency if rep else None)
            res = answer_pages(llm, cfg, q.kind, q.text, pages, cur, counter, rep.company if rep else "")
            if q.kind == "name" and cfg.answer.full_names:
                res = _full_name(res, pages)
            refs = finalize_references(cfg, q.kind, res["value"], res["cited"], pages, res["answering_part"])
            out.update(value=res["value"], references=refs, calls=_clean_calls(res["calls"]),
                       interpretation=res["interpretation"])
            if q.kind == "number" and isinstance(res["value"], (int, float)):
                cited = res["cited"] or (res["answering_part"] or [])
                out["sanity"] = nums.scale_sanity(float(res["value"]), {p.page: p.text for p in cited},
                                                  max_power=cfg.answer.sanity_max_power)
            last = res["calls"][-1]["interpretation"] if res["calls"] else res.get("interpretation") or {}
            out["na_reason"] = None if is_answer(q.kind, res["value"]) else last.get("na_reason")
    calls = list(out.get("calls", [])) + [c for s in out.get("sub_answers", []) for c in s["calls"]]
    if out.get("pick_call"):
        calls.append(out["pick_call"])
    # a boolean page's decision call (rag.answer.booleans.bool_logprob) reports its tokens as p_usage, its note
    # check (rag.answer.booleans.claim_check) as claim_usage, its calibration (rag.answer.booleans.calibration) as
    # calib_usage
    usages = [c.get(k) or {} for k in ("usage", "p_usage", "claim_usage", "calib_usage") for c in calls]
    out["usage"] = {k: sum(int(u.get(k, 0) or 0) for u in usages) for k in ("prompt_tokens", "completion_tokens", "requests")}
    cost = sum(float(u.get("cost_usd", 0) or 0) for u in usages)
    if cost:  # remote models only: local records stay as they were
        out["usage"]["cost_usd"] = round(cost, USAGE_COST_DIGITS)
    out["repaired"] = any(c.get("repaired") for c in calls)
    out["n_calls"] = len(calls)
    out["seconds"] = round(time.perf_counter() - t0, 3)
    return out


# ---- stage ---------------------------------------------------------------------------------------
def _answer_row(d: dict[str, Any]) -> dict[str, Any]:
    return {"qid": d["qid"], "question_text": d["question_text"], "kind": d["kind"], "value": d["value"],
            "references": d["references"], "prompt_version": d["prompt_version"],
            "na_reason": d.get("na_reason"), "seconds": d.get("seconds"), **d.get("usage", {})}


def question_key(cfg: RunConfig, q: Question, retrieval_key: str) -> str:
    """05's key for the question, prompt versions (and the search lexicon's hash when focused reading uses
    it), this stage's config (rag.core.deps), code version."""
    kinds = ("number", "comparative") if q.kind == "comparative" else (q.kind,)
    versions = [prompt_version(k, prompts_dir(cfg)) for k in kinds]
    if cfg.answer.table_candidates and "number" in kinds:  # the figure-pick prompt (rag.answer.numbers.figures)
        from .numbers import pick_version

        versions.append(pick_version(prompts_dir(cfg)))
        if cfg.answer.metric_choice:  # the choice-by-meaning prompt (rag.answer.numbers.metric_choice)
            from .numbers import choose_version

            versions.append(choose_version(prompts_dir(cfg)))
    if (cfg.answer.require_event_near_name and q.kind in ("name", "names")) or \
            (cfg.answer.require_event_for_true and q.kind == "boolean"):  # its events file
        from .names import events_version

        versions.append(events_version(cfg))
    if cfg.answer.computed_figures and ("number" in kinds or "boolean" in kinds or  # its formula lexicon
                                        ((cfg.answer.text_change or cfg.answer.text_drivers) and q.kind == "text")):  # a change's formula
        from .computed import lexicon_version

        versions.append(lexicon_version(cfg))
    if cfg.answer.boolean_claim_check and q.kind == "boolean":  # the note check's prompt
        from .booleans import claim_version

        versions.append(claim_version(prompts_dir(cfg)))
    if cfg.answer.boolean_calibration and q.kind == "boolean":  # the calibration's control questions
        from .booleans import controls_version

        versions.append(controls_version(prompts_dir(cfg)))
    if any(k in cfg.answer.page_choice for k in kinds):  # the page check's prompt (rag.answer.common.page_check)
        from .common.page_check import page_check_version

        versions.append(page_check_version(prompts_dir(cfg)))
    evidence = cfg.answer.text_from_evidence and q.kind == "text"
    if evidence:  # the pick / write prompts (rag.answer.text.text_evidence) and the formulas its facts reuse
        from .computed import lexicon_version
        from .text import text_version

        versions += [text_version(prompts_dir(cfg)), lexicon_version(cfg)]
    ranking = cfg.answer.text_ranking and q.kind == "text"  # its topic words come with the lexicon's terms
    if any(cfg.answer.focus_tokens.get(k) for k in kinds) or evidence or ranking or \
            (cfg.answer.table_candidates and cfg.answer.prose_candidates and "number" in kinds):  # uses the lexicon
        from ..retrieve.query import lexicon_hash

        versions.append(lexicon_hash(cfg))
    return hash_key(q.text, q.kind, retrieval_key, versions, deps.config_signature(cfg, STAGE), CODE_VERSION)


def na_record(q: Question, reason: str) -> dict[str, Any]:
    """The debug record of a question answered N/A without the model (an upstream failure)."""
    return {"qid": q.qid, "question_text": q.text, "kind": q.kind, "routed": [], "retrieved": [],
            "code_version": CODE_VERSION, "prompt_version": {}, "value": NA,  # a yes/no too: nothing was read
            "references": [], "na_reason": reason, "usage": {}, "repaired": False, "n_calls": 0, "seconds": 0.0}


def run_answer(cfg: RunConfig, ds: Dataset, progress: bool = True, llm: Any = None,
               counter: Counter | None = None) -> pd.DataFrame:
    """Answer every question of ``ds`` (parallel within ``cfg.llm.concurrency``); see module docstring.
    A question whose 05 item failed or was blocked (a report that failed in 01/02) is answered N/A with
    an ``na_reason`` naming the failure; one whose answering fails is N/A in the submission, its error in
    the manifest."""
    from .. import retrieve

    stage = Stage(cfg, STAGE)
    items = []
    for q in ds.questions:
        up = retrieve.item_state(cfg, q.qid)
        why = upstream_block(retrieve.STAGE, up)
        if up.status == "missing":  # 05 never wrote it: the stage cannot run (a clear error naming the file)
            retrieve.load_retrieval(cfg, q.qid)
        key = question_key(cfg, q, up.key) if not why else hash_key(q.text, q.kind, why, CODE_VERSION)
        items.append(Item(q.qid, key, (debug_file(q.qid),), (q, why),
                          inputs=() if why else (str(retrieve.record_path(cfg, q.qid)),)))
    todo = [it for it in items if not it.payload[1] and not stage.is_current(it.id, it.key, *it.outputs)]
    if todo and llm is None:
        from ..models import get_llm

        llm = get_llm(cfg)
    if counter is None:
        from ..models import count_tokens

        counter = lambda text: count_tokens(text, cfg)  # noqa: E731

    def work(it: Item) -> Result:
        q, why = it.payload
        d = na_record(q, why) if why else answer_question(llm, cfg, ds, q, retrieve.load_retrieval(cfg, q.qid), counter)
        return Result(files={debug_file(q.qid): Json(d)}, usage=ItemUsage.from_model(d["usage"]),
                      info={"value": d["value"], "seconds": d["seconds"], "n_calls": d["n_calls"]})

    outcomes = run_items(stage, items, work, executor=make_executor("threads", cfg.llm.concurrency, cfg),
                         progress=progress, unit="question")
    debug = [load_answer(cfg, q.qid).model_dump(mode="json") if outcomes[q.qid].ok
             else na_record(q, f"failed in {STAGE}: {outcomes[q.qid].error}") for q in ds.questions]
    rows = [_answer_row(d) for d in debug]
    stage.write_jsonl("answers.jsonl", rows)
    sub = build_submission(rows, cfg.answer.team_email, cfg.answer.submission_name)
    write_submission(stage.path(SUBMISSION), sub)
    n = outcome_counts(outcomes)
    counts = {"questions": len(rows), "answered_now": n["ran"], "failed": n["failed"],
              "upstream_failed": sum(1 for it in items if it.payload[1]),
              "na": sum(1 for r in rows if r["value"] in (NA, None)),
              "repaired": sum(1 for d in debug if d.get("repaired")),
              "scale_suspect": sum(1 for d in debug if (d.get("sanity") or {}).get("status") == "suspect")}
    from ..models import server_notes

    notes = server_notes(llm)  # the llama.cpp server's logits patch: installed / refused (version X)
    stage.finish(counts=counts, inputs={q.qid: retrieve.record_file(q.qid) for q in ds.questions},
                 item_ids=[i.id for i in items],
                 extra={"failures": failures(outcomes), **({"llm_server": notes} if notes else {})})
    status = {"ran": "answered", "current": "current", "failed": "failed", "blocked": "blocked"}
    return pd.DataFrame([{"qid": d["qid"], "kind": d["kind"], "status": status[outcomes[d["qid"]].status],
                          "value": d["value"], "references": len(d["references"]),
                          "pages": ",".join(str(r["page"]) for r in d["references"]),
                          "na_reason": d.get("na_reason"),
                          "sanity": (d.get("sanity") or {}).get("status"), "calls": d.get("n_calls"),
                          "prompt_tokens": d["usage"].get("prompt_tokens", 0),
                          "completion_tokens": d["usage"].get("completion_tokens", 0),
                          "seconds": d.get("seconds"), "question": d["question_text"]} for d in debug])


# ---- what later stages and widgets read (this module owns 06_answer/) --------------------------
def debug_file(qid: str) -> str:
    return f"debug/{qid}.json"


def submission_path(cfg_or_run: RunConfig | Path | str) -> Path:
    """``06_answer/submission.json`` of a run (may not exist yet)."""
    return run_dir_of(cfg_or_run) / STAGE / SUBMISSION


def load_answer(cfg_or_run: RunConfig | Path | str, qid: str) -> AnswerRecord:
    """The 06 debug record of ``qid`` (:class:`rag.core.records.AnswerRecord`); FileNotFoundError naming 06."""
    path = run_dir_of(cfg_or_run) / STAGE / debug_file(qid)
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: run stage 06_answer for question {qid} first")
    return AnswerRecord.model_validate(read_json(path))


def load_answers(cfg_or_run: RunConfig | Path | str) -> dict[str, AnswerRecord]:
    """``{qid: record}`` of every 06 debug record of a run (sorted by qid; {} when 06 has not run)."""
    d = run_dir_of(cfg_or_run) / STAGE / "debug"
    return {p.stem: load_answer(cfg_or_run, p.stem) for p in sorted(d.glob("*.json"))} if d.is_dir() else {}
