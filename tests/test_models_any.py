"""Any model (issue 17 item 3): a GGUF by path, an embedding model by folder / hub name / OpenAI-compatible
``base_url``, long text embedded as the mean of windows, ``rag check --set``; and the index keys of runs made
before these options existed stay current while the options keep their defaults."""
from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from rag.core import deps
from rag.core.artifacts import hash_key
from rag.core.config import ConfigError
from rag.models import ModelUnavailable, get_embedder, get_llm, weights
from rag.models import llama_server as ls
from rag.models import llm as llm_mod
from rag.models.embed import window_spans

STANDIN = Path(__file__).with_name("standin_llama.py")
SAY = [{"role": "user", "content": "Say OK."}]
LONG = " ".join(f"Segment {i} reported revenue of {i * 13.7:.1f} million and an operating margin of {i % 9}.{i % 7} "
                f"percent, driven by pricing in region {chr(65 + i % 26)}." for i in range(40))


# ---- GGUF by path ------------------------------------------------------------------------------------
@pytest.fixture
def fake_gguf(tmp_path):
    """A GGUF-named file with spaces and brackets in its name (only the stand-in server reads it)."""
    p = tmp_path / "my models" / "My Model (q4).gguf"
    p.parent.mkdir()
    p.write_bytes(b"GGUF" + bytes(60))
    return p


@pytest.fixture
def standin(monkeypatch):
    """Every LlamaServer started from now on runs tests/standin_llama.py (answers "OK") under its alias."""
    monkeypatch.setattr(ls.LlamaServer, "command",
                        lambda self: [sys.executable, str(STANDIN), str(self.port), "ok", "0", self.alias])
    monkeypatch.setattr(ls, "_SERVERS", {})
    monkeypatch.setattr(llm_mod, "_REGISTRY", {})
    yield
    for server in list(ls._SERVERS.values()):
        server.stop()


def test_gguf_by_path_resolves_with_a_safe_stable_name(fake_gguf, make_cfg, monkeypatch):
    size = fake_gguf.stat().st_size
    cfg = make_cfg(overrides={"llm.gguf": str(fake_gguf)})
    models = cfg.path("models_dir")
    assert weights.is_gguf_file(cfg.llm.gguf) and not weights.is_gguf_file("qwen2.5-coder-0.5b")
    assert weights.gguf_path(cfg.llm.gguf, models) == fake_gguf.resolve()
    assert weights.gguf_alias(cfg.llm.gguf) == "My_Model__q4"
    assert weights.gguf_cache_id(cfg.llm.gguf, models) == f"My_Model__q4@{size}"  # an unknown file: + its size
    monkeypatch.chdir(fake_gguf.parent.parent)  # relative to the working directory: the same name and id
    rel = make_cfg(overrides={"llm.gguf": "my models/My Model (q4).gguf"})
    assert weights.gguf_path(rel.llm.gguf, models) == fake_gguf.resolve()
    assert weights.gguf_cache_id(rel.llm.gguf, models) == weights.gguf_cache_id(cfg.llm.gguf, models)
    # A key of the weights table is unchanged: same server name and cache id as before paths were allowed.
    assert weights.gguf_alias("qwen2.5-coder-0.5b") == weights.gguf_cache_id("qwen2.5-coder-0.5b") == "qwen2.5-coder-0.5b"


def test_known_gguf_by_path_shares_the_key_name(make_cfg):
    cfg = make_cfg()
    path = weights.gguf_path("qwen2.5-coder-0.5b", cfg.path("models_dir"))
    if not weights.gguf_present("qwen2.5-coder-0.5b", cfg.path("models_dir")):
        pytest.skip("qwen2.5-coder-0.5b.gguf absent: run `make models-test`")
    by_path = make_cfg(overrides={"llm.gguf": str(path)})
    assert weights.gguf_cache_id(by_path.llm.gguf, cfg.path("models_dir")) == "qwen2.5-coder-0.5b"


