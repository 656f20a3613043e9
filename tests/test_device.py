"""One device setting resolved once, and the GPU preset's setup check (no GPU here: CUDA is absent or faked)."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import rag.models.device as dev
from rag import preflight

ROOT = Path(__file__).resolve().parents[1]


def test_auto_resolves_to_cuda_only_when_torch_sees_a_gpu(monkeypatch):
    monkeypatch.setattr(dev, "cuda_available", lambda: False)
    assert dev.resolve_device("auto") == "cpu" and dev.resolve_device(None) == "cpu"
    monkeypatch.setattr(dev, "cuda_available", lambda: True)
    assert dev.resolve_device("auto") == "cuda" and dev.resolve_device("AUTO") == "cuda"
    assert dev.resolve_device("cpu") == "cpu" and dev.resolve_device("cuda:1") == "cuda:1"  # as given
    assert dev.is_cuda("cuda:1") and dev.cuda_index("cuda:1") == 1 and dev.cuda_index("cuda") is None
    assert not dev.is_cuda("cpu")


def test_llama_gpu_layers_and_server_pinning(make_cfg, monkeypatch):
    monkeypatch.setattr(dev, "cuda_available", lambda: False)
    assert dev.n_gpu_layers(make_cfg(overrides={"device": "auto", "llm.n_gpu_layers": -1})) == 0  # CPU: none
    assert dev.n_gpu_layers(make_cfg(overrides={"device": "cuda", "llm.n_gpu_layers": -1})) == -1
    assert dev.cuda_env("cuda:1", {"CUDA_VISIBLE_DEVICES": "2,3"}) == {"CUDA_VISIBLE_DEVICES": "3"}
    assert dev.cuda_env("cuda:0", {}) == {"CUDA_VISIBLE_DEVICES": "0"}
    assert dev.cuda_env("cuda", {}) == {} and dev.cuda_env("cpu", {}) == {}


def test_the_embedder_gets_the_configured_device(monkeypatch):
    monkeypatch.setattr(dev, "cuda_available", lambda: False)
    assert dev.configure("cpu") == "cpu" and dev.model_device() == "cpu"
    monkeypatch.setattr(dev, "cuda_available", lambda: True)
    assert dev.configure("auto") == "cuda" and dev.model_device() == "cuda"
    dev.configure("auto")


def test_cuda_problems_name_the_setting(monkeypatch):
    monkeypatch.setattr(dev, "cuda_available", lambda: False)
    msg = dev.cuda_problem("cuda", "device")
    assert msg.startswith("device='cuda' asks for CUDA but torch sees no GPU") and "make gpu" in msg
    assert dev.cuda_problem("cpu") == "" and dev.cuda_problem("auto") == ""
    monkeypatch.setattr(dev, "cuda_available", lambda: True)
    monkeypatch.setattr(dev, "cuda_device_count", lambda: 1)
    assert dev.cuda_problem("cuda:1", "parse.device") == \
        "parse.device='cuda:1': this machine has 1 CUDA device(s) (cuda:0..cuda:0)"
    assert dev.cuda_problem("cuda:0") == ""


def test_gpu_preset_problems_on_a_machine_without_gpu_parts(make_cfg, tmp_path):
    """This machine: no CUDA (CPU torch), no torchvision beside it, no docling weights, no vLLM venv."""
    cfg = make_cfg(preset="gpu", overrides={"parse.artifacts_path": str(tmp_path / "no-weights"),
                                            "llm.vllm.command": str(tmp_path / "no-vllm")})
    found = preflight.problems(cfg)
    text = " | ".join(found)
    assert "docling's layout + TableFormer weights are missing" in text
    assert "device='cuda' asks for CUDA" in text or "torch sees no GPU" in text
    assert "vllm" in text.lower()
    # Only what the stages asked for: 03_chunk needs neither docling nor vLLM.
    assert not any("TableFormer" in p or "vllm" in p.lower() for p in preflight.problems(cfg, ["03_chunk"]))
    with pytest.raises(preflight.SetupError) as e:
        preflight.check(cfg)
    assert "\n" not in str(e.value) and str(e.value).startswith("setup check failed (preset gpu)")
    assert "make gpu" in str(e.value)


@pytest.mark.slow
def test_gpu_preset_run_refuses_with_one_message(tmp_path, demo_dir):
    """`python -m rag.pipeline --preset gpu` stops before stage 01 with one line on stderr, exit 2, no
    traceback and no stage folder (it used to fail every report silently into report.json)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "rag.pipeline", "--preset", "gpu", "--data", str(demo_dir),
                        "--run", "gpucheck", "--direct", "--set", f"outputs_dir={tmp_path / 'out'}"],
                       capture_output=True, text=True, timeout=600, cwd=ROOT, env=env)
    assert r.returncode == 2, r.stderr[-2000:]
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "setup check failed (preset gpu)" in errors[0], r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "out" / "gpucheck" / "01_parse").exists()
    r2 = subprocess.run([sys.executable, "-m", "rag.preflight", "--preset", "gpu"], capture_output=True,
                        text=True, timeout=600, cwd=ROOT, env=env)
    assert r2.returncode == 2 and r2.stderr.startswith("error: setup check failed (preset gpu)")


