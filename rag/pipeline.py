"""Run the pipeline headless: every notebook through papermill, or the stage functions directly.

CLI (used by ``make run``)::

    python -m rag.pipeline --preset offline --demo                 # demo corpus, notebooks 01..08
    python -m rag.pipeline --preset offline --data ../shared/erc2-dev --run dev
    python -m rag.pipeline --data D --run R --set rerank.mode=none --set chunk.sizes=[300,1000]
    python -m rag.pipeline --data D --run R --direct                # stage functions, no notebooks
    python -m rag.pipeline --data D --executor ray --set run.ray_address=auto   # items on a Ray cluster

Executed notebooks land in ``outputs/<run>/notebooks/``; stage artifacts in ``outputs/<run>/NN_stage/``.
Stages skip items whose outputs are current, so a second run with nothing changed is quick.

Before any stage (rag.core.run_guard): the output and cache folders are checked writable (else one line
``error: output folder: cannot write <path> (<reason>)``, exit 2) and the run takes ``outputs/<run>/run.lock``
(another live run on the folder: one line naming it, exit 2; ``--wait`` waits). Ctrl-C prints
``interrupted at <stage> (<n> of <m> items done); resume with: <command>`` and exits 130, kernels stopped.
Those lines and the closing summary are :mod:`rag.run_messages`.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from .core.stages import NOTEBOOKS, PIPELINE, STAGES as STAGE_SPECS  # 08_label is a notebook only
from .core.config import PROJECT_ROOT, RunConfig, load_config, parse_set  # noqa: F401 - parse_set: CLIs
from .core.dataset import Dataset, load_dataset
# What a run prints: the closing summary, user errors and Ctrl-C as one line.
from .run_messages import (is_interrupt, print_damage, print_failures, print_outcome, print_routing,
                           report_interrupt, report_user_error, run_failures, user_error)

DEMO_DIR = "data/demo"


def stage_functions() -> dict[str, Callable[..., Any]]:
    """Stage name -> ``run_<stage>(cfg, ds, progress)`` for every stage of the registry's pipeline;
    imported lazily (heavy dependencies)."""
    import importlib

    return {name: getattr(importlib.import_module(STAGE_SPECS[name].module), STAGE_SPECS[name].run_function)
            for name in PIPELINE}


def make_config(preset: str, data_dir: str | None, run: str | None, overrides: dict[str, Any] | None) -> RunConfig:
    """The run's config (no file read but the preset): the run folder is known before the dataset loads."""
    data_dir = data_dir or DEMO_DIR
    return load_config(preset, overrides=overrides, data_dir=data_dir, run=run or Path(data_dir).name)


def prepare(preset: str, data_dir: str | None, run: str | None, overrides: dict[str, Any] | None,
            demo: bool = False, cfg: RunConfig | None = None) -> tuple[RunConfig, Dataset]:
    """Config + validated dataset; generates the demo corpus first when asked or when it is the target.
    The output and cache folders are checked writable first (``Unwritable``: one line, before any stage)."""
    from .core.run_guard import check_places

    cfg = cfg or make_config(preset, data_dir, run, overrides)
    data_dir = cfg.data_dir
    check_places(cfg)
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
        except BaseException as e:  # an error or Ctrl-C
            _tag(e, name)  # for the one-line report in main()
            raise
        print(f"[{name}] {time.perf_counter() - t0:.1f}s", flush=True)
    return out


def _tag(e: BaseException, stage: str) -> None:
    if not hasattr(e, "_rag_stage"):  # the innermost stage wins
        try:
            e._rag_stage = stage  # type: ignore[attr-defined]
        except AttributeError:
            pass


