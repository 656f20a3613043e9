"""What keeps a run folder sane: writable places checked first, one writer at a time, clean interrupts.

Contracts:
- ``require_writable(what, path)``: makes ``path`` (a folder) if needed and writes + removes one probe file
  in it; :class:`Unwritable` ``"<what>: cannot write <path> (<reason>)"`` otherwise (a user error: the CLI
  prints ``error: <message>`` and exits 2). ``check_places(cfg)`` does it for the run's output and cache
  folders, before any stage starts (every entry point calls it through ``rag.pipeline.prepare``).
- ``RunLock(run_dir, command)``: ``outputs/<run>/run.lock`` holds ``{"pid", "host", "started", "command"}``
  of the one process writing the folder. ``acquire(wait=False)`` takes it or raises :class:`RunLocked`
  naming the holder and how to wait (``--wait``) or use another ``--run``; ``wait=True`` blocks until the
  holder is gone. The lock is an ``flock`` on the file: the kernel drops it when its owner dies (kill -9
  included), so a dead owner's file is simply taken over; ``release()`` (also at exit) removes the file.
  The driver holds it; notebook kernels, pool workers and Ray tasks run under it (they never take it).
- Progress for interrupts: the item loop calls ``note_progress(run_dir, stage, done, total)`` (one small
  ``outputs/<run>/.progress.json``); ``interrupted_at(run_dir)`` reads it back. The note carries the
  run's token (set by the lock holder, inherited by notebook kernels through :data:`TOKEN_ENV`), so an
  older run's note is never read and code running under no lock writes none.
"""
from __future__ import annotations

import json
import os
import socket
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

LOCK_FILE = "run.lock"
PROGRESS_FILE = ".progress.json"  # in the run folder: the item loop's latest count, for interrupts
TOKEN_ENV = "RAG_RUN_TOKEN"  # this run's id; notebook kernels inherit it from the driver
WAIT_POLL_S = 1.0  # seconds between tries of a waiting run


class Unwritable(Exception):
    """A folder the command must write cannot be written (a user error; the message is the whole line)."""


class RunLocked(Exception):
    """Another live process holds the run folder's lock (a user error; the message is the whole line)."""


def require_writable(what: str, path: Path | str, create: bool = True) -> Path:
    """``path`` is (or, ``create=False``: could be made) a folder where a file can be created; else
    :class:`Unwritable` (see module docstring). ``create=False`` writes nothing lasting: the probe goes
    to the nearest existing folder above ``path``."""
    path = Path(path)
    try:
        if create:
            path.mkdir(parents=True, exist_ok=True)
            where = path
        else:
            where = next(p for p in (path, *path.parents) if p.exists())
            if not where.is_dir():
                raise NotADirectoryError(20, "Not a directory", str(where))
        fd, probe = tempfile.mkstemp(prefix=".write-check-", dir=where)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise Unwritable(f"{what}: cannot write {path} ({e.strerror or type(e).__name__})") from None
    return path


def check_places(cfg) -> None:
    """The folders every run writes: ``outputs/<run>/`` and the model-call cache (made by the stages;
    checked here without making them)."""
    require_writable("output folder", cfg.run_dir, create=False)
    require_writable("cache folder", cfg.path("cache_dir"), create=False)


# ---- one writer per run folder ---------------------------------------------------------------------
def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


class RunLock:
    """The run folder's lock (see module docstring)."""

    def __init__(self, run_dir: Path | str, command: str = ""):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK_FILE
        self.command = command
        self.fd: int | None = None
        self.token = ""

    def holder(self) -> dict:
        """What the lock file says (``{}`` when it is missing or unreadable)."""
        try:
            return json.loads(self.path.read_text() or "{}")
        except (OSError, ValueError):
            return {}

    def _try(self) -> bool:
        import fcntl

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        try:  # the holder before us may have removed the file after we opened it: lock the file on disk
            same = os.path.samestat(os.fstat(fd), os.stat(self.path))
        except FileNotFoundError:
            same = False
        if not same:
            os.close(fd)
            return False
        self.fd = fd
        return True

    def acquire(self, wait: bool = False) -> "RunLock":
        self.run_dir.mkdir(parents=True, exist_ok=True)
        said = False
        while not self._try():
            if not wait:
                raise RunLocked(self.busy_message())
            if not said:
                print(f"waiting: {self.busy_message(hint=False)}", file=sys.stderr, flush=True)
                said = True
            time.sleep(WAIT_POLL_S)
        info = {"pid": os.getpid(), "host": socket.gethostname(), "started": _now(), "command": self.command}
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, (json.dumps(info) + "\n").encode(), 0)
        self.token = os.environ[TOKEN_ENV] = f"{info['host']}:{info['pid']}:{time.time_ns()}"  # kernels inherit it
        import atexit

        atexit.register(self.release)
        return self

    def busy_message(self, hint: bool = True) -> str:
        h = self.holder()
        who = (f"PID {h.get('pid', '?')} on {h.get('host', '?')}, started {h.get('started', '?')}"
               + (f": {h['command']}" if h.get("command") else ""))
        msg = f"{self.run_dir} is in use by another run ({who})"
        return msg + ("; wait for it with --wait, or write elsewhere with another --run" if hint else "")

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            os.unlink(self.path)  # before unlocking: a waiter that opened the old file retries on the new one
        except FileNotFoundError:
            pass
        os.close(self.fd)
        self.fd = None
        if os.environ.get(TOKEN_ENV) == self.token:
            del os.environ[TOKEN_ENV]

    def __enter__(self) -> "RunLock":
        return self if self.fd is not None else self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


# ---- progress notes for the interrupt message ------------------------------------------------------
def note_progress(run_dir: Path, stage: str, done: int, total: int) -> None:
    """The item loop's count (at a stage's start and after each item); only under a run's lock."""
    token = os.environ.get(TOKEN_ENV)
    if not token:  # not under a run's lock (a unit test, a notebook opened by hand): nobody reads it
        return
    from .artifacts import write_json_atomic

    write_json_atomic(Path(run_dir) / PROGRESS_FILE, {"stage": stage, "done": done, "total": total, "token": token})


def interrupted_at(run_dir: Path) -> tuple[str, int, int] | None:
    """(stage, done, total) of this run's latest progress note, or None."""
    try:
        d = json.loads((Path(run_dir) / PROGRESS_FILE).read_text())
    except (OSError, ValueError):
        return None
    if not os.environ.get(TOKEN_ENV) or d.get("token") != os.environ[TOKEN_ENV]:
        return None
    return d["stage"], int(d["done"]), int(d["total"])


def interrupt_message(stage: str | None, note: tuple[str, int, int] | None, resume: str) -> str:
    """``interrupted at <stage> (<n> of <m> items done); resume with: <command>``."""
    if note and (stage is None or note[0] == stage):
        where = f"{note[0]} ({note[1]} of {note[2]} items done)"
    else:
        where = f"{stage} (before its items started)" if stage else "setup (no stage had started)"
    return f"interrupted at {where}; resume with: {resume}"
