"""ONNX Runtime embedder (embed.runtime = "onnx" | "onnx-int8"): same vectors as the torch path on real
report text (both long_text modes), export reuse and keying, keys that keep runtimes apart, and a real
stage 04 run with the onnx runtime."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from rag.core import deps
from rag.index import IndexMismatch, embed_query, load_report_index, run_index
from rag.chunk import run_chunk
from conftest import SHARED_DEV
from test_index import A, make_report, setup

# Measured on 2 cores (AMD EPYC, avx2) over the texts of _real_texts() against the fp32 graph: int8 (uint8
# weights per channel) min cosine 0.990, mean 0.993; the bounds leave a little room for another CPU's kernels.
FP32_MIN_COS = 0.999
INT8_MIN_COS = 0.98
INT8_MEAN_COS = 0.99


def _real_texts() -> list[str]:
    """Passages of a real annual report (erc2-dev's first PDF, its first 12 pages) cut at varied lengths:
    short lines, chunk-sized passages and passages far over MiniLM's 256 wordpieces."""
    pdfs = sorted((SHARED_DEV / "pdfs").glob("*.pdf"))
    if not pdfs:
        pytest.skip(f"no PDFs under {SHARED_DEV / 'pdfs'}")
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdfs[0]))
    words = []
    for i in range(min(12, len(doc))):
        words += doc[i].get_textpage().get_text_range().split()
    doc.close()
    texts, pos = [], 0
    for n in (8, 40, 150, 230, 400, 600, 25, 180, 90, 320) * 3:
        if pos + n > len(words):
            break
        texts.append(" ".join(words[pos:pos + n]))
        pos += n
    assert len(texts) >= 10, "too little text in the first PDF"
    return texts


@pytest.fixture(scope="module")
def texts():
    return _real_texts()


def _embedder(make_cfg, **over):
    from rag.models import get_embedder

    return get_embedder(make_cfg(overrides={"embed.cache": False, **over}))


def _cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


@pytest.mark.parametrize("long_text", ["truncate", "mean"])
def test_onnx_fp32_vectors_match_torch(make_cfg, texts, long_text):
    torch_v = _embedder(make_cfg, **{"embed.long_text": long_text}).embed(texts)
    onnx_e = _embedder(make_cfg, **{"embed.long_text": long_text, "embed.runtime": "onnx"})
    onnx_v = onnx_e.embed(texts)
    assert onnx_v.shape == torch_v.shape == (len(texts), 384)
    np.testing.assert_allclose(np.linalg.norm(onnx_v, axis=1), 1.0, atol=1e-5)
    cos = _cos(onnx_v, torch_v)
    assert cos.min() >= FP32_MIN_COS, cos
    if long_text == "mean":  # windows really were used: the long passages span several
        assert max(onnx_e.windows_per_text(t) for t in texts) >= 3


def test_onnx_int8_vectors_close_to_torch(make_cfg, texts):
    torch_v = _embedder(make_cfg).embed(texts)
    int8 = _embedder(make_cfg, **{"embed.runtime": "onnx-int8"})
    cos = _cos(int8.embed(texts), torch_v)
    from rag.models.embed_onnx import QUANT_FILE

    assert int8.graph_path.name == QUANT_FILE
    assert cos.min() >= INT8_MIN_COS and cos.mean() >= INT8_MEAN_COS, cos


def test_onnx_tokenizer_is_the_torch_one(make_cfg, texts):
    t = _embedder(make_cfg).tokenizer
    o = _embedder(make_cfg, **{"embed.runtime": "onnx"}).tokenizer
    for s in texts[:8]:
        assert t(s)["input_ids"] == o(s)["input_ids"]


def test_export_is_reused_and_keyed_by_the_weights(make_cfg, tmp_path):
    from rag.models.embed_local import _local_source
    from rag.models.embed_onnx import ensure_export, export_dir, weights_hash

    cfg = make_cfg()
    folder, graph = ensure_export(cfg.embed.model, cfg.path("models_dir"), cfg.embed.max_input_tokens)
    meta = json.loads((folder / "export.json").read_text())
    assert graph.is_file() and meta["max_seq_length"] == 256
    before = graph.stat().st_mtime_ns
    assert ensure_export(cfg.embed.model, cfg.path("models_dir"), cfg.embed.max_input_tokens)[1] == graph
    assert graph.stat().st_mtime_ns == before  # present: not exported again
    assert not list(folder.glob(".*.tmp")) and not [p for p in folder.iterdir() if p.name.startswith("tmp")]
    src = _local_source(cfg.embed.model, False)
    assert folder == export_dir(cfg.path("models_dir"), cfg.embed.model, __import__("pathlib").Path(src))
    # Other weights -> another folder name.
    fake = tmp_path / "m"
    fake.mkdir()
    (fake / "model.safetensors").write_bytes(b"one")
    h1 = weights_hash(fake)
    (fake / "model.safetensors").write_bytes(b"two")
    assert weights_hash(fake) != h1


