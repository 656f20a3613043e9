"""Stage 05: chunk search, page lifting, reranking, the stage runner and retrieval metrics."""
from __future__ import annotations

import json
import math
import re
import sys
import types

import numpy as np
import pytest

from rag.core.dataset import Dataset, Gold, PageRef, Question, Report
from rag.evaluate.retrieval_metrics import question_metrics, summarize, per_question, rank_lists
from rag.models.base import FakeLLM, HashEmbedder, ModelUnavailable
from rag.core.records import Chunk, CleanPage, CleanReport, RetrievalRecord
from rag.retrieve.query import search_text
from rag.retrieve.rerank import RerankError, rerank
from rag.retrieve import CandidatePage, lift_to_pages, retrieve_pages, rrf, run_retrieve, search_chunks

SHA = "a" * 40


def _chunk(page: int, n: int, text: str, sha1: str = SHA) -> Chunk:
    return Chunk(chunk_id=f"{sha1[:8]}-s300-p{page}-{n}", sha1=sha1, page=page, size=300, kind="text",
                 text=text, tokens=len(text.split()))


class FakeIndex:
    """ReportIndex stand-in: HashEmbedder cosines and word-overlap 'BM25' (higher = better)."""

    def __init__(self, chunks):
        self.chunks = chunks
        self.emb = HashEmbedder()
        self.vecs = self.emb.embed([c.text for c in chunks])
        self.bm25_queries = []

    def dense(self, qvec, k):
        s = self.vecs @ qvec
        return [(int(i), float(s[i])) for i in np.argsort(-s, kind="stable")[:k]]

    def dense_among(self, qvec, ids, k, embed_chunks=None):
        """Like ReportIndex.dense_among for an index without vectors: ``embed_chunks`` embeds the pool."""
        self.pooled = list(ids)
        vecs = embed_chunks([self.chunks[i].text for i in ids]) if ids else np.zeros((0, len(qvec)))
        s = vecs @ qvec
        return [(ids[j], float(s[j])) for j in np.argsort(-s, kind="stable")[:k]]

    def bm25(self, query, k):
        self.bm25_queries.append(query)
        qw = set(re.findall(r"\w+", query.lower()))
        s = [len(qw & set(re.findall(r"\w+", c.text.lower()))) for c in self.chunks]
        order = [i for i in np.argsort(-np.array(s), kind="stable") if s[i] > 0]
        return [(int(i), float(s[i])) for i in order[:k]]


CHUNKS = [
    _chunk(1, 0, "Chairman letter: a good year for Northwind"),
    _chunk(2, 0, "Consolidated statement of cash flows net cash from operating activities 406,100"),
    _chunk(2, 1, "cash flows from investing activities capital expenditure"),
    _chunk(3, 0, "Employees and culture at Northwind"),
    _chunk(4, 0, "Dividend per share was 0.42 USD, paid in May"),
]
TEXTS = {1: "# Letter", 2: "# Cash flows\n" + "x" * 5000, 3: "# People", 4: "# Dividends"}


def _cfg(make_cfg, **over):
    return make_cfg(overrides={"rerank.mode": "none", **over})


def _embed(t):
    return HashEmbedder().embed([t])[0]


def _embed_chunks(texts):
    return HashEmbedder().embed(texts)


def test_rrf_by_hand():
    fused = rrf([[1, 2, 3], [3, 1]], k=60)
    assert fused[1] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[3] == pytest.approx(1 / 63 + 1 / 61)
    assert fused[2] == pytest.approx(1 / 62)


@pytest.mark.parametrize("mode", ["dense", "bm25", "hybrid"])
def test_modes_find_the_cash_flow_page(make_cfg, mode):
    cfg = _cfg(make_cfg, **{"retrieve.mode": mode})
    pages = retrieve_pages(cfg, "net cash from operating activities cash flows", SHA, index=FakeIndex(CHUNKS),
                           texts=TEXTS, embed=_embed, embed_chunks=_embed_chunks)
    assert pages[0].page == 2 and pages[0].scores["retrieval"] == 1.0
    assert pages[0].text == TEXTS[2]  # the full clean page, not the chunk
    assert len({p.page for p in pages}) == len(pages)  # parent pages deduplicated
    assert all(0.0 <= p.scores["retrieval"] <= 1.0 for p in pages)
    assert [p.scores["final"] for p in pages] == [p.scores["retrieval"] for p in pages]
    assert (pages[0].scores["fused"] is not None) == (mode == "hybrid")
    assert (pages[0].scores["dense"] is None) == (mode == "bm25")


