"""The one item loop every stage runs its items (reports, (report, size) pairs, questions) through.

Contract:
- A stage lists its :class:`Item` s (id, currency key, the outputs that make it, a payload, and
  ``blocked`` = the reason when an upstream item failed) and a ``work(item) -> Result`` function, and
  calls :func:`run_items`. The loop skips current items (:meth:`Stage.is_current`), hands the rest to
  an :class:`Executor`, times each, writes each result's files atomically *in the driver* (workers never
  write), then the item's record (key, info, usage); a failing item is recorded with its error and its
  old outputs are removed, the others go on; a blocked item is recorded as blocked with its reason.
- Progress: tqdm with ETA when interactive (a TTY or a notebook kernel), otherwise one log line every
  :data:`LOG_EVERY` items and at the end (``[05_retrieve] 10/30 items  3.1s/item  ETA 1m02s  failed 0``).
- Executors: stages ask :func:`executor(mode, workers, cfg) <executor>`; the default :class:`LocalExecutor`
  runs serially, in threads or in (spawned) processes. Anything with ``map(fn, items) -> iterator of
  (item, Result | Exception, seconds)`` can replace it through :func:`use_executor` without touching the
  stages: ``fn`` and items must then be picklable, as for processes. ``cfg.execution.executor = "ray"``
  picks :class:`rag.core.ray_executor.RayExecutor` (one Ray task per item). Workers never write artifacts;
  the driver does. ``Item.inputs`` names the files an item's work reads, for executors whose workers may
  not see the driver's filesystem. An executor's ``describe()`` (when it has one) goes into the manifest.
"""
from __future__ import annotations

import os
import sys
import time
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Literal, Protocol, Sequence

from .usage import ItemUsage

LOG_EVERY = 10  # headless progress: one line per this many items at most (and one at the end)
MIN_LOG_LINES = 5  # ...but at least about this many lines for a short stage (3 reports: a line each)


@dataclass
class Item:
    id: str
    key: str = ""
    outputs: tuple[str, ...] = ()  # files (relative to the stage folder) that make the item
    payload: Any = None
    blocked: str = ""  # an upstream item failed: the reason (the item is skipped and counted as blocked)
    label: str = ""
    # Files (absolute paths; a folder stands for its files) the work reads: upstream artifacts, the PDF.
    # Not part of the key; a remote executor ships them to nodes that lack them.
    inputs: tuple[str, ...] = ()


@dataclass
class Json:
    obj: Any
    indent: int | None = 1


@dataclass
class Jsonl:
    rows: list[Any]


@dataclass
class Result:
    """What one item's work produced: ``files`` {relative path: Json | Jsonl | bytes | str}, ``info`` (its
    details, kept in the item record and the manifest) and ``usage`` (tokens and cost; seconds are set by
    the loop)."""

    files: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    usage: ItemUsage = field(default_factory=ItemUsage)


@dataclass
class Outcome:
    item: Item
    status: Literal["ran", "current", "failed", "blocked"]
    info: dict[str, Any]
    usage: ItemUsage
    seconds: float  # this invocation's time on the item (0 when current, blocked)
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.status in ("ran", "current")


class ItemError(Exception):
    """An item's work failed with an expected, explained error (the message is kept as is)."""


# ---- executors ---------------------------------------------------------------------------------
class Executor(Protocol):
    def map(self, fn: Callable[[Item], Result], items: Sequence[Item]) -> Iterator[tuple[Item, Any, float]]:
        """Run ``fn`` on each item; yield ``(item, Result or Exception, seconds)`` as they finish."""


def _call(fn: Callable[[Item], Result], item: Item) -> tuple[Any, float]:
    """Run one item, never raising (processes: the exception must travel back picklable)."""
    t0 = time.perf_counter()
    try:
        out: Any = fn(item)
    except ItemError as e:
        out = e
    except Exception as e:  # noqa: BLE001 - one failing item must not stop the others
        out = ItemError(f"{type(e).__name__}: {e}")
        out.original = e if not _in_subprocess() else None  # type: ignore[attr-defined]
    return out, time.perf_counter() - t0


# Seconds between a worker's checks that its parent is alive (the delay before an orphan exits).
PARENT_POLL_S = 1.0


def watch_parent(parent_pid: int, poll_s: float) -> None:
    """Worker initializer: a daemon thread exits this process (``os._exit``, no cleanup that could block)
    as soon as its parent is gone (re-parented: ``getppid()`` no longer ``parent_pid``). Ctrl-C (SIGINT to
    the terminal's process group) ends a worker at once and quietly: the parent reports the interrupt."""
    import signal
    import threading

    signal.signal(signal.SIGINT, lambda *_: os._exit(130))

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(poll_s)
        os._exit(3)

    threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()


def _in_subprocess() -> bool:
    import multiprocessing as mp

    return mp.parent_process() is not None


