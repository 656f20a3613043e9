"""embed.precision (issue 29): which dtype "auto" picks on which machine, the keys that keep bfloat16 vectors
apart, and the packaged MiniLM really run in bfloat16 (close to float32, a text's vector independent of the
texts beside it)."""
from __future__ import annotations

import numpy as np
import pytest

from rag.core import deps
from rag.models import device as dev

AMX = frozenset({"avx2", "avx512f", "avx512_bf16", "amx_tile", "amx_bf16", "amx_int8"})
NO_AMX = frozenset({"avx2", "avx512f", "avx512_bf16"})
# bfloat16 keeps 8 bits of mantissa: MiniLM's vectors of real report text sit at cosine >= 0.9999 to float32's
# on the 2-core Xeon (AMX); the bound leaves room for other kernels (AVX512-BF16, CUDA).
BF16_MIN_COS = 0.999


@pytest.fixture
def flags(monkeypatch):
    """Set this CPU's flags for ``amx_bf16`` (and no oneDNN cap unless a test sets one)."""
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    monkeypatch.delenv("DNNL_MAX_CPU_ISA", raising=False)

    def set_flags(f):
        monkeypatch.setattr(dev, "cpu_flags", lambda: f)
    return set_flags


def _no_device():
    raise AssertionError("the device was asked for although the CPU alone decides")


def test_explicit_precision_is_kept(flags):
    flags(NO_AMX)
    assert dev.embed_precision("bfloat16", "cpu") == "bfloat16"
    assert dev.embed_precision("float32", _no_device) == "float32"
    with pytest.raises(ValueError, match="embed.precision"):
        dev.embed_precision("fp16", "cpu")


def test_auto_is_bfloat16_only_on_a_cpu_with_amx(flags, monkeypatch):
    flags(NO_AMX)  # AVX512-BF16 without AMX: bfloat16 is slower than float32 there
    assert dev.embed_precision("auto", _no_device) == "float32"  # never imports torch to ask the device
    flags(AMX)
    assert dev.embed_precision("auto", "cpu") == "bfloat16"
    assert dev.embed_precision("auto", lambda: "cpu") == "bfloat16"
    assert dev.embed_precision("auto", "cuda:0") == "float32"  # the GPU path stays as it was
    for cap, want in (("AVX512_CORE_BF16", "float32"), ("AVX2", "float32"), ("AVX512_CORE_AMX", "bfloat16"),
                      ("ALL", "bfloat16")):
        monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", cap)  # oneDNN capped below AMX: no AMX kernels
        assert dev.embed_precision("auto", "cpu") == want, cap
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA")
    monkeypatch.setenv("DNNL_MAX_CPU_ISA", "AVX2")  # oneDNN's older name caps it too
    assert dev.embed_precision("auto", "cpu") == "float32"
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "ALL")  # and the newer one wins, as in oneDNN
    assert dev.embed_precision("auto", "cpu") == "bfloat16"


def test_cpu_flags_are_read_from_proc_cpuinfo():
    from pathlib import Path

    if not Path("/proc/cpuinfo").exists():
        pytest.skip("no /proc/cpuinfo (not Linux)")
    f = dev.cpu_flags()
    assert isinstance(f, frozenset) and ("fpu" in f or "sse2" in f or "fp" in f or "asimd" in f or not f)


def test_config_checks_and_keys(make_cfg):
    with pytest.raises(ValueError, match="precision=bfloat16"):
        make_cfg(overrides={"embed.precision": "bfloat16", "embed.runtime": "onnx"})
    with pytest.raises(ValueError, match="precision=bfloat16"):
        make_cfg(overrides={"embed.precision": "bfloat16", "embed.backend": "openai"})
    auto = make_cfg()
    assert auto.embed.precision == "auto"
    # 04 owns the embed section (05's keys hash 04's): auto is out of keys (old runs stay current; the machine
    # decides, as with the llama.cpp build), set by hand it counts.
    assert "precision" not in deps.config_signature(auto, "04_index")["embed"]
    for p in ("float32", "bfloat16"):
        assert deps.config_signature(make_cfg(overrides={"embed.precision": p}), "04_index")["embed"]["precision"] == p
    from rag.index.reader import embed_config

    assert "precision" not in embed_config(auto)
    assert embed_config(make_cfg(overrides={"embed.precision": "bfloat16"}))["precision"] == "bfloat16"


def test_bfloat16_vectors_are_cached_apart(flags, monkeypatch):
    from rag.models.embed_local import LocalEmbedder

    flags(AMX)
    fp32 = LocalEmbedder("m", 8, 256, None)  # the constructor's default: float32, the keys of before
    assert fp32.precision == "float32" and fp32.key_extra == ()
    bf16 = LocalEmbedder("m", 8, 256, None, precision="bfloat16")
    assert bf16.key_extra == ("precision", "bfloat16")
    assert fp32._key("x") != bf16._key("x")
    monkeypatch.setattr(dev, "_SETTING", "cpu")  # auto on a CPU with AMX, the model on the CPU: bfloat16 keys
    auto = LocalEmbedder("m", 8, 256, None, precision="auto")
    assert auto.precision == "bfloat16" and auto._key("x") == bf16._key("x")
    monkeypatch.setattr(dev, "_SETTING", "cuda")  # on the GPU: float32 as before
    assert LocalEmbedder("m", 8, 256, None, precision="auto")._key("x") == fp32._key("x")
    flags(NO_AMX)
    assert LocalEmbedder("m", 8, 256, None, precision="auto")._key("x") == fp32._key("x")


def _texts() -> list[str]:
    base = ("Revenue for the year ended 31 December 2022 was EUR 4,512 million, an increase of 12% over 2021. "
            "Operating profit rose to EUR 611 million. The Board proposes a dividend of EUR 0.85 per share. ")
    return [base[: 40 + 37 * i] * (1 + i % 4) for i in range(12)] + ["Net cash from operating activities"]


def test_packaged_model_in_bfloat16_is_close_to_float32_and_per_text(make_cfg):
    """The real packaged MiniLM in both dtypes (bfloat16 runs on any CPU; it is only fast with AMX)."""
    from rag.models import get_embedder

    fp32 = get_embedder(make_cfg(overrides={"embed.cache": False, "embed.precision": "float32"}))
    bf16 = get_embedder(make_cfg(overrides={"embed.cache": False, "embed.precision": "bfloat16"}))
    texts = _texts()
    a, b = fp32.embed(texts), bf16.embed(texts)
    assert b.dtype == np.float32 and b.shape == a.shape == (len(texts), 384)
    np.testing.assert_allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    import torch

    assert bf16.precision == "bfloat16" and next(bf16._load().parameters()).dtype == torch.bfloat16
    cos = (a * b).sum(1)
    assert cos.min() >= BF16_MIN_COS, cos
    assert cos.min() < 1.0  # really another dtype (not the float32 model under another name)
    # One text per call (stage 05's pools): a text's vector does not depend on its companions, bit for bit.
    alone = bf16.embed(texts[3:4], each=True)
    among = bf16.embed(texts[:6], each=True)
    assert np.array_equal(alone[0], among[3])
