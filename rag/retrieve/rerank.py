"""Rerank one report's candidate pages: none, an LLM judge, or cross-encoder(s).

Contract: ``rerank(cfg, question_text, pages, llm=None) -> (pages, Usage)``, pages best first, at most
``cfg.rerank.top_n``. Only the first ``cfg.rerank.candidates`` pages (retrieval order) are scored; each
scored page gets a reranker score in [0, 1] (``scores["llm"]`` for the LLM judge,
``scores["cross_encoder"]`` for cross-encoders) and

    final = retrieval_weight * retrieval + llm_weight * reranker score

(an unscored page counts its reranker score as 0, so it stays below the scored ones it already trailed).
mode "none": ``final = retrieval``. Higher = better everywhere.

LLM judge: pages go in batches of ``cfg.rerank.batch_size`` through ``llm.complete_many``, each page's
Markdown cut to its ``cfg.rerank.page_chars``-character excerpt richest in question words; the answer is a :class:`RerankAnswer`. A page the
model leaves out, or a batch whose answer does not parse, falls back to its retrieval score as the
reranker score, and the reason says so.
"""
from __future__ import annotations

import re
from typing import Sequence

import numpy as np
from pydantic import BaseModel, Field

from ..core.config import RunConfig
from ..models.base import ModelUnavailable, StructuredOutputError, Usage

SYSTEM = ("You rate annual-report pages for a question. For every page give a 'reason' of at most {words} "
          "words, then 'relevance': 1.0 = the page states the figure or fact asked for; 0.7 = it is about that "
          "topic (e.g. the right table or section); 0.3 = loosely related; 0.0 = unrelated.")
# Words that carry no topic (ignored when choosing which part of a long page the reranker sees).
_STOP = frozenset("""a an and any are as at by did do does for from had has have how if in is it its of on or
the their this to was were what when which who with within report annual according period last end value
return data available mention there no not company companies""".split())


def page_excerpt(text: str, question_text: str, chars: int) -> str:
    """At most ``chars`` characters of ``text``: the run of whole lines with the most distinct question
    words (the part a lean prompt should show), ``...`` marking cuts. Short pages come back whole."""
    if len(text) <= chars:
        return text.strip()
    words = {w for w in re.findall(r"[a-z0-9]+", question_text.lower()) if len(w) > 2 and w not in _STOP}
    lines = text.splitlines()
    line_words = [set(re.findall(r"[a-z0-9]+", ln.lower())) & words for ln in lines]
    best, best_span = (-1, 0), (0, 0)
    for i in range(len(lines)):
        size, seen, hits, j = 0, set(), 0, i
        while j < len(lines) and size + len(lines[j]) + 1 <= chars:
            size += len(lines[j]) + 1
            seen |= line_words[j]
            hits += len(line_words[j])
            j += 1
        if (len(seen), hits) > best:
            best, best_span = (len(seen), hits), (i, j)
    i, j = best_span
    if j == i:  # one line longer than the budget
        return lines[i][:chars].strip() + " ..."
    return ("... " if i > 0 else "") + "\n".join(lines[i:j]).strip() + (" ..." if j < len(lines) else "")


class PageVerdict(BaseModel):
    page: int  # the page's number inside the batch prompt (1..batch_size), not the report page
    reason: str = ""
    relevance: float = 0.0  # asked for in [0, 1]; clipped on read


class RerankAnswer(BaseModel):
    pages: list[PageVerdict] = Field(default_factory=list)


class RerankError(RuntimeError):
    """Reranking cannot run as configured (the message says what to change)."""


def build_messages(cfg: RunConfig, question_text: str, batch: Sequence) -> list[dict[str, str]]:
    """Lean prompt for one batch: pages labelled 1..n, each cut to its best ``page_chars`` excerpt."""
    parts = [f"Question: {question_text}"]
    for i, p in enumerate(batch, 1):
        parts.append(f"## Page {i}\n{page_excerpt(p.text, question_text, cfg.rerank.page_chars)}")
    parts.append(f"Return JSON {{\"pages\": [{{\"page\": 1..{len(batch)}, \"reason\": str, \"relevance\": 0..1}}]}} "
                 f"with one entry per page.")
    return [{"role": "system", "content": SYSTEM.format(words=cfg.rerank.reason_words)},
            {"role": "user", "content": "\n\n".join(parts)}]


