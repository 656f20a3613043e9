"""Stage 04 (index): round trips (hash + real MiniLM embedder, BM25), model mismatch, incremental adds,
and the real chain on the demo corpus."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import rag.index as rix
from rag.core.artifacts import write_json_atomic
from rag.chunk import run_chunk
from rag.core.dataset import Dataset, Report
from rag.index import IndexMismatch, bm25_tokens, embed_query, load_report_index, run_index
from rag.retrieve import rrf
from rag.models.base import HashEmbedder
from rag.core.records import CleanPage, CleanReport


class CountingEmbedder(HashEmbedder):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.seen: list[str] = []

    def embed(self, texts, each=False):
        self.seen.extend(texts)
        return super().embed(texts)


FILLER = [
    "The board met four times during the year to review strategy and risk.",
    "Employees across all regions took part in the annual engagement survey.",
    "Our logistics network was extended with two new regional warehouses.",
    "The audit committee reviewed the internal control framework in detail.",
]
KNOWN = "The Zephyr turbine programme delivered 417 megawatts of new capacity in Patagonia."


def make_report(sha1: str, company: str, known_page: int | None = None, pages: int = 5) -> CleanReport:
    out = []
    for p in range(1, pages + 1):
        text = " ".join(f"{s} ({company}, section {p}.{i})" for i, s in enumerate(FILLER))
        if p == known_page:
            text += "\n\n" + KNOWN
        out.append(CleanPage(page=p, markdown=f"# Part {p}\n\n{text}"))
    return CleanReport(sha1=sha1, company=company, pages=out)


def setup(cfg, tmp_path: Path, reps: list[CleanReport]) -> Dataset:
    for r in reps:
        write_json_atomic(cfg.run_dir / "02_clean" / f"{r.sha1}.json", r.model_dump(mode="json"))
    return Dataset(root=tmp_path, name="t", questions=(), gold={},
                   reports=tuple(Report(sha1=r.sha1, company=r.company, currency="USD", pdf=tmp_path / "x.pdf")
                                 for r in reps))


A, B = "a" * 40, "b" * 40
# Every chunk embedded by 04 (the gpu / openai presets); the offline default embeds a BM25 pool on demand in 05.
STORED = {"index.chunk_vectors": "stored", "retrieve.dense_pool": 0}


def test_bm25_tokens_keep_numbers_drop_stopwords():
    assert bm25_tokens("The revenue of $1,234.5 million in 2023 was a record") == [
        "revenue", "1234.5", "million", "2023", "record"]


def test_bm25_stemmer_matches_word_forms_and_queries_follow_the_index(make_cfg, tmp_path, monkeypatch):
    """index.bm25_stemmer=english: "delivering programmes" finds "delivered ... programme"; the index meta
    records the stemmer and a query is tokenized as the index was built, whatever the asking config says."""
    assert bm25_tokens("Acquired 2 acquisitions in 2023", "english") == ["acquir", "2", "acquisit", "2023"]
    monkeypatch.setattr(rix, "get_embedder", lambda cfg: HashEmbedder(dim=64))
    for stem, hit in (("english", True), ("none", False)):
        cfg = make_cfg(overrides={"chunk.sizes": [60], "retrieve.chunk_size": 60, "index.bm25_stemmer": stem},
                       run=f"stem-{stem}")
        ds = setup(cfg, tmp_path, [make_report(A, "Acme", known_page=3)])
        run_chunk(cfg, ds, progress=False)
        run_index(cfg, ds, progress=False)
        ix = load_report_index(cfg, A)
        assert ix.meta["bm25_stemmer"] == stem
        found = ix.bm25("delivering programmes", 3)
        assert (bool(found) and ix.chunks[found[0][0]].page == 3) is hit


def test_rrf_fuses_by_rank():
    fused = rrf([[1, 2], [2, 3]], k=60)  # ids of two rankings, best first (their scores do not count)
    assert max(fused, key=fused.get) == 2 and set(fused) == {1, 2, 3}
    assert fused[2] == pytest.approx(1 / 62 + 1 / 61)


def test_round_trip_hash_embedder_and_bm25(make_cfg, tmp_path, monkeypatch):
    emb = CountingEmbedder(dim=128)
    monkeypatch.setattr(rix, "get_embedder", lambda cfg: emb)
    cfg = make_cfg(overrides={"chunk.sizes": [60, 300], "retrieve.chunk_size": 60, **STORED})
    ds = setup(cfg, tmp_path, [make_report(A, "Acme", known_page=3), make_report(B, "Beta", known_page=2)])
    run_chunk(cfg, ds, progress=False)
    df = run_index(cfg, ds, progress=False)
    assert len(df) == 4 and (df["bytes"] > 0).all() and (df["dim"] == 128).all()
    ix = load_report_index(cfg, A)  # size None -> retrieve.chunk_size
    assert ix.size == 60 and ix.dim == 128 and len(ix.chunks) == ix.faiss_index.ntotal
    dense = ix.dense(embed_query(cfg, KNOWN), 5)
    assert ix.chunks[dense[0][0]].page == 3 and dense[0][1] >= dense[-1][1]
    sparse = ix.bm25("Zephyr turbine megawatts Patagonia", 5)
    assert ix.chunks[sparse[0][0]].page == 3 and all(s > 0 for _, s in sparse)
    assert ix.bm25("zzzunknownword", 5) == []
    ixb = load_report_index(cfg, B, 300)
    assert ixb.size == 300 and ixb.chunks[ixb.bm25(KNOWN, 3)[0][0]].page == 2
    man = json.loads((cfg.run_dir / "04_index" / "manifest.json").read_text())
    assert man["model_name"] == "hash-bow" and man["dim"] == 128 and man["bytes_on_disk"] > 0
    meta = json.loads((cfg.run_dir / "04_index" / f"{A}.s60.meta.json").read_text())
    assert meta["chunks"] == len(ix.chunks) and len(meta["chunk_sha256"]) == 64


def test_model_mismatch_is_a_clear_error(make_cfg, tmp_path, monkeypatch):
    monkeypatch.setattr(rix, "get_embedder", lambda cfg: HashEmbedder(dim=64, model_name=cfg.embed.model))
    cfg = make_cfg(overrides={"embed.model": "model-one", **STORED})
    ds = setup(cfg, tmp_path, [make_report(A, "Acme", known_page=1)])
    run_chunk(cfg, ds, progress=False)
    run_index(cfg, ds, progress=False)
    other = make_cfg(overrides={"embed.model": "model-two", **STORED})
    with pytest.raises(IndexMismatch, match="model-one.*model-two"):
        load_report_index(other, A)
    ix = load_report_index(cfg, A)
    with pytest.raises(IndexMismatch, match="dim 32.*dim 64"):
        ix.dense(np.ones(32, dtype=np.float32), 3)


def test_adding_a_report_embeds_only_that_report(make_cfg, tmp_path, monkeypatch):
    emb = CountingEmbedder(dim=64)
    monkeypatch.setattr(rix, "get_embedder", lambda cfg: emb)
    cfg = make_cfg(overrides=STORED)
    a, b = make_report(A, "Acme", known_page=1), make_report(B, "Beta", known_page=2)
    ds1 = setup(cfg, tmp_path, [a])
    run_chunk(cfg, ds1, progress=False)
    run_index(cfg, ds1, progress=False)
    assert emb.seen and all("Acme" in t for t in emb.seen)
    emb.seen.clear()
    ds2 = setup(cfg, tmp_path, [a, b])
    run_chunk(cfg, ds2, progress=False)
    df = run_index(cfg, ds2, progress=False)
    assert emb.seen and all("Beta" in t for t in emb.seen)
    assert df.set_index("sha1").loc[A, "seconds"] == 0
    emb.seen.clear()
    run_index(cfg, ds2, progress=False)
    assert emb.seen == []


def test_missing_index_names_the_stage(make_cfg, tmp_path, monkeypatch):
    monkeypatch.setattr(rix, "get_embedder", lambda cfg: HashEmbedder(dim=32))
    cfg = make_cfg()
    ds = setup(cfg, tmp_path, [make_report(A, "Acme")])
    run_chunk(cfg, ds, progress=False)
    run_index(cfg, ds, progress=False)
    with pytest.raises(FileNotFoundError, match="04_index"):
        load_report_index(cfg, A, size=999)


def test_round_trip_real_minilm(make_cfg, tmp_path):
    """Dense retrieval with the real offline MiniLM embedder on a tiny corpus."""
    cfg = make_cfg(overrides={"chunk.sizes": [120], **STORED})
    ds = setup(cfg, tmp_path, [make_report(A, "Acme", known_page=4, pages=4)])
    run_chunk(cfg, ds, progress=False)
    df = run_index(cfg, ds, progress=False)
    assert (df["dim"] == 384).all()
    ix = load_report_index(cfg, A, 120)
    hits = ix.dense(embed_query(cfg, "How many megawatts did the Zephyr turbines add in Patagonia?"), 3)
    assert ix.chunks[hits[0][0]].page == 4
    assert 0 < hits[0][1] <= 1.0001


def test_real_chain_on_demo_corpus(demo_dir, make_cfg):
    """run_parse -> run_clean -> run_chunk -> run_index on the generated demo corpus (real MiniLM):
    each printed paragraph sentence of the truth file finds its page first with BM25, and with dense
    retrieval among the top 5 chunks (first for at least 3 in 4)."""
    pytest.importorskip("rag.clean", reason="stage 02_clean not written yet")
    from rag.clean import run_clean
    from rag.core.dataset import load_dataset
    from rag.parse import run_parse

    ds = load_dataset(demo_dir)
    rep = ds.reports[0]
    ds = ds.model_copy(update={"reports": (rep,)})
    cfg = make_cfg(data_dir=demo_dir, overrides=STORED)
    run_parse(cfg, ds, progress=False)
    run_clean(cfg, ds, progress=False)
    run_chunk(cfg, ds, progress=False)
    run_index(cfg, ds, progress=False)
    ix = load_report_index(cfg, rep.sha1)
    truth = json.loads((demo_dir / "demo_truth.json").read_text())
    sents = [s for r in truth["reports"] if r["sha1"] == rep.sha1 for s in r["sentences"]
             if s["kind"] == "paragraph"]
    assert sents
    dense_first = 0
    for s in sents:
        sparse = ix.bm25(s["text"], 3)
        assert ix.chunks[sparse[0][0]].page == s["page"], s["key"]
        dense_pages = [ix.chunks[i].page for i, _ in ix.dense(embed_query(cfg, s["text"]), 5)]
        assert s["page"] in dense_pages, s["key"]
        dense_first += dense_pages[0] == s["page"]
    # MiniLM on whole chunks: a sentence may lose to a page that paraphrases it (seen: 1 of 4).
    assert dense_first >= 0.75 * len(sents)


def test_index_signature_counts_the_stemmer_only_when_set(make_cfg):
    from rag.core import deps

    plain = make_cfg()
    assert deps.config_signature(plain, "04_index")["index"] == {"chunk_vectors": "on_demand"}
    stem = make_cfg(overrides={"index.bm25_stemmer": "english"})
    assert deps.config_signature(stem, "04_index")["index"] == {"bm25_stemmer": "english", "chunk_vectors": "on_demand"}
    # Stored vectors (how every index was built before the field existed) keep the key from before it.
    assert "index" not in deps.config_signature(make_cfg(overrides=STORED), "04_index")
    assert "dense_pool" not in deps.config_signature(make_cfg(overrides=STORED), "05_retrieve")["retrieve"]
    assert deps.config_signature(make_cfg(), "05_retrieve")["retrieve"]["dense_pool"] == 100


def test_on_demand_index_embeds_nothing_and_ranks_a_pool(make_cfg, tmp_path, monkeypatch):
    """index.chunk_vectors=on_demand (the offline default): 04 writes BM25 and an empty FAISS index without
    one embedding; dense search over it needs the pool's vectors, which are the ones a stored index holds."""
    emb = CountingEmbedder(dim=64)
    monkeypatch.setattr(rix, "get_embedder", lambda cfg: emb)
    cfg = make_cfg(run="lazy")
    ds = setup(cfg, tmp_path, [make_report(A, "Acme", known_page=3)])
    run_chunk(cfg, ds, progress=False)
    df = run_index(cfg, ds, progress=False)
    assert emb.seen == [] and (df["dim"] == 64).all()
    man = json.loads((cfg.run_dir / "04_index" / "manifest.json").read_text())
    assert man["chunk_vectors"] == "on_demand" and man["usage"]["embedding_tokens"] == 0
    ix = load_report_index(cfg, A)
    assert not ix.has_vectors and ix.faiss_index.ntotal == 0 and ix.meta["vectors"] is False
    q = embed_query(cfg, KNOWN)
    with pytest.raises(IndexMismatch, match="on_demand.*dense_pool"):
        ix.dense(q, 3)
    with pytest.raises(IndexMismatch, match="embed_chunks"):
        ix.dense_among(q, [0, 1], 3)
    pool = [i for i, _ in ix.bm25("Zephyr turbine Patagonia board", 10)]
    lazy = ix.dense_among(q, pool, 3, lambda texts: rix.embed_passages(cfg, texts))
    assert ix.chunks[lazy[0][0]].page == 3

    stored = make_cfg(run="stored", overrides=STORED)
    setup(stored, tmp_path, [make_report(A, "Acme", known_page=3)])
    run_chunk(stored, ds, progress=False)
    run_index(stored, ds, progress=False)
    full = load_report_index(stored, A)
    assert full.has_vectors and full.faiss_index.ntotal == len(full.chunks)
    got = full.dense_among(q, pool, 3)
    assert [i for i, _ in got] == [i for i, _ in lazy] and [s for _, s in got] == pytest.approx([s for _, s in lazy])


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_on_demand_retrieval_equals_a_stored_index_with_the_same_pool(make_cfg, tmp_path, precision):
    """Real MiniLM: 05's pages from an on_demand index (pool embedded on demand) = from a stored index.
    float32: scores equal to 5 decimals. bfloat16 (embed.precision "auto" on a CPU with AMX): 04 embeds in
    padded batches and 05 one text per call, and in bfloat16 the two vectors of a chunk differ at cosine
    ~0.9999 (every op rounds to 8 bits of mantissa; padding changes how the sums are blocked): the same pages
    in the same order, scores in the third decimal."""
    from rag.retrieve import clear_caches, retrieve_pages

    pages = {}
    for run, extra in (("lazy", {}), ("stored", {"index.chunk_vectors": "stored"})):
        cfg = make_cfg(run=f"{run}-{precision}", overrides={"chunk.sizes": [120], "retrieve.chunk_size": 120,
                                                            "retrieve.dense_pool": 4, "embed.precision": precision,
                                                            **extra})
        ds = setup(cfg, tmp_path, [make_report(A, "Acme", known_page=4, pages=4)])
        run_chunk(cfg, ds, progress=False)
        run_index(cfg, ds, progress=False)
        clear_caches()
        found = retrieve_pages(cfg, "How many megawatts did the Zephyr turbines add in Patagonia?", A)
        pages[run] = [(p.page, round(p.scores["dense"], 5), round(p.scores["final"], 5)) for p in found]
    assert [p[0] for p in pages["lazy"]] == [p[0] for p in pages["stored"]] and pages["lazy"][0][0] == 4
    if precision == "float32":
        assert pages["lazy"] == pages["stored"]
    else:
        for (_, d1, f1), (_, d2, f2) in zip(pages["lazy"], pages["stored"]):
            assert abs(d1 - d2) <= 0.005 and abs(f1 - f2) <= 0.005, pages


