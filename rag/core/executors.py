"""Where the item loop's items run: :class:`LocalExecutor` (serial, threads or spawned processes) and the
executor factory stages ask (:func:`executor`); ``cfg.execution.executor = "ray"`` gives
:class:`rag.core.ray_executor.RayExecutor`; :func:`use_executor` installs another factory.
"""
from __future__ import annotations

import os
import time
from contextlib import contextmanager, nullcontext
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from typing import Any, Callable, Iterator, Literal, Sequence

from .items import Executor, Item, ItemError, Result, _call


# Seconds between a worker's checks that its parent is alive (the delay before an orphan exits).
PARENT_POLL_S = 1.0


def watch_parent(parent_pid: int, poll_s: float) -> None:
    """Worker initializer: a daemon thread exits this process (``os._exit``, no cleanup that could block)
    as soon as its parent is gone (re-parented: ``getppid()`` no longer ``parent_pid``). Workers ignore
    Ctrl-C (SIGINT to the terminal's process group): the parent catches it, terminates them and reports
    the interrupt. They were started with SIGINT blocked (:func:`_sigint_deferred`; ignored on Windows); this
    ignores it under any start method, then unblocks it (a Ctrl-C that came while it was blocked is dropped)."""
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):  # started with SIGINT blocked (:func:`_sigint_deferred`): a
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # Ctrl-C pending since then is dropped

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(poll_s)
        os._exit(3)

    threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()


@contextmanager
def _sigint_deferred() -> Iterator[None]:
    """SIGINT blocked in the calling thread while it starts worker processes, so they start with it blocked
    (a signal mask survives fork and exec): a Ctrl-C landing while a spawned worker still imports its modules
    stays pending there, and :func:`watch_parent` drops it (ignore, then unblock). Without that the worker
    printed its KeyboardInterrupt traceback.

    The Ctrl-C is not lost in the parent: Linux hands a process-directed signal to a thread that does not
    block it, whose handler makes Python raise ``KeyboardInterrupt`` in the main thread at once; where every
    thread blocks it, it stays pending and is raised when the block lifts. (Until stop 43 the parent set
    SIGINT to "ignore" for the window, and a Ctrl-C landing in it was dropped: the run went on.) Where there
    is no ``pthread_sigmask`` (Windows) the main thread ignores it for the window instead, and such a Ctrl-C
    is lost."""
    import signal
    import threading

    if hasattr(signal, "pthread_sigmask"):
        before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
        return
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


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
            try:
                # submit starts the workers; a Ctrl-C meanwhile is raised during it or as the block ends: in this try
                with _sigint_deferred() if self.mode == "processes" else nullcontext():
                    futs: dict[Future, Item] = {pool.submit(_call, fn, it): it for it in items}
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