def test_page_aggregation_by_hand(make_cfg):
    # Chunk scores given directly: page 2 has two chunks (0.5, 0.4), page 1 one chunk at 0.6.
    found = {"dense": {0: 0.6, 1: 0.5, 2: 0.4}, "bm25": {}, "fused": {}, "chunk": {0: 0.6, 1: 0.5, 2: 0.4}}
    by = {}
    for how in ("max", "sum", "rrf_sum"):
        cfg = _cfg(make_cfg, **{"retrieve.page_score": how, "retrieve.rrf_k": 10})
        pages = lift_to_pages(cfg, CHUNKS, found, TEXTS)
        by[how] = {p.page: p.scores["retrieval"] for p in pages}
        assert next(p for p in pages if p.page == 2).chunk_ids == [CHUNKS[1].chunk_id, CHUNKS[2].chunk_id]
    assert by["max"] == {1: 1.0, 2: pytest.approx(0.5 / 0.6)}
    assert by["sum"] == {2: 1.0, 1: pytest.approx(0.6 / 0.9)}
    rrf2 = 1 / 12 + 1 / 13
    assert by["rrf_sum"] == {2: 1.0, 1: pytest.approx((1 / 11) / rrf2)}
    cfg = _cfg(make_cfg, **{"retrieve.top_pages": 1})
    assert [p.page for p in lift_to_pages(cfg, CHUNKS, found, TEXTS)] == [1]


def test_dense_pool_ranks_only_the_bm25_chunks(make_cfg):
    """dense_pool N: dense ranks the N best BM25 chunks, embedded through embed_chunks; 0: every chunk."""
    idx = FakeIndex(CHUNKS)
    embedded = []

    def embed_chunks(texts):
        embedded.extend(texts)
        return HashEmbedder().embed(texts)

    # "dividend": BM25 (word overlap) finds chunk 4 only; dense over all chunks ranks every chunk.
    pooled = search_chunks(_cfg(make_cfg, **{"retrieve.dense_pool": 2}), idx, ["dividend per share"], "dividend",
                           _embed, embed_chunks)
    assert idx.pooled == [4] and set(pooled["dense"]) == {4} and pooled["pool"] == {4: 1.0}
    assert embedded == [CHUNKS[4].text]
    full = search_chunks(_cfg(make_cfg, **{"retrieve.dense_pool": 0, "index.chunk_vectors": "stored"}), idx,
                         ["dividend per share"], "dividend", _embed)
    assert set(full["dense"]) == set(range(len(CHUNKS))) and "pool" not in full
    assert full["dense"][4] == pytest.approx(pooled["dense"][4])


def test_top_k_chunks_limits_search(make_cfg):
    cfg = _cfg(make_cfg, **{"retrieve.mode": "dense", "retrieve.top_k_chunks": 2})
    found = search_chunks(cfg, FakeIndex(CHUNKS), ["cash flows"], "cash flows", _embed, _embed_chunks)
    assert len(found["chunk"]) == 2


def _pages(scores):
    return [CandidatePage(sha1=SHA, page=i + 1, text=f"page {i + 1} " + "y" * 3000,
                          scores={"retrieval": s, "final": s}) for i, s in enumerate(scores)]


def _judge(relevance):
    """FakeLLM respond(): relevance by report page number read back from the prompt."""
    def respond(messages, schema):
        user = messages[-1]["content"]
        nums = [int(m) for m in re.findall(r"## Page \d+\npage (\d+) ", user)]
        return {"pages": [{"page": i, "reason": f"r{n}", "relevance": relevance[n]} for i, n in enumerate(nums, 1)
                          if n in relevance]}
    return respond