def test_runtime_is_in_keys_only_when_not_torch(make_cfg):
    torch_cfg = make_cfg()
    onnx_cfg = make_cfg(overrides={"embed.runtime": "onnx"})
    assert "runtime" not in deps.config_signature(torch_cfg, "04_index")["embed"]  # old indexes stay current
    assert deps.config_signature(onnx_cfg, "04_index")["embed"]["runtime"] == "onnx"
    # threads: speed only, in no key
    assert deps.config_signature(make_cfg(overrides={"embed.runtime": "onnx", "embed.threads": 1}), "04_index") \
        == deps.config_signature(onnx_cfg, "04_index")
    from rag.models.embed_local import LocalEmbedder
    from rag.models.embed_onnx import OnnxEmbedder

    keys = {LocalEmbedder("m", 8, 256, None)._key("x"), OnnxEmbedder("m", 8, 256, None)._key("x"),
            OnnxEmbedder("m", 8, 256, None, runtime="onnx-int8")._key("x")}
    assert len(keys) == 3


def test_runtime_needs_the_local_backend(make_cfg):
    with pytest.raises(ValueError, match="embed.runtime"):
        make_cfg(overrides={"embed.runtime": "onnx", "embed.backend": "openai"})


def test_stage04_with_the_onnx_runtime(make_cfg, tmp_path):
    """run_index with embed.runtime=onnx: retrieval finds the page, the meta names the runtime, and a torch
    config refuses the onnx index (vectors of different runtimes never mix)."""
    stored = {"index.chunk_vectors": "stored", "retrieve.dense_pool": 0}  # 04 embeds every chunk
    cfg = make_cfg(overrides={"chunk.sizes": [120], "embed.runtime": "onnx", **stored})
    ds = setup(cfg, tmp_path, [make_report(A, "Acme", known_page=4, pages=4)])
    run_chunk(cfg, ds, progress=False)
    df = run_index(cfg, ds, progress=False)
    assert (df["dim"] == 384).all()
    ix = load_report_index(cfg, A, 120)
    assert ix.meta["embed"]["runtime"] == "onnx"
    hits = ix.dense(embed_query(cfg, "How many megawatts did the Zephyr turbines add in Patagonia?"), 3)
    assert ix.chunks[hits[0][0]].page == 4
    torch_cfg = make_cfg(overrides={"chunk.sizes": [120], **stored})
    with pytest.raises(IndexMismatch):
        load_report_index(torch_cfg, A, 120)


def test_threads_default_to_the_cores_of_this_process():
    from rag.models.embed_local import default_threads
    from rag.models.embed_onnx import OnnxEmbedder

    assert default_threads() == len(os.sched_getaffinity(0))
    assert OnnxEmbedder("m", 8, 256, None).threads == default_threads()
    assert OnnxEmbedder("m", 8, 256, None, threads=1).threads == 1


def test_torch_embedder_computes_with_its_own_thread_count(texts):
    """The torch embedder runs every model call at ``threads`` (default: this process's cores), whatever torch's
    process-wide count is (a Ray worker starts torch at OMP_NUM_THREADS=1), and restores that count after. On an
    AVX-512 CPU torch's vectors differ in the last bit between 1 and 2 threads, so a worker and the driver would
    otherwise write different 05 records (tests/test_ray.py); here: the same vectors from either starting count."""
    import torch

    from rag.models.embed_local import LocalEmbedder, default_threads

    assert LocalEmbedder("all-MiniLM-L6-v2", 8, 256, None).threads == default_threads()
    emb = LocalEmbedder("all-MiniLM-L6-v2", 8, 256, None, threads=2)
    model = emb._load()
    seen = []
    encode = model.encode

    def spy(*a, **kw):
        seen.append(torch.get_num_threads())
        return encode(*a, **kw)

    model.encode = spy
    before = torch.get_num_threads()
    try:
        out = {}
        for start in (1, 2):
            torch.set_num_threads(start)
            out[start] = emb.embed(texts[:6], each=True)
            assert torch.get_num_threads() == start  # restored
    finally:
        torch.set_num_threads(before)
    assert set(seen) == {2}
    assert np.array_equal(out[1], out[2])
