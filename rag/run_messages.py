"""What a run prints on the console (rag.pipeline's CLI, ``rag ask``): the closing summary (where the outputs
are, the score, the items that failed, the questions 05 could not route) and the one line a user error or a
Ctrl-C becomes (+ the resume hint and exit code). rag.pipeline re-exports these names.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Sequence

from .core.config import RunConfig


def print_outcome(cfg: RunConfig) -> None:
    """Say where things are and, when 07 ran, the score (marked stale, with the command that refreshes it,
    when 07 scored another submission than 06's current one: rag.evaluate.staleness)."""
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
            from .evaluate.staleness import stale_note

            stale = stale_note(cfg.run_dir)  # 06 ran again after 07 (e.g. --stages 06_answer): old numbers
            print(f"Score ({stale}): " if stale else "Score: ", end="")
            print(", ".join(f"{k}={tot[k]}" for k in keys))


def print_damage(run_dir: Path, stages: Sequence[str]) -> None:
    """Once per run, what was found damaged and rebuilt: per stage, the items whose artifacts no longer
    matched what was written (``damaged`` in the manifests of ``stages``, the ones this invocation ran); per
    cache file, entries dropped and recomputed or the file moved aside (``damage`` in those manifests plus
    what this process found outside any stage, e.g. ``rag ask``'s retrieval). See :mod:`rag.core.integrity`."""
    from .core import integrity
    from .core.artifacts import STAGE_PACKAGES, read_manifest

    found, lines = [], []
    for st in stages:
        if st not in STAGE_PACKAGES:
            continue
        try:
            m = read_manifest(run_dir, st, missing_ok=True) or {}
        except ValueError:  # a manifest cut short: the stage rewrites it on its next run
            continue
        damaged = m.get("damaged") or {}
        if damaged:
            first = next(iter(damaged.items()))
            more = f" and {len(damaged) - 1} more (see {st}/manifest.json)" if len(damaged) > 1 else ""
            lines.append(f"warning: {st}: {len(damaged)} item(s) rebuilt because their artifacts were damaged: "
                         f"{first[0]} ({first[1]}){more}")
        found.append(m.get("damage") or {})
    lines += integrity.lines(integrity.merge([*found, integrity.take()]))
    if lines:  # after the summary above, a blank line first (as the other warnings)
        print("\n" + "\n".join(lines), file=sys.stderr)


def run_failures(run_dir: Path, stages: Sequence[str] | None = None) -> dict[str, dict[str, str]]:
    """``{stage: {item: reason}}`` of failed and blocked items, from the stages' manifests (a stage that
    has not run has none)."""
    from .core.artifacts import STAGE_PACKAGES, read_manifest

    out = {}
    for st in stages or STAGE_PACKAGES:
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
