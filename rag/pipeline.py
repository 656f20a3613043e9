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
    from .kernels import RunKernelManager

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
            pm.execute_notebook(str(src), str(dst), parameters=params, cwd=str(PROJECT_ROOT),
                                kernel_name=kernel, progress_bar=False, log_output=False,
                                kernel_manager_class=RunKernelManager)
        except BaseException as e:  # an error or Ctrl-C
            _tag(e, name)  # for the one-line report in main()
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
USER_ERRORS = ("ModelUnavailable", "ConfigError", "DatasetError", "LexiconError", "QuestionError", "SetupError",
               "Unwritable", "RunLocked")
# User errors whose message is the whole line (``error: <what>: cannot write <path> (<reason>)``).
PLAIN_ERRORS = ("Unwritable", "RunLocked")
# Lines of a setup error's message printed on the console (a dataset lists one problem a line).
MAX_PROBLEM_LINES = 20
INTERRUPTED = 130  # exit code of a run stopped by Ctrl-C (128 + SIGINT), as a shell reports it


def error_line(name: str, msg: str) -> str:
    """``error: <name>: <message>`` (or ``error: <message>`` for the errors that name their place)."""
    return f"error: {msg}" if name.rsplit(": ", 1)[-1] in PLAIN_ERRORS else f"error: {name}: {msg}"


def user_error(e: BaseException) -> tuple[str, str] | None:
    """(error class, message) when ``e`` is a user error, raised directly or inside a notebook run by
    papermill (whose exception carries the cell's error name and value); else None."""
    if type(e).__name__ == "PapermillExecutionError":
        ename, evalue = getattr(e, "ename", ""), getattr(e, "evalue", "")
        return (ename, evalue) if ename in USER_ERRORS else None
    if any(c.__name__ in USER_ERRORS for c in type(e).__mro__):  # the class or a subclass of one
        return type(e).__name__, str(e)
    return None


def report_user_error(e: BaseException, stage: str, run_dir: Path | None, argv: Sequence[str],
                      prog: str = "python -m rag.pipeline") -> int:
    """Print the error (+ where the full message is and, when a stage had started, how to resume);
    return the exit code 2. Before any stage (``stage == "setup"``: a bad dataset, config or question)
    every line of the message is printed (a dataset error names ``file:row: problem`` a line) and no
    resume hint (nothing ran). The full message goes to ``<run_dir>/error.log`` (the run's own folder)."""
    import shlex

    ename, msg = user_error(e)
    lines = msg.strip().splitlines() or [ename]
    log = None
    if run_dir is not None and ename not in PLAIN_ERRORS:
        try:
            run_dir.mkdir(parents=True, exist_ok=True)
            log = run_dir / "error.log"
            log.write_text(f"{stage}: {ename}: {msg}\n")
        except OSError:
            log = None
    shown = lines if stage == "setup" else lines[:1]
    where = "" if stage == "setup" or ename in PLAIN_ERRORS else f"{stage}: "
    gap = "" if stage == "setup" else "\n"  # after a stage's output, a blank line first
    print(f"{gap}{error_line(where + ename, shown[0])}", file=sys.stderr)
    for ln in shown[1:MAX_PROBLEM_LINES]:
        print(ln, file=sys.stderr)
    if len(lines) > len(shown[:MAX_PROBLEM_LINES]) and log is not None:
        print(f"  full message: {log}", file=sys.stderr)
    if stage != "setup":
        print(f"  finished items are kept; resume with: {prog} {shlex.join(argv)}", file=sys.stderr)
    return 2


def is_interrupt(e: BaseException) -> bool:
    """Ctrl-C: in this process, or inside a notebook cell (papermill's error names it)."""
    return isinstance(e, KeyboardInterrupt) or getattr(e, "ename", "") == "KeyboardInterrupt"


def report_interrupt(e: BaseException, run_dir: Path | None, resume: str) -> int:
    """``interrupted at <stage> (<n> of <m> items done); resume with: <command>``; child processes (notebook
    kernels and what they started) stopped; exit code 130."""
    from .core.run_guard import interrupt_message, interrupted_at
    from .kernels import stop_kernels

    stop_kernels()
    note = interrupted_at(run_dir) if run_dir is not None else None
    print(f"\n{interrupt_message(getattr(e, '_rag_stage', None), note, resume)}", file=sys.stderr, flush=True)
    return INTERRUPTED


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


def print_routing(run_dir: Path) -> None:
    """The closing summary's list of questions 05 could not route to exactly one company's report (answered
    N/A with the reason by 06): unrouted (no company of the dataset named) and ambiguous ones."""
    from .retrieve import unrouted_questions

    bad = unrouted_questions(run_dir)
    if not bad:
        return
    print(f"\nwarning: {len(bad)} question(s) not routed to one report (answered N/A):", file=sys.stderr)
    for qid, why in bad.items():
        print(f"  {qid}: {why}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
