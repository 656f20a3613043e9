"""A local llama.cpp server (llama-cpp-python's OpenAI-compatible server) as a managed subprocess.

Contract: ``LlamaServer(gguf_path, alias, n_ctx, n_threads, start_timeout_s, n_threads_batch=None,
env=None, max_restarts=1, n_gpu_layers=0, flash_attn=False)``; ``start()`` launches ``python -m llama_cpp.server
--model M --host 127.0.0.1 --port <free> --n_ctx .. --n_threads .. --n_threads_batch .. --n_gpu_layers ..
--flash_attn ..`` (through ``rag.models._serve``, which also
exits when this process dies, even by kill -9) and returns once ``GET /v1/models`` answers 200; on exit
or timeout before that it raises ``ModelUnavailable`` with the tail of the server's log.

Watchdog: ``ensure_alive()`` is called by the client before every request and after every connection
error. A server that has exited (segfault, OOM kill, bad model file) is described in one line
(``exit_reason()``: "killed by SIGSEGV (signal 11)" / "exited with code 1") and restarted at most
``max_restarts`` times in this process; the next death raises ``ModelUnavailable`` at once, naming the
signal and quoting the log tail — no retry loop against a dead port. ``restarts`` counts restarts.

The machinery (port, readiness, log, watchdog, stop) is :class:`rag.models.managed_server.ManagedServer`,
shared with the vLLM server; this module adds the llama.cpp command and install check, and after each
start ``notes["logits_patch"]``: "installed" or "refused (version X)" as the server logged it
(:mod:`rag.models.llama_logits`), which 06 writes into its manifest.
``n_gpu_layers`` (``--n_gpu_layers``) is 0 on CPU (llama.cpp's own default), -1 = every layer on the GPU.

``stop()`` terminates it (kill after a grace period); it is also registered with ``atexit`` and usable
as a context manager. ``base_url`` is ``http://127.0.0.1:<port>/v1``. The server's output goes to a log
file in ``<tmp>/rag-llama-logs/`` (never a pipe: a full pipe would block the server); a log is removed
when its server stops, and logs left by processes that are gone (kill -9) are removed at the next start.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from . import llama_logits
from .base import ModelUnavailable
# The shared machinery; re-exported here (tests and older callers use rag.models.llama_server.<name>).
from .managed_server import (LOG_DIR, SERVE, _LIVE, _LIVE_LOCK, ManagedServer, clean_stale_logs,  # noqa: F401
                             describe_exit, free_port, stop_all_servers)


# Bytes read from the start of a server log for the logits patch's line (_serve.py writes it before the
# server itself starts logging).
_LOG_HEAD_BYTES = 64_000


class LlamaServer(ManagedServer):
    kind = "llama.cpp server"
    log_prefix = "llama"
    death_hint = "Check the build with `python -m rag.models --check`; see README 'When the model check fails'."

    def __init__(self, gguf_path: Path | str, alias: str, n_ctx: int, n_threads: int, start_timeout_s: float,
                 n_threads_batch: int | None = None, env: dict[str, str] | None = None, max_restarts: int = 1,
                 n_gpu_layers: int = 0, flash_attn: bool = False):
        self.gguf_path = Path(gguf_path)
        super().__init__(alias, self.gguf_path.name, start_timeout_s, env=env, max_restarts=max_restarts)
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.n_threads_batch = n_threads_batch or n_threads
        self.n_gpu_layers = n_gpu_layers
        self.flash_attn = flash_attn

    def command(self) -> list[str]:
        # _serve.py (run by path: no package import needed) starts llama_cpp.server with a watchdog that exits
        # when this process is gone.
        return [sys.executable, str(SERVE), str(os.getpid()),
                "--model", str(self.gguf_path), "--model_alias", self.alias, "--host", "127.0.0.1",
                "--port", str(self.port), "--n_ctx", str(self.n_ctx), "--n_threads", str(self.n_threads),
                "--n_threads_batch", str(self.n_threads_batch), "--n_gpu_layers", str(self.n_gpu_layers),
                "--flash_attn", "true" if self.flash_attn else "false"]

    def start(self):
        """Start (see ``ManagedServer.start``), then read from its log whether the logits patch is installed."""
        super().start()
        self.read_notes()
        return self

    def read_notes(self) -> None:
        """``notes["logits_patch"]`` from the head of the running server's log (``rag.models._serve`` writes
        the line before the server starts logging); unchanged when there is no log or no such line."""
        with self._lock:
            if self._log_path is None or not self._log_path.exists():
                return
            with open(self._log_path, "rb") as f:
                found = llama_logits.logged_status(f.read(_LOG_HEAD_BYTES).decode(errors="replace"))
            if found:
                self.notes["logits_patch"] = found

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


_SERVERS: dict[tuple, LlamaServer] = {}


def get_server(gguf_path: Path | str, alias: str, n_ctx: int, n_threads: int, start_timeout_s: float,
               n_threads_batch: int | None = None, env: dict[str, str] | None = None,
               max_restarts: int = 1, n_gpu_layers: int = 0, flash_attn: bool = False) -> LlamaServer:
    """The process-wide server object for these settings (not started: call ``start()``)."""
    key = (str(gguf_path), n_ctx, n_threads, n_threads_batch, tuple(sorted((env or {}).items())), n_gpu_layers,
           flash_attn)
    with _LIVE_LOCK:
        if key not in _SERVERS:
            _SERVERS[key] = LlamaServer(gguf_path, alias, n_ctx, n_threads, start_timeout_s,
                                        n_threads_batch=n_threads_batch, env=env, max_restarts=max_restarts,
                                        n_gpu_layers=n_gpu_layers, flash_attn=flash_attn)
        return _SERVERS[key]