def run_notebooks(preset: str, data_dir: str, run: str, overrides: dict[str, Any] | None = None,
                  notebooks: Sequence[str] = NOTEBOOKS, kernel: str | None = None) -> list[Path]:
    """Execute ``notebooks/<name>.ipynb`` with papermill into ``outputs/<run>/notebooks/`` (kernels over
    local IPC sockets: rag.kernels)."""
    import papermill as pm

    from .core.run_guard import require_writable
    from .kernels import RunKernelManager, interrupt_kills_kernels_first

    cfg = load_config(preset, overrides=overrides, data_dir=data_dir, run=run)
    out_dir = require_writable("output folder", cfg.run_dir / "notebooks")
    params = {"preset": preset, "data_dir": data_dir, "run": run, "overrides": dict(overrides or {}),
              "interactive": False}
    done = []
    for name in notebooks:
        src = PROJECT_ROOT / "notebooks" / f"{name}.ipynb"
        dst = out_dir / f"{name}.ipynb"
        t0 = time.perf_counter()
        print(f"[{name}] running {src.relative_to(PROJECT_ROOT)}", flush=True)
        try:
            with interrupt_kills_kernels_first():
                pm.execute_notebook(str(src), str(dst), parameters=params, cwd=str(PROJECT_ROOT),
                                    kernel_name=kernel, progress_bar=False, log_output=False,
                                    kernel_manager_class=RunKernelManager)
        except BaseException as e:  # an error or Ctrl-C
            _tag(e, name)  # for the one-line report in main()
            raise
        print(f"[{name}] done in {time.perf_counter() - t0:.1f}s -> {dst}", flush=True)
        done.append(dst)
    return done


def main(argv: Sequence[str] | None = None, prog: str = "python -m rag.pipeline") -> int:
    import shlex

    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
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
    ap.add_argument("--debug", action="store_true", help="show the full traceback of a user error or Ctrl-C")
    ap.add_argument("--kernel", default=None,
                    help="Jupyter kernel the notebooks run on (default: the notebooks' own; `rag kernel` installs "
                         "the project's as enterprise-rag)")
    ap.add_argument("--strict", action="store_true",
                    help="exit 1 when any item failed (default: exit 0 with a warning summary)")
    ap.add_argument("--wait", action="store_true",
                    help="when another run writes the same outputs/<run>/, wait for it instead of stopping")
    a = ap.parse_args(argv)
    known = PIPELINE if a.direct else NOTEBOOKS  # 08_label is a notebook only
    stages = a.stages.split(",") if a.stages else list(known)
    bad = [s for s in stages if s not in known]
    if bad:  # a typo must not run 01 first and then fail on an unknown name
        ap.error(f"unknown stage(s) {', '.join(bad)}; known: {', '.join(known)}")
    overrides = parse_set(a.set)
    if a.executor:
        overrides["execution.executor"] = a.executor
    resume = f"{prog} {shlex.join(argv)}"
    cfg = lock = None
    try:
        from .core.run_guard import RunLock, check_places

        cfg = make_config(a.preset, a.data, a.run, overrides)
        check_places(cfg)  # before the lock (it lives in the output folder) and before any stage
        lock = RunLock(cfg.run_dir, resume).acquire(wait=a.wait)
        cfg, ds = prepare(a.preset, a.data, a.run, overrides, demo=a.demo, cfg=cfg)
        from .preflight import check

        check(cfg, stages)  # GPU parts asked for but missing: one message before any stage starts
        t0 = time.perf_counter()
        if a.direct:
            run_direct(cfg, ds, stages)
        else:
            run_notebooks(a.preset, cfg.data_dir, cfg.run, overrides, stages, kernel=a.kernel)
        print(f"\nAll done in {time.perf_counter() - t0:.0f}s.")
        print_outcome(cfg)
        failures = run_failures(cfg.run_dir)  # every stage of the run, also those this invocation skipped
        print_failures(failures)
        print_routing(cfg.run_dir)
        print_damage(cfg.run_dir, stages)
        return 1 if (failures and a.strict) else 0
    except BaseException as e:  # noqa: BLE001 - user errors and Ctrl-C become lines, the rest propagate
        if is_interrupt(e):
            if a.debug:
                raise
            return report_interrupt(e, cfg.run_dir if lock is not None else None, resume)
        if a.debug or not isinstance(e, Exception) or user_error(e) is None:
            raise
        # run_direct / run_notebooks tag the failing stage; before them it is the setup.
        stage = getattr(e, "_rag_stage", "setup")
        return report_user_error(e, stage, cfg.run_dir if lock is not None else None, argv, prog)
    finally:
        if lock is not None:
            lock.release()


if __name__ == "__main__":
    sys.exit(main())
