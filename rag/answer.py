"""Stage 06: answer each question from its retrieved pages, check references, export the submission.

Contracts:
- ``run_answer(cfg, ds, progress=True, llm=None, counter=None) -> DataFrame`` (one row per question).
  Reads ``05_retrieve/<qid>.json``; writes ``06_answer/debug/<qid>.json`` per question (prompt version,
  context pages, raw output, parsed answer, repair used, tokens, seconds), then ``answers.jsonl`` (rebuilt
  from every debug record) and ``submission.json`` (validated first: an invalid one is never written).
  A question whose key (retrieval file, prompt versions, answer+llm config, code version) is unchanged
  is skipped on a re-run. ``llm``/``counter`` default to ``rag.models.get_llm(cfg)`` /
  ``rag.models.count_tokens``; tests pass fakes.
- ``answer_question(llm, cfg, ds, q, rec, counter)`` -> the debug record of one question.
- The parts, one module each: reading 05 records and packing the context (:mod:`rag.context`),
  asking the model and fusing part answers (:mod:`rag.fuse`, ``answer_pages``), interpreting answers
  and references (:mod:`rag.interpret`), comparative questions (:mod:`rag.comparative`).

Pages: ``page`` is 1-based everywhere here; the context labels pages 1..n in rank order ("=== Page
N ==="), the model cites those labels and they are mapped back to (sha1, page). Only
``rag.submission`` converts to the 0-based ``page_index``.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

import pandas as pd

from . import numbers as nums
from .artifacts import Stage, file_sha256, hash_key, read_json
# comparison_direction, CtxPage, finalize_references: re-exported, tests import them from rag.answer.
from .comparative import answer_comparative, comparison_direction  # noqa: F401
from .config import RunConfig
from .context import (Counter, CtxPage, candidates_by_report, load_retrieval, merged_pages,  # noqa: F401
                      page_row, report_or_none, routed_sha1s)
from .dataset import Dataset, Question
from .fuse import answer_pages, prompts_dir
from .interpret import finalize_references, is_answer
from .prompts import NA, prompt_version
from .submission import build_submission, write_submission

CODE_VERSION = "06-answer-3"


# ---- one question -------------------------------------------------------------------------------
def _clean_calls(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in c.items() if k != "part_pages"} for c in calls]


def answer_question(llm: Any, cfg: RunConfig, ds: Dataset, q: Question, rec: dict[str, Any],
                    counter: Counter) -> dict[str, Any]:
    """The debug record of one question (see module docstring); ``value``/``references`` final."""
    t0 = time.perf_counter()
    sha1s = routed_sha1s(rec)
    pages = merged_pages(candidates_by_report(rec), sha1s)
    out: dict[str, Any] = {"qid": q.qid, "question_text": q.text, "kind": q.kind, "routed": sha1s,
                           "retrieved": [page_row(p) for p in pages], "code_version": CODE_VERSION}
    na = False if q.kind == "boolean" else NA
    if q.kind == "comparative":
        out["prompt_version"] = {k: prompt_version(k, prompts_dir(cfg)) for k in ("number", "comparative")}
        if not sha1s and not rec.get("sub_questions"):
            out.update(value=NA, references=[], na_reason="no report routed")
        else:
            res = answer_comparative(llm, cfg, ds, q, rec, counter)
            subs = [{**s, "calls": _clean_calls(s["calls"])} for s in res["sub_answers"]]
            out.update(value=res["value"], references=res["references"], sub_answers=subs,
                       direction=res["direction"], pick_call=res["pick_call"],
                       na_reason=None if res["value"] != NA else "no company has a value")
    else:
        out["prompt_version"] = {q.kind: prompt_version(q.kind, prompts_dir(cfg))}
        if not sha1s:
            out.update(value=na, references=[], na_reason="no report routed")
        elif not pages:
            out.update(value=na, references=[], na_reason="no pages retrieved")
        else:
            rep = report_or_none(ds, sha1s[0])
            res = answer_pages(llm, cfg, q.kind, q.text, pages, rep.currency if rep else None, counter,
                               rep.company if rep else "")
            refs = finalize_references(cfg, q.kind, res["value"], res["cited"], pages, res["answering_part"])
            out.update(value=res["value"], references=refs, calls=_clean_calls(res["calls"]),
                       interpretation=res["interpretation"])
            if q.kind == "number" and isinstance(res["value"], (int, float)):
                cited = res["cited"] or (res["answering_part"] or [])
                out["sanity"] = nums.scale_sanity(float(res["value"]), {p.page: p.text for p in cited},
                                                  max_power=cfg.answer.sanity_max_power)
            last = res["calls"][-1]["interpretation"] if res["calls"] else {}
            out["na_reason"] = None if is_answer(q.kind, res["value"]) else last.get("na_reason")
    calls = list(out.get("calls", [])) + [c for s in out.get("sub_answers", []) for c in s["calls"]]
    if out.get("pick_call"):
        calls.append(out["pick_call"])
    out["usage"] = {k: sum(int(c.get("usage", {}).get(k, 0) or 0) for c in calls)
                    for k in ("prompt_tokens", "completion_tokens", "requests")}
    out["repaired"] = any(c.get("repaired") for c in calls)
    out["n_calls"] = len(calls)
    out["seconds"] = round(time.perf_counter() - t0, 3)
    return out


# ---- stage ---------------------------------------------------------------------------------------
def _answer_row(d: dict[str, Any]) -> dict[str, Any]:
    return {"qid": d["qid"], "question_text": d["question_text"], "kind": d["kind"], "value": d["value"],
            "references": d["references"], "prompt_version": d["prompt_version"],
            "na_reason": d.get("na_reason"), "seconds": d.get("seconds"), **d.get("usage", {})}


def question_key(cfg: RunConfig, q: Question, rec_path: str) -> str:
    kinds = ("number", "comparative") if q.kind == "comparative" else (q.kind,)
    sections = ("answer", "llm") + (("retrieve", "rerank", "embed", "chunk") if q.kind == "comparative" else ())
    versions = [prompt_version(k, prompts_dir(cfg)) for k in kinds]
    if cfg.answer.table_candidates and "number" in kinds:  # the figure-pick prompt (rag.figures)
        from .figures import pick_version

        versions.append(pick_version(prompts_dir(cfg)))
    return hash_key(q.text, q.kind, file_sha256(rec_path), versions, cfg.section_hash(*sections), CODE_VERSION)


def run_answer(cfg: RunConfig, ds: Dataset, progress: bool = True, llm: Any = None,
               counter: Counter | None = None) -> pd.DataFrame:
    """Answer every question of ``ds`` (parallel within ``cfg.llm.concurrency``); see module docstring."""
    stage = Stage(cfg, "06_answer")
    recs = {q.qid: load_retrieval(cfg, q.qid) for q in ds.questions}
    todo, status = [], {}
    for q in ds.questions:
        key = question_key(cfg, q, recs[q.qid]["_path"])
        if stage.is_current(q.qid, key, f"debug/{q.qid}.json"):
            status[q.qid] = "current"
        else:
            todo.append((q, key))
    if todo and llm is None:
        from .models import get_llm

        llm = get_llm(cfg)
    if counter is None:
        from .models import count_tokens

        counter = lambda text: count_tokens(text, cfg)  # noqa: E731

    def work(q: Question, key: str) -> str:
        with stage.timed(q.qid):
            d = answer_question(llm, cfg, ds, q, recs[q.qid], counter)
        stage.write_json(f"debug/{q.qid}.json", d)
        stage.add_tokens(prompt=d["usage"]["prompt_tokens"], completion=d["usage"]["completion_tokens"])
        stage.mark_done(q.qid, key, value=d["value"], seconds=d["seconds"], n_calls=d["n_calls"])
        return q.qid

    bar = None
    if progress and todo:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc="06_answer")
    with ThreadPoolExecutor(max_workers=cfg.llm.concurrency) as pool:
        futures = [pool.submit(work, q, key) for q, key in todo]
        for f in as_completed(futures):
            status[f.result()] = "answered"
            if bar:
                bar.update(1)
    if bar:
        bar.close()
    debug = [read_json(stage.path(f"debug/{q.qid}.json")) for q in ds.questions]
    rows = [_answer_row(d) for d in debug]
    stage.write_jsonl("answers.jsonl", rows)
    sub = build_submission(rows, cfg.answer.team_email, cfg.answer.submission_name)
    write_submission(stage.path("submission.json"), sub)
    counts = {"questions": len(rows), "answered_now": len(todo),
              "na": sum(1 for r in rows if r["value"] in (NA, None)),
              "repaired": sum(1 for d in debug if d.get("repaired")),
              "scale_suspect": sum(1 for d in debug if (d.get("sanity") or {}).get("status") == "suspect")}
    stage.finish(counts=counts, inputs={q.qid: recs[q.qid]["_path"] for q in ds.questions})
    return pd.DataFrame([{"qid": d["qid"], "kind": d["kind"], "status": status.get(d["qid"]),
                          "value": d["value"], "references": len(d["references"]),
                          "pages": ",".join(str(r["page"]) for r in d["references"]),
                          "na_reason": d.get("na_reason"),
                          "sanity": (d.get("sanity") or {}).get("status"), "calls": d.get("n_calls"),
                          "prompt_tokens": d["usage"]["prompt_tokens"],
                          "completion_tokens": d["usage"]["completion_tokens"],
                          "seconds": d.get("seconds"), "question": d["question_text"]} for d in debug])