class LocalExecutor:
    """``mode``: "serial" (in order), "threads" (``workers`` threads), "processes" (``workers`` spawned
    processes; ``fn`` must be a module-level function)."""

    def __init__(self, mode: Literal["serial", "threads", "processes"] = "serial", workers: int = 1):
        self.mode = mode if workers > 1 else "serial"
        self.workers = max(1, workers)

    def describe(self) -> dict[str, Any]:
        return {"executor": "local", "mode": self.mode, "workers": self.workers}

    def map(self, fn: Callable[[Item], Result], items: Sequence[Item]) -> Iterator[tuple[Item, Any, float]]:
        if self.mode == "serial" or len(items) <= 1:
            for it in items:
                yield (it, *_call(fn, it))
            return
        if self.mode == "threads":
            pool: Any = ThreadPoolExecutor(max_workers=min(self.workers, len(items)))
        else:
            import multiprocessing as mp

            # spawn: workers import their libraries themselves, no thread/torch state inherited.
            # The watchdog ends a worker whose parent died (kill -9 of the pipeline): without it the
            # workers finished their item, then waited on the dead parent's queue forever, holding memory.
            pool = ProcessPoolExecutor(max_workers=min(self.workers, len(items)), mp_context=mp.get_context("spawn"),
                                       initializer=watch_parent, initargs=(os.getpid(), PARENT_POLL_S))
        with pool:
            futs: dict[Future, Item] = {pool.submit(_call, fn, it): it for it in items}
            try:
                for f in as_completed(futs):
                    try:
                        out, secs = f.result()
                    except Exception as e:  # the worker process died (killed, out of memory)
                        out, secs = ItemError(f"worker died: {type(e).__name__}: {e}"), 0.0
                    yield futs[f], out, secs
            except (KeyboardInterrupt, GeneratorExit):  # Ctrl-C: no queued item starts, no worker outlives us
                for proc in list((getattr(pool, "_processes", None) or {}).values()):
                    proc.terminate()
                pool.shutdown(wait=False, cancel_futures=True)
                raise


ExecutorFactory = Callable[[str, int], Executor]
_factory: ExecutorFactory = LocalExecutor


def executor(mode: Literal["serial", "threads", "processes"] = "serial", workers: int = 1, cfg=None) -> Executor:
    """The executor a stage asks for: ``mode`` says what its items need (threads for model calls that wait
    on a server, processes for CPU-bound parsing), ``workers`` how many at once. ``cfg.execution.executor
    == "ray"`` gives a :class:`~rag.core.ray_executor.RayExecutor` (the cluster decides how many run);
    otherwise the installed factory (local by default; another is :func:`use_executor` away)."""
    if cfg is not None and cfg.execution.executor == "ray":
        from .ray_executor import RayExecutor

        return RayExecutor(cfg, mode, workers)
    return _factory(mode, workers)


def _default_executor(cfg) -> Executor:
    """What a stage that asks for none gets (serial locally, the cluster under ``execution.executor=ray``)."""
    return executor("serial", 1, cfg)


def use_executor(factory: ExecutorFactory) -> ExecutorFactory:
    """Make ``factory(mode, workers)`` build every stage's executor; returns the previous factory."""
    global _factory
    previous, _factory = _factory, factory
    return previous


# ---- progress ----------------------------------------------------------------------------------
def _interactive() -> bool:
    return "ipykernel" in sys.modules or sys.stderr.isatty()


def _fmt_s(s: float) -> str:
    s = int(round(s))
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


class Progress:
    """tqdm (with ETA) when interactive; one line per :data:`LOG_EVERY` items otherwise."""

    def __init__(self, name: str, total: int, unit: str, enabled: bool, every: int = LOG_EVERY):
        self.name, self.total, self.unit = name, total, unit
        self.every = max(1, min(every, total // MIN_LOG_LINES))
        self.enabled = enabled and total > 0
        self.n = self.failed = 0
        self.t0 = time.perf_counter()
        self.bar = None
        if self.enabled and _interactive():
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc=name, unit=unit)

    def update(self, failed: bool) -> None:
        self.n += 1
        self.failed += int(failed)
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.update(1)
            if failed:
                self.bar.set_postfix(failed=self.failed)
        elif self.n % self.every == 0 or self.n == self.total:
            el = time.perf_counter() - self.t0
            rate = el / self.n
            print(f"[{self.name}] {self.n}/{self.total} {self.unit}  {rate:.1f}s/{self.unit}  "
                  f"elapsed {_fmt_s(el)}  ETA {_fmt_s(rate * (self.total - self.n))}  failed {self.failed}",
                  flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# ---- the loop ------------------------------------------------------------------------------------
def _write(stage, rel: str, data: Any) -> None:
    if isinstance(data, Json):
        stage.write_json(rel, data.obj, indent=data.indent)
    elif isinstance(data, Jsonl):
        stage.write_jsonl(rel, data.rows)
    elif isinstance(data, bytes):
        stage.write_bytes(rel, data)
    elif isinstance(data, str):
        stage.write_text(rel, data)
    else:
        raise TypeError(f"{stage.name}/{rel}: unsupported output type {type(data).__name__}")


def run_items(stage, items: Sequence[Item], work: Callable[[Item], Result], *, executor: Executor | None = None,
              progress: bool = True, unit: str = "item", raise_errors: tuple[type[BaseException], ...] = ()
              ) -> dict[str, Outcome]:
    """Run ``items`` through ``work`` (see module contract); ``{item id: Outcome}`` in item order.

    ``raise_errors``: exception types that mean the stage cannot run at all (an upstream stage that never
    ran): re-raised instead of recorded as one item's failure; ``ModelUnavailable`` always is.
    """
    from ..models.base import ModelUnavailable

    raise_errors = tuple(raise_errors) + (ModelUnavailable,)
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
            if isinstance(out, Exception):
                original = getattr(out, "original", None)
                if raise_errors and isinstance(original, raise_errors):
                    raise original
                stage.mark_failed(it.id, it.key, str(out), it.outputs)
                outcomes[it.id] = Outcome(it, "failed", {}, ItemUsage(), round(secs, 3), str(out))
            else:
                for rel, data in out.files.items():
                    _write(stage, rel, data)
                usage = out.usage + ItemUsage(seconds=secs)
                stage.mark_done(it.id, it.key, usage=usage.as_dict(), **out.info)
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
