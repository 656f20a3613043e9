"""Stage 06: answer each question from its retrieved pages, check references, export the submission.

Contracts:
- ``run_answer(cfg, ds, progress=True, llm=None, counter=None) -> DataFrame`` (one row per question).
  Reads ``05_retrieve/<qid>.json``; writes ``06_answer/debug/<qid>.json`` per question (prompt version,
  context pages, raw output, parsed answer, repair used, tokens, seconds), then ``answers.jsonl`` (rebuilt
  from every debug record) and ``submission.json`` (validated first: an invalid one is never written).
  A question whose key (retrieval file, prompt versions, answer+llm config, code version) is unchanged
  is skipped on a re-run. ``llm``/``counter`` default to ``rag.models.get_llm(cfg)`` /
  ``rag.models.count_tokens``; tests pass fakes.
- ``answer_pages(llm, cfg, kind, question, pages, report_currency, counter)`` answers one question
  from one report's ranked pages (long context split into parts, fused) -> result dict.
- Retrieval record read from 05 (``load_retrieval``, written by ``rag.retrieve``): ``routed``
  [{sha1, company}], ``candidates`` {sha1: [CandidatePage dict {sha1, page, text, scores{..., final},
  reason}]} best first, ``sub_questions`` {sha1: text} for comparative questions. A comparative record
  without sub-questions is split and retrieved here (``rag.route.split_comparative``,
  ``rag.retrieve.retrieve_pages``).

Pages: ``page`` is 1-based everywhere here; the context labels pages 1..n in rank order ("=== Page
N ==="), the model cites those labels and they are mapped back to (sha1, page). Only
``rag.submission`` converts to the 0-based ``page_index``.
"""
from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from . import numbers as nums
from .artifacts import Stage, file_sha256, hash_key, read_json, stage_dir
from .config import PROJECT_ROOT, RunConfig
from .dataset import Dataset, Question
from .prompts import NA, SCHEMAS, build_messages, format_context, prompt_version
from .submission import build_submission, write_submission

CODE_VERSION = "06-answer-1"
Counter = Callable[[str], int]

# Words that say which end of a comparison wins (a question with words of both sides goes to the prompt).
_MAX_WORDS = ("highest", "largest", "greatest", "most", "biggest", "maximum", "higher", "larger", "more")
_MIN_WORDS = ("lowest", "smallest", "least", "fewest", "minimum", "lower", "smaller", "less", "fewer")


@dataclass
class CtxPage:
    sha1: str
    page: int  # 1-based
    text: str
    rank: int  # 0 = best
    score: float | None = None  # retrieval/rerank "final" score, higher = better


# ---- reading stage 05 -------------------------------------------------------------------------
def _get(obj: Any, name: str, default: Any = None) -> Any:
    return obj.get(name, default) if isinstance(obj, dict) else getattr(obj, name, default)


def to_ctx_pages(items: Any) -> list[CtxPage]:
    """CandidatePage objects or dicts (rank order) -> CtxPage list, stable-sorted by ``final`` desc."""
    out = []
    for i, it in enumerate(items or []):
        scores = _get(it, "scores") or {}
        final = scores.get("final") if isinstance(scores, dict) else _get(scores, "final")
        out.append(CtxPage(str(_get(it, "sha1")), int(_get(it, "page")), str(_get(it, "text") or ""), i,
                           None if final is None else float(final)))
    if all(p.score is not None for p in out):
        out.sort(key=lambda p: -p.score)  # type: ignore[operator]
    for i, p in enumerate(out):
        p.rank = i
    return out


def load_retrieval(cfg: RunConfig, qid: str) -> dict[str, Any]:
    path = stage_dir(cfg, "05_retrieve") / f"{qid}.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: run stage 05_retrieve for question {qid} first")
    rec = read_json(path)
    if not isinstance(rec, dict):
        raise ValueError(f"{path}: expected a JSON object with the question's candidate pages")
    rec["_path"] = str(path)
    return rec


def routed_sha1s(rec: dict[str, Any]) -> list[str]:
    """Routed reports of a 05 record (``routed``: [{sha1, company}] or [sha1]), in question order."""
    return [x if isinstance(x, str) else str(_get(x, "sha1")) for x in rec.get("routed") or []]


def candidates_by_report(rec: dict[str, Any]) -> dict[str, list[CtxPage]]:
    """``candidates`` {sha1: [CandidatePage dict]} of a 05 record -> ranked CtxPages per report."""
    cands = rec.get("candidates") or {}
    if not isinstance(cands, dict):
        raise ValueError(f"{rec.get('_path', '05_retrieve record')}: 'candidates' must map sha1 -> pages")
    return {sha1: to_ctx_pages(pages) for sha1, pages in cands.items()}


def merged_pages(per_report: dict[str, list[CtxPage]], sha1s: list[str]) -> list[CtxPage]:
    """One ranked list over the routed reports (several when one company has several reports):
    stable sort by ``final`` (each report's scores are normalized to its own best page = 1)."""
    pages = [p for s in sha1s for p in per_report.get(s, [])]
    pages.sort(key=lambda p: (-(p.score if p.score is not None else float("-inf")), p.rank))
    return [CtxPage(p.sha1, p.page, p.text, i, p.score) for i, p in enumerate(pages)]