def test_missing_gguf_file_is_a_config_error(make_cfg):
    with pytest.raises(ConfigError, match=r"'llm.gguf'.*no such file \(looked at"):
        make_cfg(overrides={"llm.gguf": "no/such/model.gguf"})
    make_cfg(overrides={"llm.gguf": "model-a"})  # a table name is checked when used (`make models`), not here
    make_cfg(overrides={"llm.gguf": "no/such/model.gguf", "llm.backend": "openai"})  # not read by openai


def test_gguf_by_path_runs_through_the_config(fake_gguf, make_cfg, standin):
    cfg = make_cfg(overrides={"llm.gguf": str(fake_gguf), "llm.retry_base_s": 0.05})
    llm = get_llm(cfg)
    assert llm.model == "My_Model__q4"
    r = llm.complete(SAY)
    assert r.raw == "OK" and not r.usage.cached
    assert llm.server.gguf_path == fake_gguf.resolve() and llm.server.alias == "My_Model__q4"
    assert llm.server._log_path.name.startswith("llama-My_Model__q4-")  # one file name, no path parts
    assert llm.server._ready()  # /v1/models lists the alias the client sends as its model
    assert llm.complete(SAY).usage.cached


def test_check_command_takes_set_overrides(fake_gguf, standin, capsys):
    from rag.models.__main__ import main

    assert main(["--check", "--setup", "--preset", "test", "--set", f"llm.gguf={fake_gguf}"]) == 0
    out = capsys.readouterr().out
    assert "My_Model__q4" in out and str(fake_gguf.resolve()) in out and "answered 'OK'" in out
    with pytest.raises(ConfigError, match="no such file"):
        main(["--check", "--preset", "test", "--set", "llm.gguf=data/models/absent.gguf"])


# ---- embeddings: folder, hub name, long text -------------------------------------------------------
def test_embed_model_folder_path_loads_like_the_packaged_model(make_cfg):
    folder = weights.embedding_model_path("all-MiniLM-L6-v2")  # the MiniLM folder inside site-packages
    texts = ["Revenue grew to USD 412.5 million.", "The board appointed a new CFO."]
    by_folder = get_embedder(make_cfg(overrides={"embed.model": str(folder), "embed.cache": False}))
    packaged = get_embedder(make_cfg(overrides={"embed.cache": False}))
    v = by_folder.embed(texts)
    assert v.shape == (2, 384) and by_folder.model_name == str(folder)
    assert np.allclose(v, packaged.embed(texts), atol=1e-5)


def test_unknown_embed_model_names_the_hub_option(make_cfg, tmp_path):
    emb = get_embedder(make_cfg(overrides={"embed.model": "sentence-transformers/all-mpnet-base-v2"}))
    with pytest.raises(ModelUnavailable, match=r"embed.hub=true"):
        emb.embed(["x"])
    # With embed.hub the name goes to sentence-transformers; offline (the suite never reaches a hub) it fails clearly.
    hub = get_embedder(make_cfg(overrides={"embed.model": "rag-test/no-such-model-xyz", "embed.hub": True}))
    with pytest.raises(ModelUnavailable, match=r"could not load 'rag-test/no-such-model-xyz'"):
        hub.embed(["x"])


def test_window_spans_cover_the_text_with_overlap():
    assert window_spans(10, 254, 32) == [(0, 10)]
    spans = window_spans(600, 254, 32)
    assert spans[0] == (0, 254) and spans[-1] == (346, 600) and all(b - a == 254 for a, b in spans)
    assert all(spans[i + 1][0] <= spans[i][1] - 32 for i in range(len(spans) - 1))