def test_embedding_prefixes_by_model_family(make_cfg):
    from rag.index import embed_config
    from rag.models.embed import default_prefixes, prefixes

    assert default_prefixes("all-MiniLM-L6-v2") == ("", "")
    assert default_prefixes("intfloat/e5-large-v2") == ("query: ", "passage: ")
    assert default_prefixes("/models/multilingual-e5-base/") == ("query: ", "passage: ")
    assert default_prefixes("BAAI/bge-small-en-v1.5")[0].startswith("Represent this sentence")
    assert default_prefixes("BAAI/bge-m3") == ("", "")
    mini = make_cfg()
    assert prefixes(mini.embed) == ("", "") and "prefixes" not in embed_config(mini)  # old index keys kept
    e5 = make_cfg(overrides={"embed.model": "intfloat/e5-base-v2", "embed.hub": True})
    assert embed_config(e5)["prefixes"] == ["query: ", "passage: "]
    own = make_cfg(overrides={"embed.model": "intfloat/e5-base-v2", "embed.query_prefix": "q: "})
    assert prefixes(own.embed) == ("q: ", "passage: ")


def test_concurrency_never_changes_a_key(make_cfg):
    """llm.concurrency is speed only: pinned to 1 in signatures, so runs at 1 keep their keys and a run at
    16 is current for one made at 1 (the parallel records are the same: tests/test_answer, test_retrieve)."""
    from rag.core import deps

    one, many = make_cfg(overrides={"llm.concurrency": 1}), make_cfg(overrides={"llm.concurrency": 16})
    for stage in ("02_clean", "05_retrieve", "06_answer"):
        assert deps.config_signature(one, stage) == deps.config_signature(many, stage)
    assert deps.config_signature(many, "06_answer")["llm"]["concurrency"] == 1


def test_broken_torchvision_is_named_in_model_load_errors(tmp_path):
    """A torchvision that fails at import (PyPI's beside the pinned CPU torch: "operator torchvision::nms
    does not exist") makes transformers report only "Could not import module 'PreTrainedModel'"; the hint
    added to embedder / cross-encoder load errors names the real cause and the fix. A clean setup: no hint."""
    shadow = tmp_path / "shadow" / "torchvision"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text('raise RuntimeError("operator torchvision::nms does not exist")\n')
    code = "from rag.models.base import torchvision_hint; print(repr(torchvision_hint()))"

    def hint(pythonpath: str) -> str:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd=ROOT,
                           env={**os.environ, "PYTHONPATH": pythonpath})
        assert r.returncode == 0, r.stderr[-2000:]
        return r.stdout.strip()

    broken = hint(f"{tmp_path / 'shadow'}{os.pathsep}{ROOT}")
    assert "does not import beside this torch" in broken and "torchvision::nms" in broken
    assert "pip uninstall -y torchvision" in broken
    if importlib.util.find_spec("torchvision") is None:  # this project's setup removes the broken one
        assert hint(str(ROOT)) == "''"


# ---- every tensor a model is handed is on the model's device (issue 32) ---------------------------------
def _record_forward(model, out_key: str, width: int) -> list[tuple[str, str]]:
    """Replace ``model.forward`` (what encode / predict / the embedder's window path call) by a recorder of
    every tensor it is handed, (name, device type), answering zeros of the output's shape on the CPU.
    With the weights on torch's meta device, a tensor left on the CPU shows here as it crashed on CUDA
    ("index is on cpu, different from other tensors on cuda:0"); a meta model cannot run its own forward
    (BERT's ops call .item()), hence the stand-in output."""
    import torch

    seen: list[tuple[str, str]] = []

    def forward(features, **kwargs):
        seen.extend((k, v.device.type) for k, v in features.items() if torch.is_tensor(v))
        return {**features, out_key: torch.zeros(len(features["input_ids"]), width)}

    model.forward = forward
    return seen


@pytest.fixture(scope="module")
def meta_embedder():
    """The packaged MiniLM as a LocalEmbedder whose weights sit on torch's meta device (no GPU needed)."""
    from rag.models.embed_local import LocalEmbedder

    emb = LocalEmbedder("all-MiniLM-L6-v2", 4, 64, None, "truncate", 8)  # 64 wordpieces: long texts get windows
    emb._load().to("meta")
    return emb


@pytest.mark.parametrize("mode", ["truncate", "mean"])
def test_every_tensor_handed_to_the_embedder_is_on_its_device(meta_embedder, mode):
    """issue 32: long_text=mean padded window ids on the CPU and called forward on a CUDA model."""
    emb = meta_embedder
    emb.long_text = mode
    seen = _record_forward(emb._load(), "sentence_embedding", 384)
    texts = ["a short text", "a much longer text about revenue and growth " * 30]
    v = emb.embed(texts)
    assert v.shape == (2, 384)
    if mode == "mean":
        assert emb.windows_per_text(texts[1]) > 1
    assert {"input_ids", "attention_mask"} <= {k for k, _ in seen}
    assert all(d == "meta" for _, d in seen), f"tensors not on the model's device (meta): {sorted(set(seen))}"


def test_every_tensor_handed_to_the_cross_encoder_is_on_its_device(make_cfg, monkeypatch):
    """The project's cross-encoder path (get_cross_encoder -> predict) on a model whose weights are on meta."""
    from rag.models import cross
    from rag.models.weights import embedding_model_path

    monkeypatch.setattr(cross, "_REGISTRY", {})  # the meta model must not outlive this test
    monkeypatch.setattr(dev, "cuda_available", lambda: False)
    # The MiniLM folder as a cross-encoder (its classification head freshly initialized: scores unused here).
    ce = cross.get_cross_encoder(make_cfg(overrides={"device": "cpu"}), str(embedding_model_path("all-MiniLM-L6-v2")))
    ce._model.to("meta")
    seen = _record_forward(ce._model, "scores", 1)
    s = ce.score([("what was revenue?", "Revenue grew 8% to USD 412.5 million."), ("q", "p " * 400)])
    assert s.shape == (2,)
    assert "input_ids" in {k for k, _ in seen}
    assert all(d == "meta" for _, d in seen), f"tensors not on the model's device (meta): {sorted(set(seen))}"
