"""How every other module reads stage 02's output, ``outputs/<run>/02_clean/<sha1>.json`` (stage 02 writes it,
:mod:`rag.clean`, which re-exports these).

Contracts:
- ``report_file(sha1)`` / ``report_path(cfg_or_run, sha1)``: the file of one report (FileNotFoundError naming the
  folder when 02 never ran).
- ``item_state(cfg_or_run, sha1) -> ItemState``: done + key, failed/blocked + reason, or missing.
- ``load_clean(cfg_or_run, sha1) -> CleanReport``: errors name the file.
- ``page_texts(cfg_or_run, sha1) -> (company, {page (1-based): clean Markdown})``: cached per file version (05 reads
  the same report for many questions); ``clear_page_cache()`` empties that cache.
"""
from __future__ import annotations

import threading
from pathlib import Path

from ..core import stages
from ..core.artifacts import read_json, run_dir_of, stage_dir
from ..core.config import RunConfig
from ..core.records import CleanReport
from ..core.stage import ItemState
from ..core.stage import item_state as _item_state

STAGE = stages.name_of("clean")  # the stage's folder, from the registry (rag.core.stages)
_PAGES_LOCK = threading.Lock()
_PAGES: dict[tuple[str, int], tuple[str, dict[int, str]]] = {}


def report_file(sha1: str) -> str:
    return f"{sha1}.json"


def report_path(cfg: RunConfig | Path | str, sha1: str) -> Path:
    """``02_clean/<sha1>.json`` of a run; FileNotFoundError naming the folder when 02 never ran
    (:func:`rag.core.artifacts.stage_dir`)."""
    return stage_dir(cfg, STAGE) / report_file(sha1)


def item_state(cfg: RunConfig | Path | str, sha1: str) -> ItemState:
    """State of report ``sha1`` in 02_clean (done + key, failed/blocked + reason, or missing)."""
    return _item_state(run_dir_of(cfg) / STAGE, sha1, (report_file(sha1),))


def load_clean(cfg: RunConfig | Path | str, sha1: str) -> CleanReport:
    """``02_clean/<sha1>.json`` as a :class:`CleanReport`; errors name the file."""
    path = report_path(cfg, sha1)
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run stage 02_clean for report {sha1}")
    try:
        return CleanReport.model_validate(read_json(path))
    except Exception as e:  # pydantic ValidationError or bad JSON: name the file
        raise ValueError(f"{path}: not a valid CleanReport ({e})") from e


def page_texts(cfg: RunConfig | Path | str, sha1: str) -> tuple[str, dict[int, str]]:
    """``(company, {page (1-based): clean Markdown})`` of one report, cached per file version."""
    path = report_path(cfg, sha1)
    key = (str(path), path.stat().st_mtime_ns if path.exists() else 0)
    with _PAGES_LOCK:
        if key not in _PAGES:
            rep = load_clean(cfg, sha1)
            _PAGES[key] = (rep.company, {p.page: p.markdown for p in rep.pages})
        return _PAGES[key]


def clear_page_cache() -> None:
    with _PAGES_LOCK:
        _PAGES.clear()
