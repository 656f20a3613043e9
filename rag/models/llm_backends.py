"""The four LLM backends' endpoints (rag.models.llm's clients connect through these): a local llama.cpp
server, a local vLLM server, OpenAI, any OpenAI-compatible server.

Contract:
- ``check_backend(cfg)``: cheap up-front checks (no server start, no request): weights / package / key
  present; raises ``ModelUnavailable`` saying what to do.
- ``endpoint(cfg, model) -> (server | None, base_url, api_key)``: llama_cpp and vllm start (or reuse) their
  server, shared per settings in this process (``model``: the name a llama.cpp server answers to); the
  remote backends have no server. Raises ``ModelUnavailable`` as ``check_backend`` does.
"""
from __future__ import annotations

import os

from .base import ModelUnavailable


def _no_key(c) -> ModelUnavailable:
    return ModelUnavailable(f"llm.backend=openai needs an API key in ${c.api_key_env}: export it, "
                            "or use the offline preset (local llama.cpp)")


def _no_base_url() -> ModelUnavailable:
    return ModelUnavailable("llm.backend=openai_compatible needs llm.base_url "
                            "(e.g. http://127.0.0.1:8000/v1 of a running vLLM server)")


def check_backend(cfg) -> None:
    """Raise ``ModelUnavailable`` when ``cfg.llm``'s backend cannot run here (see the module docstring)."""
    c = cfg.llm
    if c.backend == "llama_cpp":
        import importlib.util

        from .llama_logits import PINNED
        from .weights import gguf_missing_hint, gguf_path

        path = gguf_path(c.gguf, cfg.path("models_dir"))
        if not path.is_file():
            raise ModelUnavailable(gguf_missing_hint(c.gguf, cfg.path("models_dir")))
        if importlib.util.find_spec("llama_cpp") is None:
            raise ModelUnavailable("llama-cpp-python is not installed: run `make setup` "
                                   f"(pip install 'llama-cpp-python[server]=={PINNED}')")
    elif c.backend == "vllm":
        from .vllm_server import get_vllm_server

        get_vllm_server(cfg).check_installed()
    elif c.backend == "openai" and not os.environ.get(c.api_key_env):
        raise _no_key(c)
    elif c.backend == "openai_compatible" and not c.base_url:
        raise _no_base_url()


def endpoint(cfg, model: str):
    """``(server or None, base_url, api_key)`` of ``cfg.llm``'s backend (see the module docstring)."""
    c = cfg.llm
    if c.backend == "llama_cpp":
        from .device import cuda_env, n_gpu_layers, run_device
        from .llama_server import get_server
        from .weights import gguf_path

        # One server per (weights, n_ctx, n_threads) in this process, shared by every client using it;
        # start() is a no-op while it runs and restarts it after shutdown() / a crash.
        server = get_server(gguf_path(c.gguf, cfg.path("models_dir")), model, c.n_ctx,
                            c.n_threads, c.server_start_timeout_s, n_threads_batch=c.n_threads_batch,
                            env={**cuda_env(run_device(cfg)), **dict(c.server_env)},
                            max_restarts=c.server_max_restarts,
                            n_gpu_layers=n_gpu_layers(cfg), flash_attn=c.flash_attn).start()
        return server, server.base_url, "local"
    if c.backend == "vllm":
        from .vllm_server import get_vllm_server

        server = get_vllm_server(cfg).start()  # shared per settings, as for llama.cpp
        return server, server.base_url, os.environ.get(c.api_key_env) or "local"
    if c.backend == "openai":
        key = os.environ.get(c.api_key_env)
        if not key:
            raise _no_key(c)
        return None, c.base_url, key
    if not c.base_url:
        raise _no_base_url()
    return None, c.base_url, os.environ.get(c.api_key_env) or "not-needed"