def _blend(cfg: RunConfig, pages: list, key: str) -> list:
    rw, lw = cfg.rerank.retrieval_weight, cfg.rerank.llm_weight
    for p in pages:
        p.scores["final"] = rw * p.scores["retrieval"] + lw * (p.scores.get(key) or 0.0)
    # Stable sort: ties keep retrieval order.
    return sorted(pages, key=lambda p: -p.scores["final"])[:cfg.rerank.top_n]


def _llm_scores(cfg: RunConfig, question_text: str, pages: list, llm) -> Usage:
    bs = cfg.rerank.batch_size
    batches = [pages[i:i + bs] for i in range(0, len(pages), bs)]
    requests = [dict(messages=build_messages(cfg, question_text, b), schema=RerankAnswer,
                     max_tokens=cfg.rerank.max_tokens) for b in batches]
    usage = Usage()
    try:
        results = llm.complete_many(requests)
    except StructuredOutputError:
        # One bad batch fails the whole call: retry batch by batch so the good ones keep their scores.
        results = []
        for r in requests:
            try:
                results.append(llm.complete(**r))
            except StructuredOutputError as e:
                results.append(e)
    for batch, res in zip(batches, results):
        if isinstance(res, Exception):
            verdicts: dict[int, PageVerdict] = {}
            note = f"reranker answer unusable ({str(res)[:80]}); retrieval score used"
        else:
            usage = usage + res.usage
            verdicts = {v.page: v for v in res.value.pages}
            note = "page missing from the reranker's answer; retrieval score used"
        for i, p in enumerate(batch, 1):
            v = verdicts.get(i)
            if v is None:
                p.scores["llm"], p.reason = p.scores["retrieval"], note
            else:
                p.scores["llm"], p.reason = float(np.clip(v.relevance, 0.0, 1.0)), v.reason.strip()
    return usage


def _cross_encoder_scores(cfg: RunConfig, question_text: str, pages: list) -> None:
    from ..models import get_cross_encoder

    if not cfg.rerank.cross_encoder_models:
        raise RerankError("rerank.mode='cross_encoder' but rerank.cross_encoder_models is empty: name at least "
                          "one model, or set rerank.mode to 'llm' or 'none'")
    per_model = []
    for name in cfg.rerank.cross_encoder_models:
        try:
            ce = get_cross_encoder(cfg, name)
        except ModelUnavailable as e:
            raise RerankError(f"cross-encoder {name!r} is unavailable here ({e}); provide its weights or set "
                              f"rerank.mode to 'llm' or 'none'") from e
        s = np.asarray(ce.score([(question_text, page_excerpt(p.text, question_text, cfg.rerank.page_chars))
                                 for p in pages]), dtype=float)
        # Models differ in scale (logits vs probabilities): min-max each model over these pages.
        span = s.max() - s.min() if len(s) else 0.0
        per_model.append((s - s.min()) / span if span > 0 else np.ones_like(s))
    avg = np.mean(per_model, axis=0)  # FinanceRAG-style multi-reranker: average of normalized scores
    for p, v in zip(pages, avg):
        p.scores["cross_encoder"] = float(v)


def rerank(cfg: RunConfig, question_text: str, pages: list, llm=None) -> tuple[list, Usage]:
    """Reranked copy of ``pages`` (retrieval order in) and the LLM usage it cost."""
    pages = [p.model_copy(deep=True) for p in pages]
    mode = cfg.rerank.mode
    if mode == "none" or not pages:
        for p in pages:
            p.scores["final"] = p.scores["retrieval"]
        return pages[:cfg.rerank.top_n], Usage()
    head, rest = pages[:cfg.rerank.candidates], pages[cfg.rerank.candidates:]
    if mode == "llm":
        if llm is None:
            from ..models import get_llm

            llm = get_llm(cfg)
        usage = _llm_scores(cfg, question_text, head, llm)
        return _blend(cfg, head + rest, "llm"), usage
    _cross_encoder_scores(cfg, question_text, head)
    return _blend(cfg, head + rest, "cross_encoder"), Usage()