# ---- context ---------------------------------------------------------------------------------
def _truncate(text: str, budget: int, counter: Counter) -> str:
    """Cut ``text`` to about ``budget`` tokens (proportional cuts, a few rounds)."""
    for _ in range(4):
        n = counter(text)
        if n <= budget:
            return text
        text = text[: max(1, int(len(text) * budget / n) - 1)]
    return text


def pack_parts(pages: list[CtxPage], budget: int, counter: Counter) -> list[list[CtxPage]]:
    """Greedy packing in rank order into parts of <= ``budget`` context tokens; a page larger than
    the budget alone is truncated into its own part."""
    parts: list[list[CtxPage]] = []
    cur: list[CtxPage] = []
    used = 0
    for p in pages:
        n = counter(f"=== Page 0 ===\n{p.text}")
        if n > budget:
            if cur:
                parts.append(cur)
                cur, used = [], 0
            parts.append([CtxPage(p.sha1, p.page, _truncate(p.text, budget, counter), p.rank, p.score)])
            continue
        if cur and used + n > budget:
            parts.append(cur)
            cur, used = [], 0
        cur.append(p)
        used += n
    if cur:
        parts.append(cur)
    return parts


# ---- one model call ---------------------------------------------------------------------------
def ask(llm: Any, cfg: RunConfig, kind: str, question: str, context: str) -> dict[str, Any]:
    """One structured call; a StructuredOutputError becomes ``parsed=None`` with its raw text kept."""
    from .models.base import StructuredOutputError

    messages = build_messages(kind, context, question, _prompts_dir(cfg))
    t0 = time.perf_counter()
    call: dict[str, Any] = {"kind": kind, "prompt_version": prompt_version(kind, _prompts_dir(cfg))}
    try:
        res = llm.complete(messages, schema=SCHEMAS[kind])
        call.update(raw=res.raw, parsed=res.value.model_dump(), repaired=bool(res.repaired),
                    usage=res.usage.as_dict(), model=res.model, error=None)
    except StructuredOutputError as e:
        call.update(raw=e.raw, parsed=None, repaired=True, usage={}, model=getattr(llm, "model", ""),
                    error=f"structured output: {e}")
    call["seconds"] = round(time.perf_counter() - t0, 3)
    return call


def _prompts_dir(cfg: RunConfig) -> Path:
    path = Path(cfg.answer.prompts_dir)
    return path if path.is_absolute() else PROJECT_ROOT / path


# ---- interpreting answers ---------------------------------------------------------------------
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
                     question: str, report_currency: str | None) -> dict[str, Any]:
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


def _is_answer(kind: str, value: Any) -> bool:
    """Does this part's value settle the question (stop answering further parts)?"""
    if kind == "boolean":
        return value is True
    return value not in (NA, None, "", [])


def _part_value(cfg: RunConfig, kind: str, call: dict[str, Any], cited: list[CtxPage], part: list[CtxPage],
                question: str, report_currency: str | None) -> tuple[Any, dict[str, Any]]:
    parsed = call.get("parsed")
    if parsed is None:
        return (False if kind == "boolean" else NA), {"na_reason": call.get("error")}
    if kind == "number":
        info = interpret_number(cfg, parsed, cited, part, question, report_currency)
        return info["value"], info
    v = parsed.get("final_answer")
    if kind == "names":
        if isinstance(v, list):
            v = list(dict.fromkeys(x.strip() for x in v if x and x.strip() and x.strip().upper() != NA))
        return (v or NA), {}
    if kind in ("name", "comparative"):
        v = (v or "").strip()
        return (NA if not v or v.upper() == NA else v), {}
    return bool(v), {}


def _pages_holding(kind: str, value: Any, info: dict[str, Any], part: list[CtxPage]) -> list[CtxPage]:
    """Pages of the part that print the answer (number: its figure; name(s): the text, case-folded)."""
    if kind == "number":
        return [p for p in part if p.page in info.get("value_pages", [])]
    if kind in ("name", "names") and _is_answer(kind, value):
        wanted = [x.casefold() for x in (value if isinstance(value, list) else [value])]
        return [p for p in part if any(w in p.text.casefold() for w in wanted)]
    return []


