"""A local vLLM server (``vllm serve``, OpenAI-compatible) as a managed subprocess, for ``llm.backend = "vllm"``.

Contract: ``VLLMServer(model, served_name, vcfg, max_model_len, start_timeout_s, env=None, max_restarts=1)``
runs ``<llm.vllm.command> serve MODEL --host 127.0.0.1 --port <free> --served-model-name NAME
--gpu-memory-utilization .. --max-model-len .. --tensor-parallel-size .. <llm.vllm.extra_args>`` through
``rag.models._serve --exec`` (which stops it when this process dies, even by kill -9, and exits the way the
server did). Everything else (readiness on ``/v1/models`` listing NAME, log file and its tail in errors,
the ``ensure_alive`` watchdog with at most ``max_restarts`` restarts, ``stop()`` at exit) is
:class:`rag.models.managed_server.ManagedServer`, exactly as for the llama.cpp server. ``stop()`` ends
the whole process group (vLLM's engine runs in worker processes).

``check_installed()`` raises ``ModelUnavailable`` when the command is not found (``make gpu`` installs vLLM).
``get_vllm_server(cfg)`` returns the process-wide server for a run config (not started).
"""
from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

from .base import ModelUnavailable
from .managed_server import _LIVE_LOCK, SERVE, ManagedServer


def resolve_command(command: str) -> list[str]:
    """``llm.vllm.command`` split like a shell would. A bare program name is looked up on PATH and beside this
    Python (a venv's console script is there even when the venv is not activated); a relative path
    (".venv-vllm/bin/vllm", what `make gpu` installs) is relative to the project root. [] when empty."""
    from ..core.config import PROJECT_ROOT

    parts = shlex.split(command or "")
    if not parts:
        return []
    prog = parts[0]
    if os.sep not in prog:
        found = shutil.which(prog) or shutil.which(prog, path=str(Path(sys.executable).parent))
        if found:
            parts[0] = found
    elif not os.path.isabs(prog):
        parts[0] = str(PROJECT_ROOT / prog)
    return parts


class VLLMServer(ManagedServer):
    kind = "vLLM server"
    log_prefix = "vllm"
    death_hint = ("Common causes: CUDA out of memory (lower llm.vllm.gpu_memory_utilization or "
                  "llm.vllm.max_model_len), a model too large for the GPU, a vLLM/torch mismatch (`make gpu`).")
    kill_group = True

    def __init__(self, model: str, served_name: str, vcfg, max_model_len: int, start_timeout_s: float,
                 env: dict[str, str] | None = None, max_restarts: int = 1):
        super().__init__(served_name, model, start_timeout_s, env=env, max_restarts=max_restarts)
        self.model = model
        self.vcfg = vcfg
        self.max_model_len = max_model_len

    def serve_args(self) -> list[str]:
        v = self.vcfg
        return ["serve", self.model, "--host", "127.0.0.1", "--port", str(self.port),
                "--served-model-name", self.alias, "--gpu-memory-utilization", f"{v.gpu_memory_utilization:g}",
                "--max-model-len", str(self.max_model_len), "--tensor-parallel-size", str(v.tensor_parallel_size),
                *v.extra_args]

    def command(self) -> list[str]:
        return [sys.executable, str(SERVE), str(os.getpid()), "--exec", *resolve_command(self.vcfg.command),
                *self.serve_args()]

    def check_installed(self) -> None:
        parts = resolve_command(self.vcfg.command)
        if not parts:
            raise ModelUnavailable("llm.vllm.command is empty: set it to the vllm executable (default \"vllm\")")
        prog = parts[0]
        if not (os.path.isfile(prog) and os.access(prog, os.X_OK)):
            raise ModelUnavailable(f"llm.backend=vllm: {prog!r} (llm.vllm.command) was not found: install vLLM "
                                   "with `make gpu` on the CUDA machine, or point llm.vllm.command at it; a vLLM "
                                   "server you start yourself is llm.backend=openai_compatible + llm.base_url")


_SERVERS: dict[tuple, VLLMServer] = {}


def server_settings(cfg) -> dict:
    """The VLLMServer arguments for a run config (device "cuda:N" pins the server to that GPU)."""
    from .device import cuda_env, run_device

    c, v = cfg.llm, cfg.llm.vllm
    env = {**cuda_env(run_device(cfg)), **dict(v.env)} if v.tensor_parallel_size == 1 else dict(v.env)
    return dict(model=c.model, served_name=v.served_model_name or c.model, vcfg=v,
                max_model_len=v.max_model_len or c.n_ctx, start_timeout_s=c.server_start_timeout_s, env=env,
                max_restarts=c.server_max_restarts)


def get_vllm_server(cfg) -> VLLMServer:
    """The process-wide vLLM server for these settings (not started: call ``start()``)."""
    s = server_settings(cfg)
    key = (s["model"], s["served_name"], s["vcfg"].model_dump_json(), s["max_model_len"], tuple(sorted(s["env"].items())))
    with _LIVE_LOCK:
        if key not in _SERVERS:
            _SERVERS[key] = VLLMServer(**s)
        return _SERVERS[key]