def test_llm_rerank_blend(make_cfg):
    cfg = _cfg(make_cfg, **{"rerank.mode": "llm", "rerank.candidates": 4, "rerank.batch_size": 3,
                            "rerank.page_chars": 200, "rerank.top_n": 5})
    llm = FakeLLM(_judge({1: 0.0, 2: 1.0, 3: 0.5, 4: 7.0}))  # 7.0 is out of range: clipped to 1
    pages, usage = rerank(cfg, "q?", _pages([1.0, 0.8, 0.6, 0.4, 0.2]), llm=llm)
    assert len(llm.calls) == 2  # 4 candidates in batches of 3
    assert all(len(m[-1]["content"]) < 3 * 200 + 400 for m, _ in llm.calls)  # pages truncated
    final = {p.page: p.scores["final"] for p in pages}
    assert final[1] == pytest.approx(0.3 * 1.0 + 0.7 * 0.0)
    assert final[2] == pytest.approx(0.3 * 0.8 + 0.7 * 1.0)
    assert final[4] == pytest.approx(0.3 * 0.4 + 0.7 * 1.0)
    assert final[5] == pytest.approx(0.3 * 0.2)  # not a candidate: reranker score counts as 0
    assert [p.page for p in pages] == [2, 4, 3, 1, 5]
    assert pages[0].reason == "r2" and pages[-1].scores["llm"] is None
    assert usage.requests == 2 and usage.prompt_tokens > 0


def test_llm_rerank_missing_page_falls_back(make_cfg):
    cfg = _cfg(make_cfg, **{"rerank.mode": "llm", "rerank.candidates": 3})
    pages, _ = rerank(cfg, "q?", _pages([1.0, 0.5, 0.2]), llm=FakeLLM(_judge({2: 0.9})))
    p1 = next(p for p in pages if p.page == 1)
    assert p1.scores["llm"] == 1.0 and "missing" in p1.reason


def test_rerank_none_and_top_n(make_cfg):
    cfg = _cfg(make_cfg, **{"rerank.top_n": 2})
    pages, usage = rerank(cfg, "q", _pages([1.0, 0.5, 0.2]))
    assert [p.page for p in pages] == [1, 2] and usage.requests == 0


def test_cross_encoder(make_cfg, monkeypatch):
    import rag.models

    class CE:
        def __init__(self, scale):
            self.scale = scale

        def score(self, pairs):
            return np.array([self.scale * len(re.findall("cash", p)) for _, p in pairs], dtype=float)

    def get(cfg, name):
        if name == "missing":
            raise ModelUnavailable("no weights")
        return CE(10.0 if name == "big" else 1.0)

    monkeypatch.setattr(rag.models, "get_cross_encoder", get, raising=False)
    cfg = _cfg(make_cfg, **{"rerank.mode": "cross_encoder", "rerank.cross_encoder_models": ["big", "small"]})
    pages = _pages([1.0, 0.5])
    pages[1].text = "cash cash"
    out, _ = rerank(cfg, "cash?", pages)
    assert out[0].page == 2 and out[0].scores["cross_encoder"] == 1.0 and out[1].scores["cross_encoder"] == 0.0
    cfg = _cfg(make_cfg, **{"rerank.mode": "cross_encoder", "rerank.cross_encoder_models": ["missing"]})
    with pytest.raises(RerankError, match="'missing' is unavailable.*rerank.mode"):
        rerank(cfg, "q", _pages([1.0]))


def test_query_expansion(make_cfg):
    cfg = _cfg(make_cfg, **{"retrieve.query_expansion": True, "retrieve.expansion_keywords": 2})
    llm = FakeLLM(lambda m, s: {"keywords": ["dividend", "payout", "extra"], "paraphrases": ["cash paid per share"]})
    idx = FakeIndex(CHUNKS)
    usage = []
    pages = retrieve_pages(cfg, "What did shareholders get?", SHA, index=idx, texts=TEXTS, embed=_embed,
                           embed_chunks=_embed_chunks, llm=llm, usage=usage)
    assert "dividend payout" in idx.bm25_queries[0] and "extra" not in idx.bm25_queries[0]
    assert pages[0].page == 4 and usage and usage[0].requests == 1


# ---- metrics ----------------------------------------------------------------------------------
def _ref(page, sha1=SHA):
    return PageRef(sha1=sha1, page=page)


