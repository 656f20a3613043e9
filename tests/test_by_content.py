"""Routing a question that names no company by the filings' text (``retrieve.route_by_content``, issue 48):
the candidates (one filing per company, those printing the asked period), the choice by the embedder's cosine
with fakes, and stage 05 recording it. Tiny inputs: Reports in memory, fake indexes and embedders."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rag.core.dataset import Report
from rag.retrieve.by_content import content_candidates, route_by_content
from rag.retrieve.filing import prints_periods


def _r(sha1: str, company: str, period: str = "", doc_type: str = "") -> Report:
    return Report(sha1=sha1, company=company, currency="USD", pdf=Path(f"/nowhere/{sha1}.pdf"), period=period,
                  doc_type=doc_type)


REPORTS = [_r("a17", "Amazon", "2017", "10-K"), _r("a19", "Amazon", "2019", "10-K"),
           _r("w20", "Walmart", "2020", "10-K"), _r("b24", "Best Buy", "2024Q2", "10-Q"),
           _r("b23", "Best Buy", "2023", "10-K")]


def test_one_filing_per_company_printing_the_asked_period():
    got = [r.sha1 for r in content_candidates("What was the company's FY2019 revenue?", REPORTS)]
    assert got == ["a19", "w20"]  # Walmart's 10-K 2020 prints FY2019; Best Buy's filings do not
    assert [r.sha1 for r in content_candidates("What was FY2017 capex?", REPORTS)] == ["a17"]
    # No period named: each company's latest annual filing, every company.
    assert [r.sha1 for r in content_candidates("Which segment grew most?", REPORTS)] == ["a19", "w20", "b23"]
    # A period no filing prints: all companies' picks are kept (nothing to tell them apart by).
    assert len(content_candidates("What was FY2009 revenue?", REPORTS)) == 3
    assert prints_periods(REPORTS[2], "FY2019 and FY2020") and not prints_periods(REPORTS[0], "in FY2019")


class _Index:
    """A report's index: BM25 finds ``n`` chunks, each with the given cosine to any question."""

    def __init__(self, cosines):
        self.cosines = cosines

    def bm25(self, query, k):
        return [(i, 1.0) for i in range(min(k, len(self.cosines)))]

    def dense_among(self, qvec, ids, k, embed_chunks=None):
        return sorted(((i, self.cosines[i]) for i in ids), key=lambda x: -x[1])[:k]


def test_the_filing_whose_best_chunks_are_closest_wins(make_cfg):
    cfg = make_cfg()
    idx = {"a19": _Index([0.9, 0.2, 0.2, 0.2]),  # one lucky chunk: mean of the best 3 is 0.433
           "w20": _Index([0.6, 0.6, 0.5]), "b23": _Index([])}
    got = route_by_content(cfg, "What was the company's FY2019 operating income?", REPORTS,
                           index_of=idx.__getitem__, embed=lambda t: np.ones(3), embed_chunks=lambda t: None)
    assert got.sha1 == "w20" and got.scores == {"a19": pytest.approx(0.4333, abs=1e-4), "w20": pytest.approx(0.5667, abs=1e-4)}
    assert got.why.startswith("no company named: by content, Walmart") and "next Amazon 10-K 2019" in got.why
    none = route_by_content(cfg, "Anything?", REPORTS, index_of=lambda s: _Index([]), embed=lambda t: np.ones(3),
                            embed_chunks=lambda t: None)
    assert none is None  # no candidate has a BM25 hit: unrouted, answered N/A


