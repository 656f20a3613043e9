"""Where the local models run: one ``device`` setting ("auto" | "cpu" | "cuda" | "cuda:N"), resolved in one place.

Contract:
- ``resolve_device(setting) -> str``: "auto" -> "cuda" when ``torch.cuda.is_available()`` else "cpu"
  (torch missing or broken: "cpu"); "cpu", "cuda", "cuda:N" are kept as given (whether CUDA is really
  there is the setup check's question: :func:`cuda_problem`, run by :mod:`rag.preflight`). "cpu" never
  imports torch.
- ``run_device(cfg)``: the run's resolved ``cfg.device``; ``parse_device(cfg)``: docling's device
  (``cfg.parse.device`` when set to something other than "auto", else the run's); ``is_cuda(device)``.
- Models built without a config at hand (the sentence-transformers embedder, the OCR engine) read the
  process's setting: ``configure(cfg)`` sets it (``rag.pipeline.prepare`` and ``rag.models.get_embedder``
  call it), ``model_device()`` resolves it ("auto" until configured).
- ``n_gpu_layers(cfg)``: llama.cpp layers on the GPU, 0 unless the run's device is CUDA (then
  ``cfg.llm.n_gpu_layers``, -1 = all). ``cuda_env(device, env)``: ``CUDA_VISIBLE_DEVICES`` for a server
  process pinned to "cuda:N" (N counts the devices this process sees), {} otherwise.
- ``onnx_cuda_available()``: onnxruntime was installed with its CUDA provider (onnxruntime-gpu).
- ``embed_precision(setting, device)``: the local torch embedder's weights dtype. "float32" / "bfloat16" are
  kept as given; "auto" -> "bfloat16" only on a CPU whose bfloat16 matrix products run on AMX
  (:func:`amx_bf16`), where MiniLM embeds ~1.7x faster with vectors at cosine >= 0.9999 to float32's; else
  (CUDA, or a CPU without AMX, where bfloat16 is slower than float32) "float32".
"""
from __future__ import annotations

import os
import re
import threading
from typing import Callable

from ..core.artifacts import cpu_info, kernel_caps

_SETTING = "auto"
_LOCK = threading.Lock()
_CUDA = re.compile(r"^cuda(?::(\d+))?$")


def is_cuda(device: str) -> bool:
    return bool(_CUDA.match(device or ""))


def cuda_index(device: str) -> int | None:
    """N of "cuda:N" (None for plain "cuda" and for non-CUDA devices)."""
    m = _CUDA.match(device or "")
    return int(m.group(1)) if m and m.group(1) is not None else None


def cuda_available() -> bool:
    try:
        import torch
    except Exception:  # noqa: BLE001 - torch missing or broken: no CUDA for us
        return False
    try:
        return bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001
        return False


def cuda_device_count() -> int:
    try:
        import torch

        return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0
    except Exception:  # noqa: BLE001
        return 0


def resolve_device(setting: str | None) -> str:
    """"auto" (or None) -> "cuda" when torch sees a GPU, else "cpu"; any other setting is returned as given."""
    setting = (setting or "auto").strip().lower()
    if setting == "auto":
        return "cuda" if cuda_available() else "cpu"
    return setting


def run_device(cfg) -> str:
    return resolve_device(getattr(cfg, "device", "auto"))


def parse_device(cfg) -> str:
    """docling's device: ``parse.device`` overrides the run's ``device`` unless it is unset or "auto"."""
    own = getattr(cfg.parse, "device", None)
    return resolve_device(own) if own and own != "auto" else run_device(cfg)


def configure(cfg_or_setting) -> str:
    """Set the process's device setting (a config or a setting string); returns it resolved."""
    global _SETTING
    setting = cfg_or_setting if isinstance(cfg_or_setting, str) or cfg_or_setting is None \
        else getattr(cfg_or_setting, "device", "auto")
    with _LOCK:
        _SETTING = setting or "auto"
    return resolve_device(_SETTING)


