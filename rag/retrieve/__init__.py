"""Stage 05: route each question, retrieve candidate pages per report, rerank, write the evidence.

Contract:
- ``retrieve_pages(cfg, question_text, sha1) -> list[CandidatePage]``: the top
  ``cfg.retrieve.top_pages`` pages of one report for one question, best first. Chunks come from the
  report's index (``rag.index.load_report_index``): ``top_k_chunks`` by dense cosine, BM25, or both
  fused by reciprocal rank fusion (``cfg.retrieve.mode``); chunks are lifted to their parent pages
  (1-based ``page``), a page's score made from its chunks by ``cfg.retrieve.page_score``, and
  ``scores["retrieval"]`` = page score / best page score in [0, 1] (1 = best page of this report).
  ``scores["final"]`` equals ``retrieval`` until :func:`rag.retrieve.rerank.rerank` blends in its score.
  The queries come from :func:`rag.retrieve.query.build_search`: the question without answer-format boilerplate
  and the company's name (``query_cleanup``), LLM expansion (``query_expansion``), and the terms of
  matching lexicon topics in the BM25 query and one more dense query (``lexicon_expansion``,
  ``lexicon_dense``); the reranker still sees the full question.
- ``run_retrieve(cfg, ds, progress=True) -> DataFrame`` writes ``05_retrieve/<qid>.json`` per question
  (question, kind, routed reports, sub-questions, candidate pages per report with every score and
  reason, the search run per report: query, dense queries, BM25 query, lexicon topics; usage) and
  the stage manifest; a question whose key is unchanged is skipped. A question routed to a report that
  failed upstream is blocked (no record; 06 answers it N/A with the reason).
- Owner of ``05_retrieve/``: ``load_retrieval(cfg or run dir, qid)``, ``load_retrievals``, ``load_records``
  and ``item_state`` (typed :class:`rag.core.records.RetrievalRecord`) are how every other module reads it.
- The search itself (``retrieve_pages``, ``search_chunks``, ``lift_to_pages``, ``rrf``) is
  :mod:`rag.retrieve.search`; queries :mod:`rag.retrieve.query`; routing :mod:`rag.retrieve.route`;
  reranking :mod:`rag.retrieve.rerank`.
- A question naming no company goes, with ``retrieve.route_by_content``, to the filing whose text fits it best
  (:mod:`rag.retrieve.by_content`; ``routing`` "content", the scores in its search trace), else it is unrouted.
- A question 05 cannot route to one report (``routing`` "unrouted" / "ambiguous") still gets its record;
  ``routing_na_reason(rec)`` is the reason 06 answers it N/A (never false, never a guess) and
  ``unrouted_questions(run)`` lists them for the run's closing summary.
- Score direction everywhere: higher = better.
"""
from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

import pandas as pd
from pydantic import ValidationError

from ..core.artifacts import hash_key, read_json, run_dir_of, stage_dir

from ..core.stage import ItemState, Stage
from ..core.stage import item_state as _item_state
from ..core.config import RunConfig
from ..core import deps, stages
from ..core.loop import Item, Json, Result, failures, outcome_counts, run_items, upstream_block
from ..core.loop import executor as make_executor
from ..core.usage import ItemUsage
from ..core.dataset import Dataset, Question
from ..models.base import Usage
from .query import lexicon_hash
from .counts import counts_hash
from .statements import statements_hash
# CandidatePage, RetrievalRecord: the 05 records (rag.core.records); re-exported, tests import them from here.
from ..core.records import SCORE_KEYS, CandidatePage, RetrievalRecord, RoutedReport  # noqa: F401
from .route import route, route_filings, routing_status, split_comparative
from .by_content import content_candidates, route_by_content
# Chunk search, fusion, page lifting and their caches (re-exported: rag.retrieve.retrieve_pages…).
from .search import clear_caches, lift_to_pages, page_texts, retrieve_pages, rrf, search_chunks  # noqa: F401

CODE_VERSION = "retrieve-2"  # 2: statement pages count no percentages and no line-opening (exhibit) numbers as figures
STAGE = stages.name_of("retrieve")  # this package's folder, from the registry (rag.core.stages)


