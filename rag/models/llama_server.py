"""A local llama.cpp server (llama-cpp-python's OpenAI-compatible server) as a managed subprocess.

Contract: ``LlamaServer(gguf_path, alias, n_ctx, n_threads, start_timeout_s, n_threads_batch=None,
env=None, max_restarts=1)``; ``start()`` launches ``python -m llama_cpp.server --model M --host 127.0.0.1
--port <free> --n_ctx .. --n_threads .. --n_threads_batch ..`` (through ``rag.models._serve``, which also
exits when this process dies, even by kill -9) and returns once ``GET /v1/models`` answers 200; on exit
or timeout before that it raises ``ModelUnavailable`` with the tail of the server's log.

Watchdog: ``ensure_alive()`` is called by the client before every request and after every connection
error. A server that has exited (segfault, OOM kill, bad model file) is described in one line
(``exit_reason()``: "killed by SIGSEGV (signal 11)" / "exited with code 1") and restarted at most
``max_restarts`` times in this process; the next death raises ``ModelUnavailable`` at once, naming the
signal and quoting the log tail — no retry loop against a dead port. ``restarts`` counts restarts.

``stop()`` terminates it (kill after a grace period); it is also registered with ``atexit`` and usable
as a context manager. ``base_url`` is ``http://127.0.0.1:<port>/v1``. The server's output goes to a log
file in ``<tmp>/rag-llama-logs/`` (never a pipe: a full pipe would block the server); a log is removed
when its server stops, and logs left by processes that are gone (kill -9) are removed at the next start.
"""
from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from .base import ModelUnavailable

# Seconds between readiness polls, and granted to the server to exit after SIGTERM before SIGKILL.
_POLL_S = 0.5
_STOP_GRACE_S = 10.0
# Characters of the server log quoted in errors.
_LOG_TAIL_CHARS = 3000
LOG_DIR = Path(tempfile.gettempdir()) / "rag-llama-logs"

_LIVE: set["LlamaServer"] = set()
_LIVE_LOCK = threading.Lock()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def describe_exit(returncode: int | None) -> str:
    """A process return code in words: negative = killed by that signal (POSIX Popen convention)."""
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"killed by {name} (signal {-returncode})"
    return f"exited with code {returncode}"


def safe_name(alias: str) -> str:
    """``alias`` as one file-name part: characters other than ``A-Za-z0-9._-`` become ``_`` (a model alias
    may come from a path)."""
    import re

    return re.sub(r"[^A-Za-z0-9._-]", "_", alias).strip(".") or "model"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_stale_logs(log_dir: Path = LOG_DIR) -> int:
    """Remove server logs whose owning process (the pid in the name) is gone; returns how many."""
    n = 0
    for p in log_dir.glob("llama-*.log"):
        try:
            pid = int(p.stem.split("-")[-2])
        except (IndexError, ValueError):
            continue
        if pid != os.getpid() and not _pid_alive(pid):
            p.unlink(missing_ok=True)
            n += 1
    return n