def test_stage_05_routes_an_unnamed_question_by_content(make_cfg, tmp_path, monkeypatch):
    from test_retrieve import FakeLLM, _fake_dataset, _fake_upstream

    from rag.retrieve import load_retrieval, routing_na_reason, run_retrieve

    ds = _fake_dataset(tmp_path)  # q001 names a company the dataset does not hold
    for on, run in ((False, "off"), (True, "on")):
        cfg = make_cfg(data_dir=tmp_path, run=run, overrides={"retrieve.route_by_content": on})
        _fake_upstream(cfg, ds, monkeypatch, FakeLLM(lambda m, s: {}))
        run_retrieve(cfg, ds, progress=False)
        rec = load_retrieval(cfg, "q001")
        manifest = json.loads((cfg.run_dir / "05_retrieve" / "manifest.json").read_text())
        if not on:
            assert rec.routing == "unrouted" and routing_na_reason(rec) and manifest["counts"]["by_content"] == 0
            continue
        assert rec.routing == "content" and routing_na_reason(rec) is None and len(rec.routed) == 1
        sha1 = rec.routed[0].sha1
        assert rec.routed[0].why.startswith("no company named: by content") and rec.candidates[sha1]
        assert sha1 in rec.search[sha1]["content_scores"]  # the other report has no BM25 hit: not scored
        assert manifest["counts"]["by_content"] == 1 and manifest["counts"]["unrouted"] == 0
        # Named questions are routed as before.
        assert load_retrieval(cfg, "q000").routing == "ok"


def test_the_switch_keys_only_the_questions_it_routes(make_cfg):
    """05 keys a named question the same with the switch on or off (runs stay current); the switch is in the
    sharing signature (a folder made without it is not borrowed)."""
    from rag.core import deps
    from rag.core.dataset import Question
    from rag.retrieve import question_key

    off, on = make_cfg(), make_cfg(overrides={"retrieve.route_by_content": True})
    q = Question(qid="q0", text="What was Acme's revenue?", kind="number")
    up = {"02_clean": {}, "04_index": {}}
    assert question_key(off, q, ["s"], {"s": "Acme"}, up) == question_key(on, q, ["s"], {"s": "Acme"}, up)
    assert question_key(on, q, ["s"], {"s": "Acme"}, up, by_content=True) != question_key(on, q, ["s"], {"s": "Acme"}, up)
    assert deps.lineage_signature(off, "05_retrieve") != deps.lineage_signature(on, "05_retrieve")


def test_rag_ask_lets_an_unnamed_question_through_only_with_the_switch(tmp_path):
    from rag.ask import QuestionError, routed_companies
    from rag.core.dataset import Dataset

    ds = Dataset(root=tmp_path, name="fb", reports=tuple(REPORTS), questions=(), gold={})
    with pytest.raises(QuestionError, match="names no company"):
        routed_companies(ds, "What was the company's FY2019 revenue?")
    assert routed_companies(ds, "What was the company's FY2019 revenue?", by_content=True) == []
    assert routed_companies(ds, "What was Walmart's FY2019 revenue?", by_content=True) == ["Walmart"]


def test_a_report_failed_upstream_is_no_candidate(make_cfg, tmp_path, monkeypatch):
    """One report whose 04 failed does not block a question routed by content: it is left out."""
    from test_retrieve import FakeLLM, _fake_dataset, _fake_upstream

    import rag.retrieve as R
    from rag.core.stage import ItemState

    ds = _fake_dataset(tmp_path)
    cfg = make_cfg(data_dir=tmp_path, run="failed", overrides={"retrieve.route_by_content": True})
    _fake_upstream(cfg, ds, monkeypatch, FakeLLM(lambda m, s: {}))
    import sys
    idx = sys.modules["rag.index"]
    monkeypatch.setattr(idx, "item_state", lambda cfg, sha1, size: ItemState("failed", "", "boom")
                        if sha1 == ds.reports[1].sha1 else ItemState("done", f"k-{sha1}", ""))
    assert [r.sha1 for r in R.usable_reports(cfg, ds)] == [ds.reports[0].sha1]
    R.run_retrieve(cfg, ds, progress=False)
    rec = R.load_retrieval(cfg, "q001")
    assert rec.routing == "content" and [r.sha1 for r in rec.routed] == [ds.reports[0].sha1]