# ---- the stage --------------------------------------------------------------------------------
def _upstream(cfg: RunConfig, sha1s: Sequence[str]) -> tuple[dict[str, Any], str]:
    """(producer keys of 02 and 04 for these reports, the reason one of them failed or "")."""
    from .. import clean, index

    keys: dict[str, Any] = {clean.STAGE: {}, index.STAGE: {}}
    for s in sha1s:
        for name, st in ((clean.STAGE, clean.item_state(cfg, s)),
                         (index.STAGE, index.item_state(cfg, s, cfg.retrieve.chunk_size))):
            why = upstream_block(name, st)
            if why:
                return keys, f"report {s}: {why}"
            keys[name][s] = st.key or None
    return keys, ""


def _inputs(cfg: RunConfig, sha1s: Sequence[str]) -> tuple[str, ...]:
    """The upstream files one question reads: its reports' clean pages and indexes (for remote workers)."""
    from .. import clean, index

    return tuple(f for s in sha1s for f in (str(run_dir_of(cfg) / clean.STAGE / clean.report_file(s)),
                                              *index.index_files(cfg, s, cfg.retrieve.chunk_size)))


def question_key(cfg: RunConfig, q: Question, routed: Sequence[str], companies: dict[str, str],
                 upstream: dict[str, Any] | None = None, by_content: bool = False) -> str:
    """Currency key: question, routed companies, upstream item keys, this stage's config (rag.core.deps:
    retrieve, rerank, + llm when it reranks with or expands queries by the LLM), lexicon, code. ``by_content``:
    the question names no company and is routed by content (``routed`` = the filings it may go to)."""
    upstream = upstream if upstream is not None else _upstream(cfg, routed)[0]
    return hash_key(q.text, q.kind, {s: companies[s] for s in routed}, upstream,
                    deps.config_signature(cfg, STAGE),
                    # only a question naming no company is routed by content (the rule PER_ITEM of rag.core.deps)
                    *(["route_by_content"] if by_content else []),
                    # the lexicon's content only when it is used: keys of runs without it stay as they were
                    *([lexicon_hash(cfg)] if cfg.retrieve.lexicon_expansion else []),
                    *([statements_hash(cfg)] if cfg.retrieve.statement_pages else []),
                    *([counts_hash(cfg)] if cfg.retrieve.count_pages else []), CODE_VERSION)


def by_content_on(cfg: RunConfig, q: Question) -> bool:
    """Whether a question routed to no report goes to the filing its text fits best
    (``retrieve.route_by_content``; never with the question's filing given)."""
    return cfg.retrieve.route_by_content and not given_filing(cfg, q)


def usable_reports(cfg: RunConfig, ds: Dataset) -> list:
    """The reports whose 02 and 04 items are done (a question routed by content chooses among these: one
    report that failed upstream does not block every question naming no company)."""
    return [r for r in ds.reports if not _upstream(cfg, [r.sha1])[1]]


def given_filing(cfg: RunConfig, q: Question) -> str:
    """The question's own filing when ``retrieve.given_filing`` is on (FinanceBench's per-filing setting),
    else "" (the pipeline routes itself)."""
    return q.filing if cfg.retrieve.given_filing else ""


def retrieve_question(cfg: RunConfig, q: Question, ds: Dataset, llm=None,
                      usable: list | None = None) -> RetrievalRecord:
    """The 05_retrieve record of one question (routing, sub-questions, reranked candidates, usage). ``usable``:
    :func:`usable_reports`, when the caller has read it already (the stage reads it once per run)."""
    from .rerank import rerank

    t0 = time.perf_counter()
    given = given_filing(cfg, q)
    subs = split_comparative(q.text, q.kind, ds.reports, given)
    content = None
    if not subs and by_content_on(cfg, q):  # no company named: the filing whose text answers it best
        content = route_by_content(cfg, q.text, usable if usable is not None else usable_reports(cfg, ds))
        subs = {content.sha1: q.text} if content else {}
    usages: list[Usage] = []
    candidates: dict[str, list[CandidatePage]] = {}
    searches: dict[str, dict[str, Any]] = {}
    for sha1, text in subs.items():
        searches[sha1] = {}
        pages = retrieve_pages(cfg, text, sha1, llm=llm, usage=usages, trace=searches[sha1], kind=q.kind)
        pages, u = rerank(cfg, text, pages, llm=llm)
        usages.append(u)
        candidates[sha1] = pages
    companies = {r.sha1: r.company for r in ds.reports}
    why = {r.sha1: r.reason for r in route_filings(q.text, ds.reports, given)}
    if content:
        why[content.sha1] = content.why
        searches[content.sha1]["content_scores"] = content.scores
    return RetrievalRecord(qid=q.qid, question=q.text, kind=q.kind,
                           routed=[RoutedReport(sha1=s, company=companies[s], filing=ds.report(s).filing,
                                                why=why.get(s, "")) for s in subs],
                           routing="content" if content else routing_status(q.text, q.kind, ds.reports, given),
                           sub_questions=subs if q.kind == "comparative" else {}, candidates=candidates,
                           search=searches, usage=sum(usages, Usage()).as_dict(),
                           seconds=round(time.perf_counter() - t0, 3))


