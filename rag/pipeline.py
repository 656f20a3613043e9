"""Run the pipeline headless: every notebook through papermill, or the stage functions directly.

CLI (used by ``make run``)::

    python -m rag.pipeline --preset offline --demo                 # demo corpus, notebooks 01..08
    python -m rag.pipeline --preset offline --data ../shared/erc2-dev --run dev
    python -m rag.pipeline --data D --run R --set rerank.mode=none --set chunk.sizes=[300,1000]
    python -m rag.pipeline --data D --run R --direct                # stage functions, no notebooks
    python -m rag.pipeline --data D --executor ray --set run.ray_address=auto   # items on a Ray cluster

Executed notebooks land in ``outputs/<run>/notebooks/``; stage artifacts in ``outputs/<run>/NN_stage/``.
Stages skip items whose outputs are current, so a second run with nothing changed is quick.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from .core.stages import NOTEBOOKS, PIPELINE, STAGES as STAGE_SPECS  # 08_label is a notebook only
from .core.config import PROJECT_ROOT, RunConfig, load_config, parse_set  # noqa: F401 - parse_set: CLIs
from .core.dataset import Dataset, load_dataset

DEMO_DIR = "data/demo"


def stage_functions() -> dict[str, Callable[..., Any]]:
    """Stage name -> ``run_<stage>(cfg, ds, progress)`` for every stage of the registry's pipeline;
    imported lazily (heavy dependencies)."""
    import importlib

    return {name: getattr(importlib.import_module(STAGE_SPECS[name].module), STAGE_SPECS[name].run_function)
            for name in PIPELINE}


def prepare(preset: str, data_dir: str | None, run: str | None, overrides: dict[str, Any] | None,
            demo: bool = False) -> tuple[RunConfig, Dataset]:
    """Config + validated dataset; generates the demo corpus first when asked or when it is the target."""
    data_dir = data_dir or DEMO_DIR
    cfg = load_config(preset, overrides=overrides, data_dir=data_dir, run=run or Path(data_dir).name)
    if demo or Path(data_dir) == Path(DEMO_DIR):
        from .demo import ensure_demo

        ensure_demo(cfg.path("data_dir"))
    ds = load_dataset(cfg.path("data_dir"))
    from .models.device import configure

    configure(cfg)  # models built without a config at hand (embedder, OCR) run on cfg.device
    for w in ds.warnings:
        print(f"warning: {w}", file=sys.stderr, flush=True)
    return cfg, ds


def run_direct(cfg: RunConfig, ds: Dataset, stages: Sequence[str] = PIPELINE, progress: bool = True) -> dict:
    """Run stage functions in order; returns {stage: summary DataFrame}."""
    fns = stage_functions()
    out = {}
    for name in stages:
        t0 = time.perf_counter()
        try:
            out[name] = fns[name](cfg, ds, progress=progress)
        except Exception as e:
            e._rag_stage = name  # for the one-line report in main()
            raise
        print(f"[{name}] {time.perf_counter() - t0:.1f}s", flush=True)
    return out


def run_notebooks(preset: str, data_dir: str, run: str, overrides: dict[str, Any] | None = None,
                  notebooks: Sequence[str] = NOTEBOOKS, kernel: str | None = None) -> list[Path]:
    """Execute ``notebooks/<name>.ipynb`` with papermill into ``outputs/<run>/notebooks/``."""
    import papermill as pm

    cfg = load_config(preset, overrides=overrides, data_dir=data_dir, run=run)
    out_dir = cfg.run_dir / "notebooks"
    out_dir.mkdir(parents=True, exist_ok=True)
    params = {"preset": preset, "data_dir": data_dir, "run": run, "overrides": dict(overrides or {}),
              "interactive": False}
    done = []
    for name in notebooks:
        src = PROJECT_ROOT / "notebooks" / f"{name}.ipynb"
        dst = out_dir / f"{name}.ipynb"
        t0 = time.perf_counter()
        print(f"[{name}] running {src.relative_to(PROJECT_ROOT)}", flush=True)
        try:
            pm.execute_notebook(str(src), str(dst), parameters=params, cwd=str(PROJECT_ROOT),
                                kernel_name=kernel, progress_bar=False, log_output=False)
        except Exception as e:
            e._rag_stage = name  # for the one-line report in main()
            raise
        print(f"[{name}] done in {time.perf_counter() - t0:.1f}s -> {dst}", flush=True)
        done.append(dst)
    return done


def print_outcome(cfg: RunConfig) -> None:
    """Say where things are and, when 07 ran, the score."""
    print(f"\nOutputs: {cfg.run_dir}")
    from .answer import submission_path

    sub = submission_path(cfg)
    if sub.exists():
        print(f"Submission: {sub}")
    from .evaluate import scores_path

    scores = scores_path(cfg)
    if scores.exists():
        s = json.loads(scores.read_text())
        tot = s.get("totals", s)
        keys = [k for k in ("G", "R", "score", "max_score", "questions") if k in tot]
        if tot.get("questions") == 0:  # a dataset of one's own has no answers.json: nothing was scored
            print(f"Score: none (no gold in {cfg.data_dir}: answers.json, or labels.jsonl from 08_label)")
        else:
            print("Score: " + ", ".join(f"{k}={tot[k]}" for k in keys))


def run_failures(run_dir: Path, stages: Sequence[str] | None = None) -> dict[str, dict[str, str]]:
    """``{stage: {item: reason}}`` of failed and blocked items, from the stages' manifests (a stage that
    has not run has none)."""
    from .core.artifacts import STAGES, read_manifest

    out = {}
    for st in stages or STAGES:
        fails = (read_manifest(run_dir, st, missing_ok=True) or {}).get("failures") or {}
        if fails:
            out[st] = dict(fails)
    return out


def print_failures(failures: dict[str, dict[str, str]], shown: int = 5) -> None:
    """The warning summary at the end of a run: per stage, how many items failed or were blocked and why."""
    if not failures:
        return
    print("\nwarning: some items did not finish (their questions are answered N/A with the reason):", file=sys.stderr)
    for st, items in failures.items():
        print(f"  {st}: {len(items)} item(s)", file=sys.stderr)
        for item, reason in list(items.items())[:shown]:
            print(f"    {item}: {reason.splitlines()[0] if reason else '?'}", file=sys.stderr)
        if len(items) > shown:
            print(f"    ... and {len(items) - shown} more (see {st}/manifest.json)", file=sys.stderr)


# Errors a user fixes (a model that cannot run, a bad config or dataset): printed as one line plus the
# resume hint, not as a traceback; --debug re-raises them.
USER_ERRORS = ("ModelUnavailable", "ConfigError", "DatasetError", "LexiconError", "QuestionError", "SetupError")


def user_error(e: BaseException) -> tuple[str, str] | None:
    """(error class, message) when ``e`` is a user error, raised directly or inside a notebook run by
    papermill (whose exception carries the cell's error name and value); else None."""
    if type(e).__name__ == "PapermillExecutionError":
        ename, evalue = getattr(e, "ename", ""), getattr(e, "evalue", "")
        return (ename, evalue) if ename in USER_ERRORS else None
    if any(c.__name__ in USER_ERRORS for c in type(e).__mro__):  # the class or a subclass of one
        return type(e).__name__, str(e)
    return None


def report_user_error(e: BaseException, stage: str, run_dir: Path, argv: Sequence[str]) -> int:
    """Print one line (+ where the full message is and how to resume); return the exit code 2."""
    import shlex

    ename, msg = user_error(e)
    first = msg.strip().splitlines()[0] if msg.strip() else ename
    run_dir.mkdir(parents=True, exist_ok=True)
    log = run_dir / "error.log"
    log.write_text(f"{stage}: {ename}: {msg}\n")
    print(f"\nerror: {stage}: {ename}: {first}", file=sys.stderr)
    if msg.strip().count("\n"):
        print(f"  full message: {log}", file=sys.stderr)
    print(f"  finished items are kept; resume with: python -m rag.pipeline {shlex.join(argv)}", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(prog="python -m rag.pipeline", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="offline")
    ap.add_argument("--data", default=None, help=f"dataset folder (default {DEMO_DIR})")
    ap.add_argument("--run", default=None, help="run name (default: the dataset folder's name)")
    ap.add_argument("--demo", action="store_true", help="generate and use the demo corpus")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override")
    ap.add_argument("--stages", default=None, help="comma-separated notebook/stage names (default all)")
    ap.add_argument("--direct", action="store_true", help="call stage functions instead of notebooks")
    ap.add_argument("--executor", choices=("local", "ray"), default=None,
                    help="where items run (config run.executor; default: the preset's, local): ray = one Ray task "
                         "per item on the cluster of run.ray_address (local, auto, host:port, ray://host:10001)")
    ap.add_argument("--debug", action="store_true", help="show the full traceback of a user error")
    ap.add_argument("--kernel", default=None,
                    help="Jupyter kernel the notebooks run on (default: the notebooks' own; `rag kernel` installs "
                         "the project's as enterprise-rag)")
    ap.add_argument("--strict", action="store_true",
                    help="exit 1 when any item failed (default: exit 0 with a warning summary)")
    a = ap.parse_args(argv)
    known = PIPELINE if a.direct else NOTEBOOKS  # 08_label is a notebook only
    stages = a.stages.split(",") if a.stages else list(known)
    bad = [s for s in stages if s not in known]
    if bad:  # a typo must not run 01 first and then fail on an unknown name
        ap.error(f"unknown stage(s) {', '.join(bad)}; known: {', '.join(known)}")
    overrides = parse_set(a.set)
    if a.executor:
        overrides["execution.executor"] = a.executor
    cfg = None
    try:
        cfg, ds = prepare(a.preset, a.data, a.run, overrides, demo=a.demo)
        from .preflight import check

        check(cfg, stages)  # GPU parts asked for but missing: one message before any stage starts
        t0 = time.perf_counter()
        if a.direct:
            run_direct(cfg, ds, stages)
        else:
            run_notebooks(a.preset, cfg.data_dir, cfg.run, overrides, stages, kernel=a.kernel)
    except Exception as e:  # noqa: BLE001 - user errors become one line, the rest propagate
        if a.debug or user_error(e) is None:
            raise
        # run_direct / run_notebooks tag the failing stage; before them it is the setup.
        stage = getattr(e, "_rag_stage", "setup")
        run_dir = cfg.run_dir if cfg is not None else PROJECT_ROOT / "outputs"
        return report_user_error(e, stage, run_dir, argv)
    print(f"\nAll done in {time.perf_counter() - t0:.0f}s.")
    print_outcome(cfg)
    failures = run_failures(cfg.run_dir)  # every stage of the run, also those this invocation skipped
    print_failures(failures)
    return 1 if (failures and a.strict) else 0


if __name__ == "__main__":
    sys.exit(main())