def answer_pages(llm: Any, cfg: RunConfig, kind: str, question: str, pages: list[CtxPage],
                 report_currency: str | None, counter: Counter) -> dict[str, Any]:
    """Answer from one report's ranked pages; long context split into parts and fused.

    Fusion: parts are answered in page-rank order; number/name take the first non-N/A part, boolean is
    true when any part says true, names is the union over parts. With ``answer.early_stop`` the first
    settling part ends the loop (names always reads every part).
    """
    top = pages[: cfg.answer.max_pages]
    parts = pack_parts(top, cfg.answer.max_context_tokens, counter)
    calls, value, cited_all, info_used = [], (False if kind == "boolean" else NA), [], {}
    names: list[str] = []
    settled = False
    for part in parts:
        call = ask(llm, cfg, kind, question, format_context([p.text for p in part]))
        labels = (call.get("parsed") or {}).get("relevant_pages", [])
        cited, dropped = map_pages(labels, part)
        v, info = _part_value(cfg, kind, call, cited, part, question, report_currency)
        # Cite where the answer is printed: the small model often copies the example's page label.
        holding = _pages_holding(kind, v, info, part)
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
        if _is_answer(kind, v) and not settled:
            value, cited_all, info_used, settled = v, cited, info, True
            if cfg.answer.early_stop:
                break
        elif not settled and not cited_all and kind == "boolean":
            cited_all = cited  # a "false" answer keeps what the model looked at, unfilled
    if kind == "names":
        value = names or NA
    return {"value": value, "cited": cited_all, "calls": calls, "interpretation": info_used,
            "answering_part": next((c["part_pages"] for c in calls if _is_answer(kind, c["value"])), None)}


# ---- references -------------------------------------------------------------------------------
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


# ---- comparative --------------------------------------------------------------------------------
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
        rep = _report(ds, sha1)
        res = answer_pages(llm, cfg, "number", sub_q, sub_pages, rep.currency if rep else None, counter) \
            if sub_pages else {"value": NA, "cited": [], "calls": [], "interpretation": {}, "answering_part": None}
        refs = finalize_references(cfg, "number", res["value"], res["cited"], sub_pages, res["answering_part"])
        sub_answers.append({"sha1": sha1, "company": rep.company if rep else sha1, "question": sub_q,
                            "value": res["value"], "references": refs, "calls": res["calls"],
                            "interpretation": res["interpretation"],
                            "retrieved": [_page_row(p) for p in sub_pages]})
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


# ---- one question -------------------------------------------------------------------------------
def _report(ds: Dataset, sha1: str):
    try:
        return ds.report(sha1)
    except KeyError:
        return None


def _page_row(p: CtxPage) -> dict[str, Any]:
    return {"sha1": p.sha1, "page": p.page, "rank": p.rank, "score": p.score}


def _clean_calls(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in c.items() if k != "part_pages"} for c in calls]


def answer_question(llm: Any, cfg: RunConfig, ds: Dataset, q: Question, rec: dict[str, Any],
                    counter: Counter) -> dict[str, Any]:
    """The debug record of one question (see module docstring); ``value``/``references`` final."""
    t0 = time.perf_counter()
    sha1s = routed_sha1s(rec)
    pages = merged_pages(candidates_by_report(rec), sha1s)
    out: dict[str, Any] = {"qid": q.qid, "question_text": q.text, "kind": q.kind, "routed": sha1s,
                           "retrieved": [_page_row(p) for p in pages], "code_version": CODE_VERSION}
    na = False if q.kind == "boolean" else NA
    if q.kind == "comparative":
        out["prompt_version"] = {k: prompt_version(k, _prompts_dir(cfg)) for k in ("number", "comparative")}
        if not sha1s and not rec.get("sub_questions"):
            out.update(value=NA, references=[], na_reason="no report routed")
        else:
            res = answer_comparative(llm, cfg, ds, q, rec, counter)
            subs = [{**s, "calls": _clean_calls(s["calls"])} for s in res["sub_answers"]]
            out.update(value=res["value"], references=res["references"], sub_answers=subs,
                       direction=res["direction"], pick_call=res["pick_call"],
                       na_reason=None if res["value"] != NA else "no company has a value")
    else:
        out["prompt_version"] = {q.kind: prompt_version(q.kind, _prompts_dir(cfg))}
        if not sha1s:
            out.update(value=na, references=[], na_reason="no report routed")
        elif not pages:
            out.update(value=na, references=[], na_reason="no pages retrieved")
        else:
            rep = _report(ds, sha1s[0])
            res = answer_pages(llm, cfg, q.kind, q.text, pages, rep.currency if rep else None, counter)
            refs = finalize_references(cfg, q.kind, res["value"], res["cited"], pages, res["answering_part"])
            out.update(value=res["value"], references=refs, calls=_clean_calls(res["calls"]),
                       interpretation=res["interpretation"])
            if q.kind == "number" and isinstance(res["value"], (int, float)):
                cited = res["cited"] or (res["answering_part"] or [])
                out["sanity"] = nums.scale_sanity(float(res["value"]), {p.page: p.text for p in cited},
                                                  max_power=cfg.answer.sanity_max_power)
            last = res["calls"][-1]["interpretation"] if res["calls"] else {}
            out["na_reason"] = None if _is_answer(q.kind, res["value"]) else last.get("na_reason")
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
    return hash_key(q.text, q.kind, file_sha256(rec_path), [prompt_version(k, _prompts_dir(cfg)) for k in kinds],
                    cfg.section_hash(*sections), CODE_VERSION)


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
