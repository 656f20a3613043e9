"""A local OpenAI-compatible model server as a managed subprocess (the machinery the llama.cpp and vLLM servers share).

Contract (subclasses: :class:`rag.models.llama_server.LlamaServer`, :class:`rag.models.vllm_server.VLLMServer`):
- A subclass says what to run (``command()``, using ``self.port``), what must be installed first
  (``check_installed()``, raising ``ModelUnavailable`` with the fix), its name in messages (``kind``,
  ``label``), the model id ``GET /v1/models`` lists once it is ready (``alias``) and the hint printed
  when it keeps dying (``death_hint``).
- ``start()`` takes a free port, launches the command (its output to a log file in ``<tmp>/rag-llama-logs/``,
  never a pipe: a full pipe would block the server) and returns once ``GET /v1/models`` answers 200 and
  lists ``alias``; on exit or timeout before that it raises ``ModelUnavailable`` whose first line says
  what happened ("vLLM server for M exited with code 1 during start") followed by the log tail.
- Watchdog: ``ensure_alive()`` (called by the client before every request and after every connection
  error) describes a server that exited in one line (``exit_reason()``: "killed by SIGSEGV (signal 11)" /
  "exited with code 1") and restarts it at most ``max_restarts`` times in this process; the next death
  raises ``ModelUnavailable`` at once, naming the signal and quoting the log tail. ``restarts`` counts
  restarts, ``deaths`` lists each death seen.
- ``stop()`` terminates it (SIGTERM, SIGKILL after a grace period; ``kill_group``: SIGKILL goes to the whole
  process group, for servers with worker processes, also to workers left after the server exited); every started server is stopped at interpreter exit
  (``stop_all_servers`` via ``atexit``); usable as a context manager. ``base_url`` is
  ``http://127.0.0.1:<port>/v1``. A server's log is removed when it stops; logs of processes that are
  gone (kill -9) are removed at the next start.
"""
from __future__ import annotations

import atexit
import json
import os
import re
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
# The watchdog wrapper (run by path: no package import needed in the child).
SERVE = Path(__file__).with_name("_serve.py")

_LIVE: set["ManagedServer"] = set()
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


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_stale_logs(log_dir: Path = LOG_DIR) -> int:
    """Remove server logs (``<prefix>-<name>-<pid>-<port>.log``) whose owning process is gone; returns how many."""
    n = 0
    for p in log_dir.glob("*-*.log"):
        try:
            pid = int(p.stem.split("-")[-2])
        except (IndexError, ValueError):
            continue
        if pid != os.getpid() and not _pid_alive(pid):
            p.unlink(missing_ok=True)
            n += 1
    return n


class ManagedServer:
    kind = "model server"  # in messages: "<kind> for <label> ..."
    log_prefix = "server"  # log file name: <log_prefix>-<alias>-<pid>-<port>.log
    death_hint = ""  # appended to the final "died again" message
    kill_group = False  # stop(): signal the whole process group (servers with worker processes)

    def __init__(self, alias: str, label: str, start_timeout_s: float, env: dict[str, str] | None = None,
                 max_restarts: int = 1):
        self.alias = alias
        self.label = label
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
        self.notes: dict[str, str] = {}  # what the server said about itself (a subclass fills it): for manifests

    # ---- what a subclass provides ------------------------------------------------------------------
    def command(self) -> list[str]:
        raise NotImplementedError

    def check_installed(self) -> None:
        """Raise ``ModelUnavailable`` (saying what to do) when what ``command()`` runs is missing."""

    # ---- state ---------------------------------------------------------------------------------------
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

    def log_name(self) -> str:
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", self.alias)  # "Qwen/Qwen2.5-7B" -> "Qwen_Qwen2.5-7B"
        return f"{self.log_prefix}-{safe}-{os.getpid()}-{self.port}.log"

    # ---- life cycle ----------------------------------------------------------------------------------
    def start(self):
        with self._lock:
            if self.running:
                return self
            self.check_installed()
            self.port = free_port()
            LOG_DIR.mkdir(parents=True, exist_ok=True)
            clean_stale_logs()
            self._log_path = LOG_DIR / self.log_name()
            env = {**os.environ, **self.env}
            with open(self._log_path, "wb") as logf:
                self.proc = subprocess.Popen(self.command(), stdout=logf, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, start_new_session=True, env=env)
            with _LIVE_LOCK:
                _LIVE.add(self)
            t0 = time.monotonic()
            while True:
                if self.proc.poll() is not None:
                    msg = f"{self.kind} for {self.label} {self.exit_reason()} during start; its log:\n{self.log_tail()}"
                    self._release()
                    self.proc = None  # a failed start is reported here, not counted again as a death
                    raise ModelUnavailable(msg)
                if self._ready():
                    return self
                if time.monotonic() - t0 > self.start_timeout_s:
                    tail = self.log_tail()
                    self.stop()
                    raise ModelUnavailable(f"{self.kind} for {self.label} did not answer within "
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
                    f"{self.kind} for {self.label} {reason} (after {self.restarts} restart(s); "
                    f"deaths: {', '.join(self.deaths)}).{(' ' + self.death_hint) if self.death_hint else ''} "
                    f"Server log tail:\n{tail}")
            self.restarts += 1
            print(f"warning: {self.kind} for {self.label} {reason}; restarting it "
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

    def _signal(self, proc: subprocess.Popen, sig: int) -> None:
        """SIGTERM to the server (a wrapper passes it on: one orderly shutdown); SIGKILL to its whole process
        group when ``kill_group`` (start_new_session: the server leads its own group)."""
        try:
            if self.kill_group and sig == signal.SIGKILL:
                os.killpg(proc.pid, sig)
            else:
                proc.send_signal(sig)
        except ProcessLookupError:
            pass

    def stop(self) -> None:
        with self._lock:
            proc = self.proc
            if proc is not None and proc.poll() is None:
                self._signal(proc, signal.SIGTERM)
                try:
                    proc.wait(timeout=_STOP_GRACE_S)
                except subprocess.TimeoutExpired:
                    self._signal(proc, signal.SIGKILL)
                    proc.wait()
            if proc is not None and self.kill_group:
                self._signal(proc, signal.SIGKILL)  # workers left behind by a leader that exited
            self._release()
            self.proc = None  # a stopped server is not "dead": the next start() is a fresh start

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def stop_all_servers() -> None:
    with _LIVE_LOCK:
        live = list(_LIVE)
    for s in live:
        s.stop()


atexit.register(stop_all_servers)