class LlamaServer:
    def __init__(self, gguf_path: Path | str, alias: str, n_ctx: int, n_threads: int, start_timeout_s: float,
                 n_threads_batch: int | None = None, env: dict[str, str] | None = None, max_restarts: int = 1):
        self.gguf_path = Path(gguf_path)
        self.alias = alias
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.n_threads_batch = n_threads_batch or n_threads
        self.env = dict(env or {})
        self.start_timeout_s = start_timeout_s
        self.max_restarts = max_restarts
        self.restarts = 0
        self.deaths: list[str] = []  # exit_reason() of each death seen, in order
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None
        self._log_path: Path | None = None
        self._last_tail = ""
        self._lock = threading.RLock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def dead(self) -> bool:
        """Started and then exited without ``stop()``."""
        return self.proc is not None and self.proc.poll() is not None

    def exit_reason(self) -> str:
        return describe_exit(self.proc.returncode if self.proc is not None else None)

    def log_tail(self) -> str:
        try:
            return self._log_path.read_text(errors="replace")[-_LOG_TAIL_CHARS:] if self._log_path else self._last_tail
        except FileNotFoundError:
            return self._last_tail

    def command(self) -> list[str]:
        # _serve.py (run by path: no package import needed) starts llama_cpp.server with a watchdog that exits
        # when this process is gone.
        return [sys.executable, str(Path(__file__).with_name("_serve.py")), str(os.getpid()),
                "--model", str(self.gguf_path), "--model_alias", self.alias, "--host", "127.0.0.1",
                "--port", str(self.port), "--n_ctx", str(self.n_ctx), "--n_threads", str(self.n_threads),
                "--n_threads_batch", str(self.n_threads_batch)]

    def check_installed(self) -> None:
        if not self.gguf_path.exists():
            from .weights import GGUF

            hint = (f"run `make models` (python -m rag.models.weights --ensure {self.gguf_path.stem})"
                    if self.gguf_path.stem in GGUF else "check llm.gguf")
            raise ModelUnavailable(f"{self.gguf_path} not found: {hint}")
        try:
            import llama_cpp  # noqa: F401  (only to give a clear error; the server runs in a subprocess)
        except ImportError as e:
            raise ModelUnavailable("llama-cpp-python is not installed: run `make setup`") from e

    def start(self) -> "LlamaServer":
        with self._lock:
            if self.running:
                return self
            self.check_installed()
            self.port = free_port()
            LOG_DIR.mkdir(parents=True, exist_ok=True)
            clean_stale_logs()
            self._log_path = LOG_DIR / f"llama-{safe_name(self.alias)}-{os.getpid()}-{self.port}.log"
            env = {**os.environ, **self.env}
            with open(self._log_path, "wb") as logf:
                self.proc = subprocess.Popen(self.command(), stdout=logf, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, start_new_session=True, env=env)
            with _LIVE_LOCK:
                _LIVE.add(self)
            t0 = time.monotonic()
            while True:
                if self.proc.poll() is not None:
                    msg = (f"llama.cpp server for {self.gguf_path.name} {self.exit_reason()} during start; "
                           f"its log:\n{self.log_tail()}")
                    self._release()
                    self.proc = None  # a failed start is reported here, not counted again as a death
                    raise ModelUnavailable(msg)
                if self._ready():
                    return self
                if time.monotonic() - t0 > self.start_timeout_s:
                    tail = self.log_tail()
                    self.stop()
                    raise ModelUnavailable(f"llama.cpp server for {self.gguf_path.name} did not answer within "
                                           f"{self.start_timeout_s:.0f}s (llm.server_start_timeout_s); log:\n{tail}")
                time.sleep(_POLL_S)

    def ensure_alive(self) -> bool:
        """Restart a server that died since it was started; True when it did restart.

        Raises ``ModelUnavailable`` (one first line: model, how it died, restarts so far; then the log
        tail) once ``max_restarts`` restarts are used up. A server never started is left alone.
        """
        with self._lock:
            if not self.dead:
                return False
            reason = self.exit_reason()
            tail = self.log_tail()
            self.deaths.append(reason)
            self._release()
            if self.restarts >= self.max_restarts:
                raise ModelUnavailable(
                    f"llama.cpp server for {self.gguf_path.name} {reason} (after {self.restarts} restart(s); "
                    f"deaths: {', '.join(self.deaths)}). Check the build with `python -m rag.models --check`; "
                    f"see README 'When the model check fails'. Server log tail:\n{tail}")
            self.restarts += 1
            print(f"warning: llama.cpp server for {self.gguf_path.name} {reason}; restarting it "
                  f"({self.restarts} of {self.max_restarts})", file=sys.stderr, flush=True)
            self.start()
            return True

    def _ready(self) -> bool:
        """Our server answers: /v1/models lists our alias (another process that grabbed the port between
        free_port() and the server's bind would answer with other models; ours then exits, reported above)."""
        try:
            with urllib.request.urlopen(self.base_url + "/models", timeout=2) as r:
                if r.status != 200:
                    return False
                ids = [m.get("id") for m in json.loads(r.read() or b"{}").get("data", [])]
                return self.alias in ids
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError, ValueError, AttributeError):
            return False

    def _release(self) -> None:
        """Forget the (exited) process and remove its log, keeping the log tail for later messages."""
        if self._log_path is not None:
            self._last_tail = self.log_tail()
            self._log_path.unlink(missing_ok=True)
            self._log_path = None
        with _LIVE_LOCK:
            _LIVE.discard(self)

    def stop(self) -> None:
        with self._lock:
            proc = self.proc
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=_STOP_GRACE_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            self._release()
            self.proc = None  # a stopped server is not "dead": the next start() is a fresh start

    def __enter__(self) -> "LlamaServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


_SERVERS: dict[tuple, LlamaServer] = {}


def get_server(gguf_path: Path | str, alias: str, n_ctx: int, n_threads: int, start_timeout_s: float,
               n_threads_batch: int | None = None, env: dict[str, str] | None = None,
               max_restarts: int = 1) -> LlamaServer:
    """The process-wide server object for these settings (not started: call ``start()``)."""
    key = (str(gguf_path), n_ctx, n_threads, n_threads_batch, tuple(sorted((env or {}).items())))
    with _LIVE_LOCK:
        if key not in _SERVERS:
            _SERVERS[key] = LlamaServer(gguf_path, alias, n_ctx, n_threads, start_timeout_s,
                                        n_threads_batch=n_threads_batch, env=env, max_restarts=max_restarts)
        return _SERVERS[key]


def stop_all_servers() -> None:
    with _LIVE_LOCK:
        live = list(_LIVE)
    for s in live:
        s.stop()


atexit.register(stop_all_servers)