def test_long_text_mean_is_normalized_and_differs_from_truncate(make_cfg):
    trunc = get_embedder(make_cfg(overrides={"embed.cache": False}))
    mean = get_embedder(make_cfg(overrides={"embed.long_text": "mean"}))
    short = "Revenue grew to USD 412.5 million in 2023."
    assert mean.windows_per_text(LONG) >= 3 and mean.windows_per_text(short) == 1
    vt, vm = trunc.embed([short, LONG]), mean.embed([short, LONG])
    assert np.allclose(np.linalg.norm(vm, axis=1), 1, atol=1e-5)
    assert np.allclose(vt[0], vm[0], atol=1e-5)  # text that fits: one window = the truncate vector
    assert float(vt[1] @ vm[1]) < 0.999  # the tail now counts
    # The mean vector is the renormalized mean of the windows' own vectors.
    windows = mean._windows(LONG)
    parts = trunc.embed([mean.tokenizer.decode(w, skip_special_tokens=True) for w in windows])
    ref = parts.mean(axis=0) / np.linalg.norm(parts.mean(axis=0))
    assert float(ref @ vm[1]) > 0.99
    assert mean._key(LONG) != trunc._key(LONG)  # cached apart
    again = mean.embed([LONG])
    assert mean.meter.snapshot()["cache_hits"] == 1 and np.array_equal(again[0], vm[1])


def test_defaults_keep_the_old_index_key_and_meta(make_cfg):
    from rag.index import CODE_VERSION, embed_config, index_key

    # Every chunk vector stored (how every index was built before index.chunk_vectors existed): its key is as
    # before; the offline default (vectors on demand) adds the index section.
    cfg = make_cfg(overrides={"index.chunk_vectors": "stored", "retrieve.dense_pool": 0})
    assert deps.config_signature(make_cfg(), "04_index")["index"] == {"chunk_vectors": "on_demand"}
    # The embed section as index keys and metas hashed it before hub/base_url/long_text existed.
    old_section = {"backend": "local", "model": "all-MiniLM-L6-v2", "batch_size": 64, "max_input_tokens": 256,
                   "api_key_env": "OPENAI_API_KEY", "cache": True}
    assert deps.config_signature(cfg, "04_index") == {"embed": old_section}
    assert index_key(cfg, "k03") == hash_key("k03", {"embed": old_section}, CODE_VERSION)
    assert embed_config(cfg) == {"backend": "local", "model": "all-MiniLM-L6-v2", "max_input_tokens": 256}
    mean = make_cfg(overrides={"embed.long_text": "mean", "index.chunk_vectors": "stored", "retrieve.dense_pool": 0})
    assert index_key(mean, "k03") != index_key(cfg, "k03")
    assert embed_config(mean)["long_text"] == "mean" and embed_config(mean)["long_text_overlap"] == 32
    assert index_key(make_cfg(overrides={"embed.hub": True, "index.chunk_vectors": "stored", "retrieve.dense_pool": 0}),
                     "k03") != index_key(cfg, "k03")
    # Where an embedding server runs is not part of any key (the model name says what it computes).
    a = make_cfg(overrides={"embed.backend": "openai", "embed.base_url": "http://127.0.0.1:1/v1"})
    b = make_cfg(overrides={"embed.backend": "openai", "embed.base_url": "http://127.0.0.1:2/v1"})
    assert index_key(a, "k03") == index_key(b, "k03") and "base_url" not in embed_config(a)


def test_embed_config_checks(make_cfg):
    with pytest.raises(ConfigError, match="embed.backend=openai"):
        make_cfg(overrides={"embed.base_url": "http://127.0.0.1:11434/v1"})
    with pytest.raises(ConfigError, match="long_text_overlap"):
        make_cfg(overrides={"embed.long_text": "mean", "embed.long_text_overlap": 200})


# ---- /v1/embeddings of an OpenAI-compatible server -----------------------------------------------------
class EmbeddingServer:
    """A stand-in ``/v1/embeddings`` (Ollama / vLLM / llama.cpp style) on 127.0.0.1: vector = (len, 1, 0)."""

    def __init__(self):
        self.bodies: list[dict] = []
        self.auth: list[str | None] = []
        srv = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                srv.bodies.append(body)
                srv.auth.append(self.headers.get("Authorization"))
                if not self.path.endswith("/v1/embeddings"):
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                data = [{"object": "embedding", "index": i, "embedding": [float(len(t)), 1.0, 0.0]}
                        for i, t in enumerate(body["input"])]
                self._send(200, {"object": "list", "data": data, "model": body["model"],
                                 "usage": {"prompt_tokens": len(data), "total_tokens": len(data)}})

            def _send(self, status, payload):
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def embed_server():
    s = EmbeddingServer()
    yield s
    s.close()