def test_on_demand_needs_a_pool_unless_bm25(make_cfg):
    from rag.core.config import ConfigError

    with pytest.raises(ConfigError, match="chunk_vectors='on_demand'.*dense_pool > 0"):
        make_cfg(overrides={"retrieve.dense_pool": 0})
    assert make_cfg(overrides={"retrieve.dense_pool": 0, "retrieve.mode": "bm25"}).retrieve.dense_pool == 0


def test_a_pool_chunk_vector_depends_on_its_text_alone(make_cfg):
    """Real MiniLM, embed(each=True) (what 05 uses for on-demand pools): a text's vector is bit-identical
    whether asked alone or beside longer texts (no padding), so 05's records do not depend on which questions
    embedded a chunk first (local threads vs Ray workers); batched vectors are cached apart."""
    from rag.models import get_embedder

    short, long = "Revenue grew by 4% to 406 million dollars.", " ".join(FILLER) * 2
    emb = get_embedder(make_cfg(overrides={"embed.cache": False}))
    alone = emb.embed([short], each=True)[0]
    assert (emb.embed([long, short, long + " again"], each=True)[1] == alone).all()
    cached = get_embedder(make_cfg(run="c"))
    cached.embed([short])  # batched, cached under its own key
    before = cached.meter.snapshot()["requests"]
    again = cached.embed([short], each=True)[0]
    assert cached.meter.snapshot()["requests"] == before + 1 and (again == alone).all()
    assert cached.meter.snapshot()["requests"] == before + 1 and (cached.embed([short], each=True)[0] == alone).all()