def test_metrics_by_hand():
    ranked = {SHA: [7, 3, 9, 4], "b" * 40: [2, 8]}
    pools = [(_ref(3), _ref(9)), (_ref(8, "b" * 40),), (_ref(50),)]
    m = question_metrics(ranked, pools, ks=(1, 2, 5))
    assert m["hit@1"] == 0.0
    assert m["hit@2"] == pytest.approx(2 / 3)  # pool 1 at rank 2, pool 2 at rank 2 of its own report
    assert m["hit@5"] == pytest.approx(2 / 3)
    assert m["recall@10"] == pytest.approx(3 / 4)  # 3, 9, 8 of {3, 9, 8, 50}
    assert m["mrr"] == pytest.approx((1 / 2 + 1 / 2 + 0) / 3)
    l2 = math.log2
    ndcg_a = (1 / l2(3) + 1 / l2(4)) / (1 + 1 / l2(3) + 1 / l2(4))  # 3 gold pages in report a
    ndcg_b = (1 / l2(3)) / 1.0
    assert m["ndcg@10"] == pytest.approx((ndcg_a + ndcg_b) / 2)
    perfect = question_metrics({SHA: [3, 1]}, [(_ref(3),)])
    assert perfect == {"hit@1": 1.0, "hit@5": 1.0, "hit@10": 1.0, "recall@10": 1.0, "mrr": 1.0, "ndcg@10": 1.0}


def test_rank_lists_orders():
    rec = RetrievalRecord(qid="q0", question="?", kind="number", candidates={SHA: [
        CandidatePage(sha1=SHA, page=5, text="", scores={"final": 0.9, "retrieval": 0.2}),
        CandidatePage(sha1=SHA, page=6, text="", scores={"final": 0.5, "retrieval": 1.0})]})
    assert rank_lists(rec) == {SHA: [5, 6]} and rank_lists(rec, "retrieval") == {SHA: [6, 5]}


# ---- the stage with fakes --------------------------------------------------------------------
def _fake_dataset(tmp_path):
    sha_b = "b" * 40
    reports = (Report(sha1=SHA, company="Northwind Logistics Inc.", currency="USD", pdf=tmp_path / "a.pdf"),
               Report(sha1=sha_b, company="Harrow Group plc", currency="GBP", pdf=tmp_path / "b.pdf"))
    qs = (Question(qid="q000", text="What was the dividend per share of Northwind Logistics?", kind="number"),
          Question(qid="q001", text="Did Acme Corp buy back shares?", kind="boolean"),
          Question(qid="q002", text='Which of the companies had the highest net cash from operating activities: '
                                    '"Northwind Logistics Inc.", "Harrow Group plc"?', kind="comparative"))
    gold = {qs[0].text: Gold(kind="number", answers=("0.42",), pools=((_ref(4),),)),
            qs[2].text: Gold(kind="comparative", answers=("x",), pools=((_ref(2),), (_ref(1, sha_b),)))}
    return Dataset(root=tmp_path, name="fake", reports=reports, questions=qs, gold=gold)


def _fake_upstream(cfg, ds, monkeypatch, llm):
    """04 stands in whole (indexes, query embedding, item states: 05's upstream keys), 02 pages written,
    ``llm`` returned by get_llm."""
    idx = {SHA: FakeIndex(CHUNKS), "b" * 40: FakeIndex([_chunk(1, 0, "net cash from operating activities", "b" * 40)])}
    import rag
    from rag.core.stage import ItemState

    fake_index = types.SimpleNamespace(load_report_index=lambda cfg, sha1, size=None: idx[sha1],
                                       embed_query=lambda cfg, text: _embed(text), STAGE="04_index",
                                       embed_passages=lambda cfg, texts: HashEmbedder().embed(texts),
                                       embed_precision=lambda cfg: {"embed_precision": "bfloat16"},
                                       item_state=lambda cfg, sha1, size: ItemState("done", f"k-{sha1}", ""),
                                       index_files=lambda cfg, sha1, size: ())
    monkeypatch.setitem(sys.modules, "rag.index", fake_index)
    monkeypatch.delattr(rag, "index", raising=False)  # `from .. import index` must find the stand-in
    import rag.models
    monkeypatch.setattr(rag.models, "get_llm", lambda cfg: llm, raising=False)
    for r in ds.reports:
        rep = CleanReport(sha1=r.sha1, company=r.company, pages=[CleanPage(page=p, markdown=t) for p, t in TEXTS.items()])
        (cfg.run_dir / "02_clean").mkdir(parents=True, exist_ok=True)
        (cfg.run_dir / "02_clean" / f"{r.sha1}.json").write_text(rep.model_dump_json())


