"""A local llama.cpp server (llama-cpp-python's OpenAI-compatible server) as a managed subprocess.

Contract: ``LlamaServer(gguf_path, alias, n_ctx, n_threads, start_timeout_s)``; ``start()`` launches
``python -m llama_cpp.server --model M --host 127.0.0.1 --port <free> --n_ctx .. --n_threads ..`` (through
``rag.models._serve``, which also exits when this process dies, even by kill -9) and
returns once ``GET /v1/models`` answers 200; on exit or timeout before that it raises ``ModelUnavailable``
with the tail of the server's log. ``stop()`` terminates it (kill after a grace period); it is also
registered with ``atexit`` and usable as a context manager. ``base_url`` is ``http://127.0.0.1:<port>/v1``.
The server's output goes to a temp log file (never a pipe: a full pipe would block the server).
"""
from __future__ import annotations

import atexit
import os
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

_LIVE: set["LlamaServer"] = set()
_LIVE_LOCK = threading.Lock()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    def __init__(self, gguf_path: Path | str, alias: str, n_ctx: int, n_threads: int, start_timeout_s: float):
        self.gguf_path = Path(gguf_path)
        self.alias = alias
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.start_timeout_s = start_timeout_s
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None
        self._log_path: Path | None = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self) -> str:
        try:
            return self._log_path.read_text(errors="replace")[-_LOG_TAIL_CHARS:] if self._log_path else ""
        except FileNotFoundError:
            return ""

    def command(self) -> list[str]:
        # _serve.py (run by path: no package import needed) starts llama_cpp.server with a watchdog that exits
        # when this process is gone.
        return [sys.executable, str(Path(__file__).with_name("_serve.py")), str(os.getpid()),
                "--model", str(self.gguf_path), "--model_alias", self.alias, "--host", "127.0.0.1",
                "--port", str(self.port), "--n_ctx", str(self.n_ctx), "--n_threads", str(self.n_threads),
                "--n_threads_batch", str(self.n_threads)]

    def start(self) -> "LlamaServer":
        with self._lock:
            if self.running:
                return self
            if not self.gguf_path.exists():
                raise ModelUnavailable(f"{self.gguf_path} not found: run `make models` "
                                       f"(python -m rag.models.weights --ensure {self.gguf_path.stem})")
            try:
                import llama_cpp  # noqa: F401  (only to give a clear error; the server runs in a subprocess)
            except ImportError as e:
                raise ModelUnavailable("llama-cpp-python is not installed: run `make setup` "
                                       "(pip install 'llama-cpp-python[server]==0.3.36')") from e
            self.port = free_port()
            fd, log = tempfile.mkstemp(prefix=f"llama-server-{self.alias}-", suffix=".log")
            self._log_path = Path(log)
            with os.fdopen(fd, "wb") as logf:
                self.proc = subprocess.Popen(self.command(), stdout=logf, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, start_new_session=True)
            with _LIVE_LOCK:
                _LIVE.add(self)
            t0 = time.monotonic()
            while True:
                if self.proc.poll() is not None:
                    tail = self.log_tail()
                    self.stop()
                    raise ModelUnavailable(f"llama.cpp server for {self.gguf_path.name} exited with code "
                                           f"{self.proc.returncode} during start; its log:\n{tail}")
                if self._ready():
                    return self
                if time.monotonic() - t0 > self.start_timeout_s:
                    tail = self.log_tail()
                    self.stop()
                    raise ModelUnavailable(f"llama.cpp server for {self.gguf_path.name} did not answer within "
                                           f"{self.start_timeout_s:.0f}s (llm.server_start_timeout_s); log:\n{tail}")
                time.sleep(_POLL_S)

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(self.base_url + "/models", timeout=2) as r:
                return r.status == 200
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            return False

    def stop(self) -> None:
        proc = self.proc
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=_STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        with _LIVE_LOCK:
            _LIVE.discard(self)
        if self._log_path is not None:
            self._log_path.unlink(missing_ok=True)
            self._log_path = None

    def __enter__(self) -> "LlamaServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


_SERVERS: dict[tuple, LlamaServer] = {}


def get_server(gguf_path: Path | str, alias: str, n_ctx: int, n_threads: int, start_timeout_s: float) -> LlamaServer:
    """The process-wide server object for these settings (not started: call ``start()``)."""
    key = (str(gguf_path), n_ctx, n_threads)
    with _LIVE_LOCK:
        if key not in _SERVERS:
            _SERVERS[key] = LlamaServer(gguf_path, alias, n_ctx, n_threads, start_timeout_s)
        return _SERVERS[key]


def stop_all_servers() -> None:
    with _LIVE_LOCK:
        live = list(_LIVE)
    for s in live:
        s.stop()


atexit.register(stop_all_servers)
