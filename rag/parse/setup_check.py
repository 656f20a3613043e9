"""Which docling pipeline runs here, and can the full one (parse.pipeline = "standard")? Asked by run_parse
before a standard run (a configured "standard" refuses, "auto" falls back to native) and by the setup check
(rag.preflight).

Contract: ``resolve_pipeline(parse config) -> (pipeline, why)`` ("auto" decides by :func:`standard_available`:
torchvision installed and the weights found, folders only); ``parse_problems(cfg) -> list[str]``: one line per missing part (torchvision importable beside
this torch, docling's layout + TableFormer weights, the CUDA device parse.device asks for); empty = fine.
Cheap and offline: folders, one subprocess import.
"""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from ..core.config import ParseConfig, project_path
from ..models.base import torchvision_problem
from ..models.device import cuda_problem

_LAYOUT_DIRS = ("docling-project--docling-layout-heron", "docling-project--docling-layout-old",
                "docling-project--docling-layout-heron-101", "ds4sd--docling-layout-old")
_TABLE_DIR = "docling-project--docling-models"


def artifacts_dir(pcfg: ParseConfig) -> Path | None:
    """``parse.artifacts_path`` as a folder (a relative path is relative to the project root), or None."""
    if not pcfg.artifacts_path:
        return None
    return project_path(Path(pcfg.artifacts_path).expanduser())


def _weight_dirs(pcfg: ParseConfig) -> list[Path]:
    if pcfg.artifacts_path:
        return [artifacts_dir(pcfg)]
    home = Path.home()
    hf_home = Path(os.environ.get("HF_HOME", home / ".cache" / "huggingface"))
    hub = Path(os.environ.get("HF_HUB_CACHE", hf_home / "hub"))
    return [Path(os.environ.get("DOCLING_CACHE_DIR", home / ".cache" / "docling")) / "models", hub]


def weights_found(pcfg: ParseConfig) -> tuple[bool, str]:
    """(found, where): docling's layout + TableFormer weight folders in ``parse.artifacts_path`` (or docling's
    and Hugging Face's caches when unset); folders only, no network."""
    for d in _weight_dirs(pcfg):
        names = {p.name.removeprefix("models--") for p in d.iterdir()} if d.is_dir() else set()
        if _TABLE_DIR in names and names.intersection(_LAYOUT_DIRS):
            return True, f"weights in {d}"
    return False, f"no docling layout + TableFormer weights in {', '.join(map(str, _weight_dirs(pcfg)))}"


def standard_available(pcfg: ParseConfig) -> tuple[bool, str]:
    """Cheap local check (folders and importability only, no network) for the full pipeline; the setup
    check (rag.parse.setup_check, asked by rag.preflight too) also imports torchvision before a standard-pipeline run starts."""
    if importlib.util.find_spec("torchvision") is None:
        return False, "torchvision is not installed (TableFormer needs it)"
    return weights_found(pcfg)


def resolve_pipeline(pcfg: ParseConfig) -> tuple[str, str]:
    """``(pipeline, why)``: ``"standard"`` or ``"native"`` for ``pcfg.pipeline`` (auto decides here)."""
    if pcfg.pipeline != "auto":
        return pcfg.pipeline, "configured"
    ok, why = standard_available(pcfg)
    return ("standard" if ok else "native"), why


def parse_problems(cfg) -> list[str]:
    """What docling's full pipeline lacks under ``cfg`` (torchvision, weights, the CUDA it was asked to use)."""
    out = []
    tv = torchvision_problem()
    if tv:
        out.append(tv)
    ok, where = weights_found(cfg.parse)
    if not ok:
        out.append(f"docling's layout + TableFormer weights are missing ({where}; parse.artifacts_path)")
    if cfg.parse.device and cfg.parse.device != "auto":
        dev = cuda_problem(cfg.parse.device, "parse.device")
        if dev:
            out.append(dev)
    return out