def test_base_url_embeddings_need_no_api_key(embed_server, make_cfg, monkeypatch):
    monkeypatch.delenv("RAG_TEST_NO_KEY", raising=False)
    cfg = make_cfg(overrides={"embed.backend": "openai", "embed.base_url": embed_server.base_url,
                              "embed.model": "nomic-embed-text", "embed.api_key_env": "RAG_TEST_NO_KEY",
                              "embed.max_input_tokens": 512})
    emb = get_embedder(cfg)
    v = emb.embed(["a", "bbbb", "a"])
    assert [b["model"] for b in embed_server.bodies] == ["nomic-embed-text"]
    assert embed_server.bodies[0]["input"] == ["a", "bbbb"] and embed_server.auth[0] == "Bearer not-needed"
    assert v.shape == (3, 3) and np.allclose(np.linalg.norm(v, axis=1), 1) and np.array_equal(v[0], v[2])
    assert emb.dim == 3 and emb.embed(["bbbb"]).shape == (1, 3) and len(embed_server.bodies) == 1  # cached
    # long_text=mean over HTTP: windows of max_input_tokens cl100k tokens, one vector per text.
    mean = get_embedder(make_cfg(overrides={"embed.backend": "openai", "embed.base_url": embed_server.base_url,
                                            "embed.model": "nomic-embed-text", "embed.api_key_env": "RAG_TEST_NO_KEY",
                                            "embed.max_input_tokens": 64, "embed.long_text": "mean",
                                            "embed.long_text_overlap": 8}))
    vm = mean.embed([LONG, "short"])
    sent = embed_server.bodies[-1]["input"]
    assert vm.shape == (2, 3) and len(sent) > 2 and sent[-1] == "short"
    assert np.allclose(np.linalg.norm(vm, axis=1), 1)


def test_openai_without_base_url_still_needs_a_key(make_cfg, monkeypatch):
    monkeypatch.delenv("RAG_TEST_NO_KEY", raising=False)
    emb = get_embedder(make_cfg(overrides={"embed.backend": "openai", "embed.model": "text-embedding-3-small",
                                           "embed.api_key_env": "RAG_TEST_NO_KEY"}))
    with pytest.raises(ModelUnavailable, match=r"RAG_TEST_NO_KEY.*embed.base_url"):
        emb.embed(["x"])


def test_unreachable_embedding_server_is_model_unavailable(make_cfg):
    emb = get_embedder(make_cfg(overrides={"embed.backend": "openai", "embed.base_url": "http://127.0.0.1:9/v1",
                                           "embed.model": "m", "embed.cache": False}))
    emb.cfg = make_cfg(overrides={"llm.max_retries": 0, "llm.timeout_s": 5})  # no retries against a closed port
    with pytest.raises(ModelUnavailable, match=r"127.0.0.1:9/v1"):
        emb.embed(["x"])


# ---- the real small model under another file name --------------------------------------------------------
@pytest.mark.slow
@pytest.mark.llm
def test_real_gguf_by_path_with_another_name(make_cfg, tmp_path, capsys):
    from rag.models.__main__ import main

    src = weights.gguf_path("qwen2.5-coder-0.5b", make_cfg().path("models_dir"))
    if not src.exists():
        pytest.skip("qwen2.5-coder-0.5b.gguf absent: run `make models-test`")
    pytest.importorskip("llama_cpp")
    link = tmp_path / "any name" / "Qwen 0.5B (copy).gguf"
    link.parent.mkdir()
    link.symlink_to(src)
    assert main(["--check", "--setup", "--preset", "test", "--set", f"llm.gguf={link}"]) == 0
    assert "Qwen_0.5B__copy" in capsys.readouterr().out
