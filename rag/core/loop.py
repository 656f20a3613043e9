"""The one item loop every stage runs its items (reports, (report, size) pairs, questions) through.

Contract:
- A stage lists its :class:`Item` s (id, currency key, the outputs that make it, a payload, and
  ``blocked`` = the reason when an upstream item failed) and a ``work(item) -> Result`` function, and
  calls :func:`run_items`. The loop skips current items (:meth:`Stage.is_current`), hands the rest to
  an :class:`Executor`, times each, writes each result's files atomically *in the driver* (workers never
  write), then the item's record (key, info, usage, each file's size and sha256); an item whose outputs no
  longer match their record (truncated, overwritten: :meth:`Stage.is_current`) is rebuilt like a missing
  one and named in the manifest (``damaged``); a failing item is recorded with its error and its
  old outputs are removed, the others go on; a blocked item is recorded as blocked with its reason.
- Progress (:mod:`rag.core.progress`): tqdm with ETA when interactive, otherwise one log line every
  ``LOG_EVERY`` items and at the end (``[05_retrieve] 10/30 items  3.1s/item  ETA 1m02s  failed 0``).
- Executors (:mod:`rag.core.executors`): stages ask :func:`executor(mode, workers, cfg) <executor>`; the default :class:`LocalExecutor`
  runs serially, in threads or in (spawned) processes. Anything with ``map(fn, items) -> iterator of
  (item, Result | Exception, seconds)`` can replace it through :func:`use_executor` without touching the
  stages: ``fn`` and items must then be picklable, as for processes. ``cfg.execution.executor = "ray"``
  picks :class:`rag.core.ray_executor.RayExecutor` (one Ray task per item). Workers never write artifacts;
  the driver does. ``Item.inputs`` names the files an item's work reads, for executors whose workers may
  not see the driver's filesystem. An executor's ``describe()`` (when it has one) goes into the manifest.
- The item records (:class:`Item`, :class:`Result`, ...) are :mod:`rag.core.items`; stages import them,
  the executors and the loop from here.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from . import integrity
from .artifacts import digest, json_bytes, jsonl_bytes
from .errors import StageCannotRun
# Re-exported: stages and tests import the records, the executors and the progress from here.
from .executors import (PARENT_POLL_S, ExecutorFactory, LocalExecutor, _default_executor, executor,  # noqa: F401
                        use_executor, watch_parent)
from .items import Executor, Item, ItemError, Json, Jsonl, Outcome, Result, _call  # noqa: F401
from .progress import LOG_EVERY, MIN_LOG_LINES, Progress  # noqa: F401
from .usage import ItemUsage


def _encode(stage, rel: str, data: Any) -> bytes:
    """The bytes an output is written as (the Stage.write_* encodings)."""
    if isinstance(data, Json):
        return json_bytes(data.obj, data.indent)
    if isinstance(data, Jsonl):
        return jsonl_bytes(data.rows)
    if isinstance(data, bytes):
        return data
    if isinstance(data, str):
        return data.encode("utf-8")
    raise TypeError(f"{stage.name}/{rel}: unsupported output type {type(data).__name__}")


def _write(stage, rel: str, data: Any) -> list[Any]:
    """Write one output; its ``[size, sha256]`` as the item record keeps it (checked when read back)."""
    blob = _encode(stage, rel, data)
    stage.write_bytes(rel, blob)
    return digest(blob)


def run_items(stage, items: Sequence[Item], work: Callable[[Item], Result], *, executor: Executor | None = None,
              progress: bool = True, unit: str = "item", raise_errors: tuple[type[BaseException], ...] = ()
              ) -> dict[str, Outcome]:
    """Run ``items`` through ``work`` (see module contract); ``{item id: Outcome}`` in item order.

    ``raise_errors``: exception types that mean the stage cannot run at all (an upstream stage that never
    ran): re-raised instead of recorded as one item's failure; :class:`rag.core.errors.StageCannotRun` (the
    model layer's ``ModelUnavailable``) always is.
    """
    raise_errors = tuple(raise_errors) + (StageCannotRun,)
    outcomes: dict[str, Outcome] = {}
    todo: list[Item] = []
    for it in items:
        if it.blocked:
            stage.mark_failed(it.id, it.key, it.blocked, it.outputs, status="blocked")
            outcomes[it.id] = Outcome(it, "blocked", {}, ItemUsage(), 0.0, it.blocked)
        elif stage.is_current(it.id, it.key, *it.outputs):
            rec = stage.record(it.id) or {}
            outcomes[it.id] = Outcome(it, "current", rec.get("info", {}), ItemUsage.from_dict(rec.get("usage")), 0.0)
        else:
            todo.append(it)
    if stage.damaged:  # outputs that no longer match what was written: rebuilt like missing ones
        rebuilt = {it.id for it in todo}
        stage.damaged = {i: why for i, why in stage.damaged.items() if i in rebuilt}
    bar = Progress(stage.name, len(todo), unit, progress)
    ex = executor or _default_executor(stage.cfg)
    if todo and hasattr(ex, "describe"):
        stage.execution = ex.describe()  # into the manifest (executor, cluster size)
    from .run_guard import note_progress

    note = lambda: note_progress(stage.cfg.run_dir, stage.name, len(outcomes), len(items))  # noqa: E731
    note()  # for the interrupt message: "interrupted at <stage> (<n> of <m> items done)"
    if progress:
        n_blocked = sum(o.status == "blocked" for o in outcomes.values())
        print(f"[{stage.name}] {len(items)} items ({unit}): {len(todo)} to run, {len(outcomes) - n_blocked} current, "
              f"{n_blocked} blocked upstream", flush=True)
    try:
        for it, out, secs in ex.map(work, todo):
            integrity.add(getattr(out, "damage", None) or {})  # counted by a worker process: said at the end
            if isinstance(out, Exception):
                original = getattr(out, "original", None)
                if raise_errors and isinstance(original, raise_errors):
                    raise original
                stage.mark_failed(it.id, it.key, str(out), it.outputs)
                outcomes[it.id] = Outcome(it, "failed", {}, ItemUsage(), round(secs, 3), str(out))
            else:
                files = {rel: _write(stage, rel, data) for rel, data in out.files.items()}
                usage = out.usage + ItemUsage(seconds=secs)
                stage.mark_done(it.id, it.key, usage=usage.as_dict(), written=files, **out.info)
                outcomes[it.id] = Outcome(it, "ran", out.info, usage, round(secs, 3))
            bar.update(failed=outcomes[it.id].status == "failed")
            note()
    finally:
        bar.close()
    return {it.id: outcomes[it.id] for it in items}


def outcome_counts(outcomes: dict[str, Outcome]) -> dict[str, int]:
    """This invocation's counts: ran / current (skipped) / failed / blocked."""
    out = {"ran": 0, "current": 0, "failed": 0, "blocked": 0}
    for o in outcomes.values():
        out[o.status] += 1
    return out


def failures(outcomes: dict[str, Outcome]) -> dict[str, str]:
    """``{item: reason}`` of failed and blocked items (for manifests and reports)."""
    return {i: o.error for i, o in outcomes.items() if o.status in ("failed", "blocked")}


def upstream_block(upstream_stage: str, state) -> str:
    """The reason an item is blocked by its upstream item ``state`` (an ``ItemState``), or ""."""
    if state.status == "failed":
        return f"failed in {upstream_stage}: {state.reason}"
    if state.status == "blocked":
        return state.reason  # already names the stage where it failed
    return ""