def pool_tokens(rec: RetrievalRecord) -> int:
    """cl100k tokens of the chunks dense search ranked under ``retrieve.dense_pool`` (embedded here when the
    index stores no vectors; a disk-cached vector counts too, as 04 counts every chunk it indexes)."""
    return sum(int(s.get("dense_pool_tokens") or 0) for s in rec.search.values())


def summary_row(rec: RetrievalRecord, skipped: bool = False) -> dict[str, Any]:
    tops = [f"{s[:8]}:p{c[0].page}" for s, c in rec.candidates.items() if c]
    return {"qid": rec.qid, "kind": rec.kind, "companies": ", ".join(r.company for r in rec.routed),
            "n_reports": len(rec.routed), "top_pages": " ".join(tops),
            "lexicon": ", ".join(sorted({t for s in rec.search.values() for t in s.get("lexicon_topics", [])})),
            "routing": rec.routing,
            "top_final": max((c[0].scores["final"] for c in rec.candidates.values() if c), default=None),
            "seconds": rec.seconds, "skipped": skipped}


def run_retrieve(cfg: RunConfig, ds: Dataset, progress: bool = True) -> pd.DataFrame:
    """Stage 05 over every question of ``ds`` (``cfg.llm.concurrency`` at a time); one summary row per question. A question routed to a report
    that failed upstream is blocked (no record; 06 answers it N/A naming the failure)."""
    stage = Stage(cfg, STAGE)
    companies = {r.sha1: r.company for r in ds.reports}
    items = []
    routing = Counter(routing_status(q.text, q.kind, ds.reports, given_filing(cfg, q))
                      for q in ds.questions)  # for the manifest
    usable: list | None = None  # the reports done upstream: read once, when a question is routed by content
    for q in ds.questions:
        routed = route(q.text, ds.reports, given_filing(cfg, q))
        content = not routed and by_content_on(cfg, q)
        if content:  # routed by content in work(): every filing it may pick
            usable = usable if usable is not None else usable_reports(cfg, ds)
            routed = [r.sha1 for r in content_candidates(q.text, usable)]
        upstream, why = _upstream(cfg, routed)
        items.append(Item(q.qid, question_key(cfg, q, routed, companies, upstream, content), (record_file(q.qid),),
                          (q, routed), blocked=why, inputs=_inputs(cfg, routed)))

    def work(it: Item) -> Result:
        q, routed = it.payload
        llm = None
        if deps.llm_uses(cfg, STAGE) and routed:
            from ..models import get_llm

            llm = get_llm(cfg)  # one client per process (thread-safe registry), wherever the item runs
        from ..index import embed_precision  # stage 04 (imported late, as search.py does)

        rec = retrieve_question(cfg, q, ds, llm=llm, usable=usable)
        embedded = pool_tokens(rec) > 0  # dense search embedded (or read cached) chunks here: name the dtype
        return Result(files={record_file(q.qid): Json(rec.model_dump(mode="json"))},
                      info={"reports": [r.sha1 for r in rec.routed], "seconds": rec.seconds,
                            **(embed_precision(cfg) if embedded else {})},
                      usage=ItemUsage.from_model(rec.usage, embedding_tokens=pool_tokens(rec)))

    # Questions in parallel up to llm.concurrency (one shared client, limiter and disk cache); each record
    # depends on its question only, so the files are the same at any concurrency.
    outcomes = run_items(stage, items, work, executor=make_executor("threads", cfg.llm.concurrency, cfg),
                         progress=progress, unit="question")
    rows = []
    for it in items:
        o = outcomes[it.id]
        if o.ok:
            rows.append(summary_row(load_retrieval(cfg, it.id), skipped=o.status == "current"))
        else:
            rows.append({"qid": it.id, "kind": it.payload[0].kind, "error": o.error})
    n = outcome_counts(outcomes)
    by_content = sum(1 for r in rows if r.get("routing") == "content")
    stage.finish(counts={"questions": len(ds.questions), "done": n["ran"], "skipped": n["current"],
                         "failed": n["failed"], "blocked": n["blocked"],
                         "unrouted": routing["unrouted"] - by_content, "ambiguous": routing["ambiguous"],
                         "by_content": by_content},
                 item_ids=[i.id for i in items], extra={"code_version": CODE_VERSION, "failures": failures(outcomes)})
    return pd.DataFrame(rows)