def model_device(cfg=None) -> str:
    """The resolved device for a model: ``cfg.device`` when a config is given, else the process's setting."""
    return run_device(cfg) if cfg is not None else resolve_device(_SETTING)


def n_gpu_layers(cfg) -> int:
    return cfg.llm.n_gpu_layers if is_cuda(run_device(cfg)) else 0


def cuda_env(device: str, env: dict[str, str] | None = None) -> dict[str, str]:
    """``{"CUDA_VISIBLE_DEVICES": ...}`` pinning a child process to "cuda:N" ({} for "cuda" and CPU).

    N counts the GPUs this process sees: with CUDA_VISIBLE_DEVICES="2,3" already set, "cuda:1" is GPU 3.
    """
    n = cuda_index(device)
    if n is None:
        return {}
    seen = (env if env is not None else os.environ).get("CUDA_VISIBLE_DEVICES")
    visible = [x.strip() for x in seen.split(",") if x.strip()] if seen else None
    return {"CUDA_VISIBLE_DEVICES": visible[n] if visible and n < len(visible) else str(n)}


def onnx_cuda_available() -> bool:
    try:
        import onnxruntime

        return "CUDAExecutionProvider" in onnxruntime.get_available_providers()
    except Exception:  # noqa: BLE001 - not installed or broken: CPU
        return False


def cuda_problem(setting: str | None, what: str = "device") -> str:
    """Why ``setting`` cannot run here ("" when it can): CUDA asked for but not seen, or a GPU index too high."""
    setting = (setting or "auto").strip().lower()
    if not is_cuda(setting):
        return ""
    if not cuda_available():
        try:
            import torch

            build = f"torch {torch.__version__}, built for CUDA {torch.version.cuda}" if torch.version.cuda \
                else f"torch {torch.__version__} is a CPU-only build"
        except Exception as e:  # noqa: BLE001
            build = f"torch does not import ({type(e).__name__}: {str(e)[:120]})"
        return (f"{what}={setting!r} asks for CUDA but torch sees no GPU ({build}); "
                f"run `make gpu` on a CUDA machine, or set {what}=auto / cpu")
    n = cuda_index(setting)
    count = cuda_device_count()
    if n is not None and n >= count:
        return f"{what}={setting!r}: this machine has {count} CUDA device(s) (cuda:0..cuda:{count - 1})"
    return ""


def cpu_flags() -> frozenset[str]:
    """This CPU's feature flags (:func:`rag.core.artifacts.cpu_info`; empty where Linux does not list them)."""
    cpu = cpu_info()
    return cpu[1] if cpu is not None else frozenset()


def amx_bf16() -> bool:
    """torch's CPU bfloat16 matrix products run on AMX tiles here (through oneDNN): the CPU has AMX-BF16 and
    ``ONEDNN_MAX_CPU_ISA`` (else its older name ``DNNL_MAX_CPU_ISA``) does not cap oneDNN below AMX. Why AMX
    and nothing less: MiniLM in bfloat16 against float32, one chunk per call, 2-core Xeon, torch 2.13: AMX 1.7x
    as fast; AVX512-BF16 alone 0.9x; AVX2 0.13x (RESULTS.md, issue 29)."""
    if not {"amx_bf16", "amx_tile"} <= cpu_flags():
        return False
    caps = kernel_caps()
    cap = caps.get("ONEDNN_MAX_CPU_ISA", caps.get("DNNL_MAX_CPU_ISA", "ALL")).upper()  # oneDNN's order
    return cap in ("ALL", "DEFAULT") or "AMX" in cap


def embed_precision(setting: str, device: str | Callable[[], str]) -> str:
    """"float32" or "bfloat16" for ``embed.precision`` = ``setting`` on ``device`` (a device string, or a
    function giving it: called only when the answer depends on it, so a CPU without AMX never imports torch)."""
    if setting in ("float32", "bfloat16"):
        return setting
    if setting != "auto":
        raise ValueError(f"embed.precision must be auto, float32 or bfloat16, not {setting!r}")
    if not amx_bf16():
        return "float32"
    return "float32" if is_cuda(device() if callable(device) else device) else "bfloat16"
