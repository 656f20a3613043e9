"""Setup check before any stage starts: refuse a run that cannot work with ONE clear message.

The GPU preset (``parse.pipeline = "standard"``, ``device = "cuda"``, ``llm.backend = "vllm"``) used to
start anyway and fail every report one by one. Checked here, cheaply and without the network:

- docling's full pipeline (``parse.pipeline = "standard"``, when stage 01 runs): torchvision installed AND
  importable beside this torch (checked in a subprocess: PyPI's torchvision next to a mismatched torch fails
  at import), and the layout + TableFormer weights present (``parse.artifacts_path``, relative paths from
  the project root; ``make gpu`` downloads them into data/models/docling).
- the device: ``device`` / ``parse.device`` asking for CUDA when torch sees no GPU, or "cuda:N" past the
  last GPU (stages 01..06).
- ``llm.backend = "vllm"``: its executable is found (stages 05, 06).

Contract: ``problems(cfg, stages=None) -> list[str]`` (each one line; empty = fine); ``check(cfg, stages)``
raises :class:`SetupError` with all of them on one line plus the fix. Called by ``rag.pipeline.main``
(before the first stage, for the stages asked for) and by ``run_parse`` (notebooks run by hand), where
``parse.pipeline = "auto"`` falls back to the native pipeline instead of refusing.
CLI: ``python -m rag.preflight --preset gpu [--set KEY=VALUE ...]`` (exit 0 / 2), run at the end of ``make gpu``.
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

# The error, its message and the fix live below the layers that raise them (run_parse refuses with the same
# SetupError); torchvision's import check is the model layer's, docling's the parse stage's. Re-exported here.
from .core.errors import SETUP_FIX as FIX, SetupError, setup_message as message  # noqa: F401
from .core.stages import names
from .models.base import torchvision_problem  # noqa: F401

# From the stage registry: the parser's stage, the stages that run a model on cfg.device, and those that may
# call the chat model under some config (which config: rag.core.deps.llm_uses; here any may, so the check
# is coarser on purpose: a vLLM that is not installed is reported before any of them starts).
_PARSE_STAGES = set(names(package="parse"))
_DEVICE_STAGES = set(names(on_device=True))
_LLM_STAGES = set(names(may_call_llm=True))


def problems(cfg, stages: Sequence[str] | None = None) -> list[str]:
    """Every reason the run cannot start for ``stages`` (default: all), one line each."""
    from .models.device import cuda_problem

    stages = set(stages) if stages is not None else _DEVICE_STAGES | _PARSE_STAGES
    out: list[str] = []
    if stages & _PARSE_STAGES and cfg.parse.pipeline == "standard":
        from .parse.setup_check import parse_problems

        out += parse_problems(cfg)
    if stages & _DEVICE_STAGES:
        dev = cuda_problem(cfg.device, "device")
        if dev:
            out.append(dev)
    if stages & _LLM_STAGES and cfg.llm.backend == "vllm":
        from .models.base import ModelUnavailable
        from .models.vllm_server import get_vllm_server

        try:
            get_vllm_server(cfg).check_installed()
        except ModelUnavailable as e:
            out.append(str(e).splitlines()[0])
    return list(dict.fromkeys(out))  # parse.device and device may say the same


def check(cfg, stages: Sequence[str] | None = None) -> None:
    """Raise :class:`SetupError` (one line: every problem, then the fix) when the run cannot start."""
    found = problems(cfg, stages)
    if found:
        raise SetupError(message(found, cfg.preset))


def main(argv: Sequence[str] | None = None) -> int:
    from .core.config import load_config, parse_set

    ap = argparse.ArgumentParser(prog="python -m rag.preflight", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="gpu")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override")
    a = ap.parse_args(argv)
    cfg = load_config(a.preset, overrides=parse_set(a.set))
    found = problems(cfg)
    if found:
        print(f"error: {message(found, cfg.preset)}", file=sys.stderr)
        return 2
    from .models.device import run_device

    print(f"setup check: preset {cfg.preset} can start (device {run_device(cfg)}, parse.pipeline "
          f"{cfg.parse.pipeline}, llm.backend {cfg.llm.backend})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