def test_run_retrieve_with_fakes(make_cfg, tmp_path, monkeypatch):
    ds = _fake_dataset(tmp_path)
    cfg = make_cfg(data_dir=tmp_path, overrides={"rerank.mode": "llm", "rerank.candidates": 2})
    llm = FakeLLM(lambda m, s: {"pages": [{"page": 1, "reason": "ok", "relevance": 0.5}]})
    _fake_upstream(cfg, ds, monkeypatch, llm)
    df = run_retrieve(cfg, ds, progress=False)
    assert list(df.qid) == ["q000", "q001", "q002"] and not df.skipped.any()
    rec = json.loads((cfg.run_dir / "05_retrieve" / "q002.json").read_text())
    assert [r["company"] for r in rec["routed"]] == ["Northwind Logistics Inc.", "Harrow Group plc"]
    assert set(rec["sub_questions"]) == {SHA, "b" * 40} and rec["candidates"]["b" * 40][0]["page"] == 1
    cand = rec["candidates"][SHA][0]
    assert set(cand["scores"]) >= {"dense", "bm25", "fused", "retrieval", "llm", "final"} and cand["reason"]
    search = rec["search"][SHA]  # the search as run: cleaned query, its lexicon topics, the BM25 query
    assert search["query"] in search["bm25_query"] and search["dense_queries"][0] == search["query"]
    none = json.loads((cfg.run_dir / "05_retrieve" / "q001.json").read_text())
    assert none["routed"] == [] and none["candidates"] == {}
    manifest = json.loads((cfg.run_dir / "05_retrieve" / "manifest.json").read_text())
    assert manifest["tokens"]["prompt_tokens"] > 0
    pooled = sum(s["dense_pool_tokens"] for q in ("q000", "q002")
                 for s in json.loads((cfg.run_dir / "05_retrieve" / f"{q}.json").read_text())["search"].values())
    assert pooled > 0 and manifest["usage"]["embedding_tokens"] == pooled  # the pools dense search ranked
    # The embedder's dtype (embed.precision "auto" resolves per machine) is named where chunks were embedded.
    assert manifest["items"]["q000"]["embed_precision"] == "bfloat16"
    assert "embed_precision" not in manifest["items"]["q001"]  # routed nowhere: nothing embedded
    n_calls = len(llm.calls)
    again = run_retrieve(cfg, ds, progress=False)  # everything current: skipped, no LLM calls
    assert again.skipped.all() and len(llm.calls) == n_calls
    from rag.retrieve import load_retrieval

    pq = per_question({q: load_retrieval(cfg, q) for q in ("q000", "q001", "q002")}, ds)
    assert list(pq.qid) == ["q000", "q002"]  # q001 has no gold pools
    table = summarize(pq)
    assert table.iloc[0]["group"] == "all" and table.iloc[0]["n"] == 2 and table.iloc[0]["hit@10"] == 1.0


def test_concurrent_questions_write_the_same_records(make_cfg, tmp_path, monkeypatch):
    """llm.concurrency = 4: questions run in parallel, every 05 record is what concurrency 1 writes."""
    ds = _fake_dataset(tmp_path)
    judge = _judge({1: 0.9, 2: 0.2, 3: 0.6, 4: 0.4})
    records, dirs = {}, set()
    for n in (1, 4):
        cfg = make_cfg(data_dir=tmp_path, overrides={"rerank.mode": "llm", "rerank.candidates": 3,
                                                     "llm.concurrency": n, "run": f"c{n}"})
        _fake_upstream(cfg, ds, monkeypatch, FakeLLM(judge))
        df = run_retrieve(cfg, ds, progress=False)
        assert not df.skipped.any() and cfg.llm.concurrency == n
        dirs.add(cfg.run_dir)
        records[n] = {p.name: {k: v for k, v in json.loads(p.read_text()).items() if k not in ("seconds", "usage")}
                      for p in sorted((cfg.run_dir / "05_retrieve").glob("q*.json"))}
    assert len(dirs) == 2 and len(records[1]) == 3 and records[1] == records[4]


