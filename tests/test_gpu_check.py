"""`rag check --gpu` on a machine without a GPU (the CPU path: real embedder, missing parts one line each),
and `make gpu-dry-run`'s resolution of the GPU installs (needs PyPI: skipped without it)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from rag import cli
from rag.models import device as dev
from rag import gpu_check, gpu_compare
from rag.models import gpu_deps


def _no_gpu_parts(tmp_path: Path) -> list[str]:
    return ["--set", f"parse.artifacts_path={tmp_path / 'no-weights'}", "--set", f"llm.vllm.command={tmp_path / 'no-vllm'}"]


def test_sample_chunks_are_distinct_page_sized_and_repeatable():
    a = gpu_compare.sample_chunks(300)
    assert len(set(a)) == 300 and a == gpu_compare.sample_chunks(300)
    assert all(len(t) >= gpu_compare.CHUNK_CHARS for t in a)


@pytest.mark.slow
def test_gpu_check_without_a_gpu_measures_the_cpu_and_names_what_is_missing(tmp_path, capsys):
    """This machine: CPU torch, no docling weights, no vLLM; a cross-encoder folder made from the packaged
    MiniLM (fresh head) is configured, so its CPU row is measured too. Exit 2 = no GPU; table + JSON."""
    from sentence_transformers import CrossEncoder

    from rag.models.weights import embedding_model_path

    ce = tmp_path / "ce"
    CrossEncoder(str(embedding_model_path("all-MiniLM-L6-v2")), num_labels=1, device="cpu").save(str(ce))
    out = tmp_path / "gpu-check.json"
    code = cli.main(["check", "--gpu", "--cpu-chunks", "24", "--cpu-seconds", "0", "--pairs", "24", "--out", str(out),
                     "--set", f'rerank.cross_encoder_models=["{ce}"]', *_no_gpu_parts(tmp_path)])
    printed = capsys.readouterr().out
    assert code == 2 and "NO GPU: torch sees none" in printed and str(out) in printed
    data = json.loads(out.read_text())
    rows = {r["part"]: r for r in data["rows"]}
    assert data["gpu"] is False and data["exit_code"] == 2
    for mode in ("truncate", "mean"):
        r = rows[f"embed {mode} cpu"]
        assert r["status"] == "ok" and r["numbers"]["chunks"] == 24 and r["numbers"]["chunks_per_s"] > 0
    assert rows["embed cuda vs cpu"]["status"] == "missing"
    assert rows["cross-encoder cpu"]["status"] == "ok" and rows["cross-encoder cpu"]["numbers"]["pairs"] == 24
    assert rows["docling full pipeline"]["status"] == "missing" and "make gpu-weights" in rows["docling full pipeline"]["result"]
    assert rows["vllm"]["status"] == "missing" and "make gpu" in rows["vllm"]["result"]
    assert all("\n" not in r["result"] for r in data["rows"])  # one line each
    table = [ln for ln in printed.splitlines() if ln.startswith(("gpu ", "embed ", "cross-encoder", "docling", "vllm"))]
    assert len(table) == len([r for r in data["rows"] if r["part"] != "versions"])


class _WindowCrash:
    """An embedder whose long_text=mean path raises as issue 32's did on CUDA."""

    long_text = "truncate"

    def embed(self, texts):
        if self.long_text == "mean":
            raise RuntimeError("Expected all tensors to be on the same device, but got index is on cpu, "
                               "different from other tensors on cuda:0\n(when checking argument in method ...)")
        return np.full((len(texts), 4), 0.5, dtype=np.float32)

    def windows_per_text(self, text):
        return 1


def test_a_part_that_fails_is_one_failed_row_and_exit_1(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(gpu_compare, "_local_embedder", lambda cfg, d: _WindowCrash())
    monkeypatch.setattr(dev, "cuda_available", lambda: False)
    out = tmp_path / "g.json"
    code = gpu_check.main(["--cpu-chunks", "4", "--cpu-seconds", "0", "--out", str(out), *_no_gpu_parts(tmp_path)])
    rows = {r["part"]: r for r in json.loads(out.read_text())["rows"]}
    assert code == 1 and rows["embed truncate cpu"]["status"] == "ok"
    assert rows["embed mean cpu"]["status"] == "FAILED"
    assert rows["embed mean cpu"]["result"].startswith("RuntimeError: Expected all tensors to be on the same device")
    assert "cross-encoder" in rows and "rerank.cross_encoder_models" in rows["cross-encoder"]["result"]
    assert "FAILED" in capsys.readouterr().out


def test_gpu_vs_cpu_comparison():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(20, 8)).astype(np.float32)
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    assert gpu_compare.compare(a, a.copy()) == {"min_cosine": 1.0, "nn_identical": 20, "n": 20}
    b = a.copy()
    b[3] = -b[3]
    c = gpu_compare.compare(a, b)
    assert c["min_cosine"] == -1.0 and c["nn_identical"] < 20


# ---- make gpu-dry-run -------------------------------------------------------------------------------
def test_gpu_pins_are_read_from_pyproject():
    p = gpu_deps.pins(Path(__file__).resolve().parents[1] / "pyproject.toml")
    assert {"torch", "torchvision", "vllm"} <= set(p) and all(p[k].count(".") >= 1 for k in ("torch", "torchvision", "vllm"))


def test_an_unreachable_index_is_one_line_and_exit_2(capsys):
    assert gpu_deps.main(["--index", "https://pypi.invalid/simple"]) == 2
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("https://pypi.invalid/simple: unreachable (")


def _index_reachable() -> bool:
    # Opt-in: the resolution downloads whole wheels where an index serves no metadata (11 min here).
    return os.environ.get("RAG_NETWORK_TESTS") == "1" and not gpu_deps.unreachable(gpu_deps.DEFAULT_INDEX)


@pytest.mark.slow
@pytest.mark.skipif(not _index_reachable(),
                    reason="set RAG_NETWORK_TESTS=1 with the package index reachable (make gpu-dry-run needs it)")
def test_gpu_installs_resolve_and_a_pin_conflict_shows(capsys):
    """The [gpu] extra's torch + torchvision pair resolves (from the PyTorch index, or PyPI when it is not
    reachable); a torchvision of another torch does not. The project and vLLM resolutions (~200 packages
    each, many minutes) run in `make gpu-dry-run`."""
    assert gpu_deps.main(["--only", "torch"]) == 0, capsys.readouterr().out
    ok, line = gpu_deps.resolve("mismatch", ["torch==2.13.0", "torchvision==0.29.0"], gpu_deps.DEFAULT_INDEX)
    assert not ok and line.startswith("mismatch: FAILED"), line
