"""Is a run's score older than its answers? (issue 45: after 06 was re-run alone with another setting, the
closing ``Score:`` line and ``python -m rag.evaluate --run`` printed the old 07 numbers as current.)

Contract: ``stale_reason(run_dir) -> str`` is "" when ``07_evaluate`` scored the submission that
``06_answer/submission.json`` holds now (07's manifest records its sha256 under ``inputs.submission``), else
why not; a run whose 07 manifest is missing or says nothing (scores written by hand, older runs) is not
judged (""). ``refresh_command(run_dir)`` is the command that scores the current submission. Whatever prints
a score read from 07 (the run's closing summary, ``python -m rag.evaluate --run / --paired``) says
``stale: <reason>; refresh with: <command>`` next to it.
"""
from __future__ import annotations

import shlex
from pathlib import Path

from ..core import stages
from ..core.artifacts import file_sha256, read_manifest, run_dir_of

STAGE = stages.name_of("evaluate")


def stale_reason(run) -> str:
    """Why ``run``'s 07 scores are not those of its current submission ("" when they are, or unknown)."""
    from ..answer import submission_path

    run_dir = run_dir_of(run)
    try:
        m = read_manifest(run_dir, STAGE, missing_ok=True) or {}
    except (ValueError, FileNotFoundError):
        return ""
    scored = (m.get("inputs") or {}).get("submission")
    if not scored:
        return ""
    sub = submission_path(run_dir)
    if not sub.exists():
        return f"{sub} is gone since 07_evaluate scored it"
    if file_sha256(sub) != scored:
        return "06_answer/submission.json changed after 07_evaluate scored it"
    return ""


def refresh_command(run) -> str:
    """``python -m rag.pipeline ... --direct --stages 07_evaluate`` for the run (its preset, data and output
    folder from 07's manifest)."""
    from ..core.config import RunConfig

    run_dir = run_dir_of(run)
    try:
        m = read_manifest(run_dir, STAGE, missing_ok=True) or {}
    except ValueError:
        m = {}
    cfg = m.get("config") or {}
    args = ["python", "-m", "rag.pipeline", "--preset", m.get("preset") or "offline"]
    if cfg.get("data_dir"):
        args += ["--data", str(cfg["data_dir"])]
    args += ["--run", run_dir.name]
    if Path(run_dir.parent).resolve() != RunConfig().path("outputs_dir").resolve():
        args += ["--set", f"outputs_dir={run_dir.parent}"]
    return shlex.join([*args, "--direct", "--stages", STAGE])


def stale_note(run) -> str:
    """``stale: <reason>; refresh with: <command>`` or "" (see module docstring)."""
    why = stale_reason(run)
    return f"stale: {why}; refresh with: {refresh_command(run)}" if why else ""