# ---- real run on the demo corpus ------------------------------------------------------------
@pytest.mark.slow
def test_real_retrieval_on_demo(demo_dir, make_cfg):
    """Stages 01..04 for real on the demo corpus, then hybrid retrieval: gold pages are found."""
    for mod in ("rag.parse", "rag.clean", "rag.chunk", "rag.index"):
        pytest.importorskip(mod, reason=f"upstream stage module {mod} has not landed yet")
    from rag.chunk import run_chunk
    from rag.clean import run_clean
    from rag.core.dataset import load_dataset
    from rag.index import run_index
    from rag.evaluate.retrieval_metrics import retrieval_metrics
    from rag.parse import run_parse

    cfg = make_cfg(data_dir=demo_dir, overrides={"rerank.mode": "none", "clean.ocr": False})
    ds = load_dataset(demo_dir)
    for run in (run_parse, run_clean, run_chunk, run_index):
        run(cfg, ds, progress=False)
    run_retrieve(cfg, ds, progress=False)
    table = retrieval_metrics(cfg, ds)
    overall = table[table.group == "all"].iloc[0]
    assert overall["n"] >= 3
    assert overall["hit@10"] >= 0.8, table.to_string()
    # Each item names the dtype the real embedder computed its pool in ("auto": this machine's choice).
    from rag.models import get_embedder

    items = json.loads((cfg.run_dir / "05_retrieve" / "manifest.json").read_text())["items"]
    named = {v["embed_precision"] for v in items.values() if "embed_precision" in v}
    assert named == {get_embedder(cfg).precision}, items

    # The LLM reranker for real (test preset: the 0.5B model), on one question's top pages.
    from rag.models import ModelUnavailable, get_llm, shutdown_all
    from rag.retrieve import load_records

    llm_cfg = make_cfg(data_dir=demo_dir, overrides={"rerank.mode": "llm", "rerank.candidates": 3,
                                                     "clean.ocr": False})
    try:
        llm = get_llm(llm_cfg)
    except ModelUnavailable as e:
        pytest.skip(f"local LLM unavailable: {e}")
    rec = next(r for r in load_records(cfg, ds).values() if r.candidates)
    sha1, cands = next(iter(rec.candidates.items()))
    try:
        pages, usage = rerank(llm_cfg, rec.question, list(cands), llm=llm)
    finally:
        shutdown_all()
    assert usage.requests >= 1 and all(0.0 <= p.scores["llm"] <= 1.0 for p in pages[:3] if p.scores["llm"] is not None)
    assert sum(p.scores["llm"] is not None for p in pages) == min(3, len(cands))


def test_search_text_drops_boilerplate_and_company():
    q = ("According to the annual report, what is the Cash flow from operations (in USD) for Sonic Automotive, Inc.  "
         "(within the last period or at the end of the last period)? If data is not available, return 'N/A'.")
    s = search_text(q, "Sonic Automotive, Inc.")
    assert "Cash flow from operations (in USD)" in s
    assert not re.search(r"sonic|annual report|N/A|last period", s, re.I)
    assert search_text("Did The Harrow Group plc's board change?", "The Harrow Group plc") == "Did board change?"
    assert search_text("If data is not available, return 'N/A'.", "X") != ""  # never an empty query


def test_viewer_html_marks_gold_and_unrouted():
    from rag.views.widgets.retrieval_viewer import record_html

    rec = {"qid": "q000", "kind": "number", "question": "Q?", "routed": [{"sha1": SHA, "company": "N Inc"}],
           "sub_questions": {}, "usage": {}, "seconds": 1.0,
           "candidates": {SHA: [{"page": 4, "text": "<b>", "reason": "has it", "scores": {"final": 0.9, "llm": None}}]}}
    h = record_html(rec, gold={(SHA, 4), (SHA, 9)})
    assert "4 ★" in h and "has it" in h and "&lt;b&gt;" in h and "not retrieved: [9]" in h and "<th>llm</th>" not in h
    assert "no report" in record_html({**rec, "routed": [], "candidates": {}})
    searched = record_html({**rec, "search": {SHA: {"query": "dividend per share", "bm25_query": "dividend per share payout",
                                                    "lexicon_topics": ["dividend_per_share"]}}})
    assert "lexicon topics: dividend_per_share" in searched and "dividend per share payout" in searched


def test_page_excerpt_picks_the_relevant_lines():
    from rag.retrieve.rerank import page_excerpt

    page = "\n".join(["Intro text about the year."] * 40 + ["Dividend per share 0.42 USD declared"] + ["Other."] * 40)
    ex = page_excerpt(page, "What was the dividend per share?", 200)
    assert "Dividend per share 0.42" in ex and len(ex) <= 200 + 8 and ex.startswith("... ")
    assert page_excerpt("short page", "q", 200) == "short page"
