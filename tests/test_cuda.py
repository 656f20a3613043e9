"""Tests that run where CUDA is: `pytest -m cuda` on a GPU box (after `make gpu`). Every test here is skipped
when torch sees no GPU (this project's CPU machines): what they check is the GPU side of what the CPU suite
checks with CUDA absent or faked (tests/test_device.py)."""
from __future__ import annotations

import pytest

from rag.models import device as dev

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not dev.cuda_available(), reason="torch sees no GPU (run on a CUDA box: pytest -m cuda)")]

# A model's vectors on the GPU vs the CPU: float32 kernels differ in summation order only.
MIN_COSINE = 0.999


def _texts():
    from rag.gpu_compare import sample_chunks

    return sample_chunks(48) + sample_chunks(4, 4000)  # page-sized chunks and a few longer than 256 wordpieces


def test_auto_resolves_to_the_gpu_and_every_index_is_checked():
    assert dev.resolve_device("auto") == "cuda" and dev.model_device(None) in ("cuda", "cpu", "auto")
    assert dev.cuda_problem("cuda") == "" and dev.cuda_problem("cuda:0") == ""
    n = dev.cuda_device_count()
    assert n >= 1 and f"this machine has {n} CUDA device(s)" in dev.cuda_problem(f"cuda:{n}")
    assert dev.configure("auto") == "cuda"


@pytest.mark.parametrize("mode", ["truncate", "mean"])
def test_embedder_on_the_gpu_gives_the_cpu_vectors(mode):
    """Both long-text modes (issue 32: mean crashed on CUDA, 'index is on cpu'), vectors as on the CPU."""
    from rag.core.config import load_config
    from rag.gpu_compare import _local_embedder, compare

    cfg = load_config("gpu", overrides={"embed.cache": False, "embed.long_text": mode, "device": "cuda"})
    gpu, cpu = _local_embedder(cfg, "cuda"), _local_embedder(cfg, "cpu")
    assert gpu._load().device.type == "cuda" and cpu._load().device.type == "cpu"
    texts = _texts()
    if mode == "mean":
        assert any(gpu.windows_per_text(t) > 1 for t in texts)  # the window path really runs
    c = compare(gpu.embed(texts), cpu.embed(texts))
    assert c["min_cosine"] >= MIN_COSINE and c["nn_identical"] == len(texts), c


def test_cross_encoder_on_the_gpu_gives_the_cpu_scores(make_cfg, tmp_path):
    """A cross-encoder folder made here from the packaged MiniLM (no hub): same weights on both devices."""
    import numpy as np
    from sentence_transformers import CrossEncoder

    from rag.models import get_cross_encoder
    from rag.models.weights import embedding_model_path

    folder = tmp_path / "ce"
    CrossEncoder(str(embedding_model_path("all-MiniLM-L6-v2")), num_labels=1, device="cpu").save(str(folder))
    pairs = [("What was revenue?", t) for t in _texts()]
    scores = {}
    for d in ("cuda", "cpu"):
        ce = get_cross_encoder(make_cfg(overrides={"device": d}), str(folder))
        assert ce._model.device.type == d
        scores[d] = ce.score(pairs)
    assert np.max(np.abs(scores["cuda"] - scores["cpu"])) < 1e-2


def test_docling_gets_the_gpu(make_cfg):
    """docling's accelerator resolves the run's device to CUDA; with its weights present, pages parse there."""
    pytest.importorskip("docling", reason="docling is not installed here (`make gpu` installs it)")
    from docling.datamodel.accelerator_options import AcceleratorOptions
    from docling.utils.accelerator_utils import decide_device

    cfg = make_cfg(preset="gpu", overrides={"device": "auto"})
    assert dev.parse_device(cfg) == "cuda"
    assert decide_device(AcceleratorOptions(device=dev.parse_device(cfg)).device).startswith("cuda")


def test_docling_full_pipeline_parses_on_the_gpu(make_cfg, request):
    from pathlib import Path

    pytest.importorskip("docling", reason="docling is not installed here (`make gpu` installs it)")

    from rag.parse import artifacts_dir
    from rag.parse.docling_pages import WINDOWS
    from rag.preflight import parse_problems

    cfg = make_cfg(preset="gpu")
    found = parse_problems(cfg)
    if found:
        pytest.skip("; ".join(found) + " (`make gpu`, `make gpu-weights`)")
    pcfg = cfg.parse.model_copy(update={"device": "cuda", "artifacts_path": str(artifacts_dir(cfg.parse))})
    pdf = sorted(Path(request.getfixturevalue("demo_dir")).rglob("*.pdf"))[0]  # made only when docling can run
    pages = WINDOWS["standard"](pdf, 1, 2, pcfg)
    assert [p.page for p in pages] == [1, 2] and any(p.blocks for p in pages)


def test_llama_cpp_puts_its_layers_on_the_gpu(make_cfg):
    from rag.models.llama_server import LlamaServer

    cfg = make_cfg(overrides={"device": "auto", "llm.n_gpu_layers": -1})
    assert dev.n_gpu_layers(cfg) == -1
    cmd = LlamaServer("x.gguf", "x", 512, 1, 10, n_gpu_layers=dev.n_gpu_layers(cfg)).command()
    assert cmd[cmd.index("--n_gpu_layers") + 1] == "-1"
    llama_cpp = pytest.importorskip("llama_cpp")
    if not llama_cpp.llama_supports_gpu_offload():
        pytest.skip("this llama-cpp-python wheel is a CPU build (make setup builds it so): n_gpu_layers has no "
                    "effect; the gpu preset answers with vLLM")