# ---- what later stages read (this module owns 05_retrieve/) ------------------------------------
def record_file(qid: str) -> str:
    return f"{qid}.json"


def record_path(cfg_or_run: RunConfig | Path | str, qid: str) -> Path:
    """``05_retrieve/<qid>.json`` of a run (a later stage's input); FileNotFoundError naming the folder when 05
    never ran (:func:`rag.core.artifacts.stage_dir`)."""
    return stage_dir(cfg_or_run, STAGE) / record_file(qid)


def item_state(cfg_or_run: RunConfig | Path | str, qid: str) -> ItemState:
    """State of question ``qid`` in 05_retrieve (done + key, failed/blocked + reason, or missing)."""
    return _item_state(run_dir_of(cfg_or_run) / STAGE, qid, (record_file(qid),))


def load_retrieval(cfg_or_run: RunConfig | Path | str, qid: str) -> RetrievalRecord:
    """The 05 record of ``qid`` (:class:`rag.core.records.RetrievalRecord`); errors name the file and stage."""
    path = run_dir_of(cfg_or_run) / STAGE / record_file(qid)
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: run stage 05_retrieve for question {qid} first")
    try:
        return RetrievalRecord.model_validate(read_json(path))
    except ValidationError as e:
        raise ValueError(f"{path}: not a valid 05_retrieve record ({e.error_count()} problem(s): "
                         f"{e.errors()[0]['loc']}: {e.errors()[0]['msg']})") from None


def load_retrievals(cfg_or_run: RunConfig | Path | str, qids: Sequence[str] | None = None) -> dict[str, RetrievalRecord]:
    """``{qid: record}`` of the 05 records present (for ``qids``, or every record, sorted by qid)."""
    d = run_dir_of(cfg_or_run) / STAGE
    if qids is None:
        if not d.is_dir():
            raise FileNotFoundError(f"{d} does not exist: run stage 05_retrieve first")
        qids = sorted(p.stem for p in d.glob("*.json") if p.name != "manifest.json")
    return {q: load_retrieval(cfg_or_run, q) for q in qids if (d / record_file(q)).exists()}


def routing_na_reason(rec: RetrievalRecord) -> str | None:
    """Why 06 answers N/A without reading pages: the question named no company of the dataset
    ("unrouted") or could not be pinned to one report ("ambiguous"); None when routed well."""
    names = "; ".join(dict.fromkeys(r.company for r in rec.routed))
    if rec.routing == "unrouted":
        return "routing: unrouted: the question names no company of the dataset"
    if rec.routing == "ambiguous":
        return (f"routing: ambiguous: the question fits several reports ({names}): name one company"
                if rec.kind != "comparative" else
                f"routing: ambiguous: a company name fits several reports ({names})")
    return None


def unrouted_questions(cfg_or_run: RunConfig | Path | str) -> dict[str, str]:
    """``{qid: reason}`` of the run's 05 records that are not routed to exactly one report per company
    (for the run's closing summary)."""
    d = run_dir_of(cfg_or_run) / STAGE
    if not d.is_dir():
        return {}
    out = {}
    for qid, rec in load_retrievals(cfg_or_run).items():
        why = routing_na_reason(rec)
        if why:
            out[qid] = why
    return out


def load_records(cfg: RunConfig, ds: Dataset) -> dict[str, RetrievalRecord]:
    """``{qid: record}`` of the 05 records present for ``ds``'s questions."""
    return load_retrievals(cfg, [q.qid for q in ds.questions])
