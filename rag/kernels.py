"""The Jupyter kernels a headless run starts (papermill): local IPC sockets, and stopped on Ctrl-C.

Contracts:
- :class:`RunKernelManager` (papermill's ``kernel_manager_class``): the kernel talks to the run over
  Unix-domain (IPC) sockets next to its connection file instead of TCP ports on localhost. Nothing
  leaves the machine, no port can be taken by another process, and the kernel has no reason to print
  ``[IPKernelApp] WARNING | Kernel is running over TCP without encryption`` (8 times a run before).
  Nothing is filtered: every other warning a kernel prints still reaches the console.
- ``stop_kernels()``: kills the process group of every kernel this process started and has not shut
  down (a Ctrl-C leaves papermill no chance to): the kernel and what it started in its group (pool
  workers); a model server it started watches its parent and exits with it. The requests papermill was
  awaiting are cancelled (no "Kernel died" traceback at exit). Called by the CLI on interrupts; harmless
  when none runs.
- ``interrupt_kills_kernels_first()`` (around each papermill call): Ctrl-C kills the kernels before
  KeyboardInterrupt is raised, so papermill's cleanup never asks a live kernel to shut down mid-reply.
"""
from __future__ import annotations

import contextlib
import os
import signal
import threading
import time

from jupyter_client.manager import AsyncKernelManager

_LIVE: set["RunKernelManager"] = set()
STOP_GRACE_S = 3.0  # seconds between SIGTERM and SIGKILL of a kernel's process group


class RunKernelManager(AsyncKernelManager):
    """A kernel manager whose kernels use IPC transport and are remembered until shut down."""

    def __init__(self, **kwargs):
        kwargs.setdefault("transport", "ipc")
        if kwargs["transport"] == "ipc" and "ip" not in kwargs:
            # jupyter_client's default IPC path is "kernel-ipc" relative to the working directory when no
            # connection file is known yet (papermill's case): sockets kernel-ipc-1..5 landed in the
            # repository root and stayed there after a kill. The runtime folder is where connection
            # files live; one name per kernel, so parallel runs never share a socket.
            import uuid

            from jupyter_core.paths import jupyter_runtime_dir

            runtime = jupyter_runtime_dir()
            os.makedirs(runtime, exist_ok=True)
            kwargs["ip"] = os.path.join(runtime, f"rag-kernel-{uuid.uuid4().hex[:12]}-ipc")
        super().__init__(**kwargs)

    async def start_kernel(self, **kwargs) -> None:  # type: ignore[override]
        await super().start_kernel(**kwargs)
        _LIVE.add(self)

    async def _async_interrupt_kernel(self) -> None:  # type: ignore[override]
        # jupyter_client interrupts every kernel before it asks it to shut down; a kernel still inside a
        # message handler then logs "[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel." on a clean
        # run (5 of 9 runs). The shutdown request alone stops an idle kernel, and a kernel that does not
        # stop is killed by finish_shutdown; a Ctrl-C goes through stop_kernels, not here.
        if self.shutting_down:
            return
        await super()._async_interrupt_kernel()

    async def shutdown_kernel(self, *args, **kwargs) -> None:  # type: ignore[override]
        try:
            await super().shutdown_kernel(*args, **kwargs)
        finally:
            _LIVE.discard(self)

    def kernel_pid(self) -> int | None:
        prov = getattr(self, "provisioner", None)
        return getattr(prov, "pid", None) or getattr(getattr(prov, "process", None), "pid", None)


def _alive(pid: int) -> bool:
    from .models.managed_server import _pid_alive

    if not _pid_alive(pid):
        return False
    # A zombie (our unreaped child) counts as gone.
    try:
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:
        return True


def _kill_kernel_groups() -> list[int]:
    """SIGTERM to every live kernel's process group, SIGKILL after :data:`STOP_GRACE_S`; their PIDs."""
    pids = [pid for pid in (km.kernel_pid() for km in list(_LIVE)) if pid]
    for pid in pids:
        try:
            os.killpg(pid, signal.SIGTERM)  # launched with start_new_session: its group id is its PID
        except (ProcessLookupError, PermissionError):
            pass
    deadline = time.monotonic() + STOP_GRACE_S
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in pids:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return pids


def stop_kernels() -> list[int]:
    """Kill every live kernel's process group (SIGTERM, then SIGKILL after :data:`STOP_GRACE_S`); returns
    their PIDs. The kernels' connection files and IPC sockets are removed."""
    pids = _kill_kernel_groups()
    if pids:
        _drop_pending_requests()
    for km in list(_LIVE):
        try:
            km.cleanup_connection_file()
            km.cleanup_ipc_files()
        except Exception:  # noqa: BLE001 - best effort: leftover files in the runtime folder are harmless
            pass
        _LIVE.discard(km)
    return pids


@contextlib.contextmanager
def interrupt_kills_kernels_first():
    """While a notebook runs: Ctrl-C kills the kernels' process groups *before* KeyboardInterrupt is raised.

    Why: the interrupt can land inside one of nbclient's coroutines; its ``finally`` then asks the live kernel
    to shut down (a shutdown_request on the control channel, served by ipykernel in its own thread) while
    the cell's reply is still being sent, and the kernel prints "Exception in message handler ... ZMQError:
    Socket operation on non-socket" to the run's console. A kernel already killed (it has no SIGTERM
    handler: it dies at once) has nothing to print, and nbclient's cleanup finds it dead. Only in the main
    thread (where Python runs signal handlers); elsewhere a no-op."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_sigint(signum, frame):
        if _LIVE:
            _kill_kernel_groups()
            try:
                _quiet_abandoned_tasks()
            except Exception:  # noqa: BLE001 - no event loop: nothing to quiet
                pass
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def _drop_pending_requests() -> None:
    """Cancel what papermill was awaiting when Ctrl-C left its event loop (the execute request of the kernel
    just killed): otherwise nbclient's exit-time cleanup runs the loop again, the request finds its kernel
    dead and prints "Kernel died ..." with a DeadKernelError traceback after the interrupt line."""
    import asyncio

    from jupyter_core.utils import ensure_event_loop

    try:
        loop = ensure_event_loop()
        _quiet_abandoned_tasks(loop)
        if loop.is_running() or loop.is_closed():
            return
        tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for t in tasks:
            t.cancel()
        if tasks:
            loop.run_until_complete(asyncio.wait(tasks, timeout=STOP_GRACE_S))
    except Exception:  # noqa: BLE001 - best effort: the kernels are gone either way
        pass


def _quiet_abandoned_tasks(loop=None) -> None:
    """After Ctrl-C killed the kernels, nbclient's tasks for them end with DeadKernelError (a cancelled
    request) or AssertionError (its liveness poll finds the cell's state gone); asyncio would print each as
    "Task exception was never retrieved" with a traceback when the task is collected. Those tasks were
    abandoned on purpose: the loop drops exactly that message; any other loop error is still printed."""
    if loop is None:
        from jupyter_core.utils import ensure_event_loop

        loop = ensure_event_loop()

    def handler(lp, context):
        if context.get("message") == "Task exception was never retrieved":
            return
        lp.default_exception_handler(context)

    loop.set_exception_handler(handler)
