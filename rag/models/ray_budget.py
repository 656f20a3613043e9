"""The cluster-wide LLM budget (:class:`SharedRateLimiter`): one named Ray actor per LLM endpoint (backend,
URL, key variable, model, limits) holding its requests/min and tokens/min buckets; every worker books through
it (``RateLimiter.reserve``) and sleeps the answer, so N workers stay within one API key's budget.
:func:`limiter_for` (what every LLM client takes from) picks it inside Ray workers; ray is imported lazily.
"""
from __future__ import annotations

import hashlib
import time
from typing import Any

from ..core.ray_executor import DRIVER_START, NAMESPACE
from .ratelimit import RateLimiter


class _Budget:
    """The actor: the endpoint's buckets; ``reserve`` books and answers the seconds to wait."""

    def __init__(self, requests_per_minute: int, tokens_per_minute: int):
        self.limiter = RateLimiter(requests_per_minute, tokens_per_minute)
        self.booked = 0

    def reserve(self, tokens: int = 0) -> float:
        self.booked += 1
        return self.limiter.reserve(tokens)

    def count(self) -> int:
        return self.booked


_BUDGETS: dict[str, Any] = {}  # handles held by this process (a named actor lives while its owner does)


def budget_name(llm) -> str:
    ident = "|".join(map(str, (llm.backend, llm.base_url or "", llm.api_key_env, llm.model,
                               llm.requests_per_minute, llm.tokens_per_minute)))
    return "rag-llm-budget-" + hashlib.sha256(ident.encode()).hexdigest()[:16]


def budget_actor(llm):
    """The named budget actor of ``llm``'s endpoint (created by the first caller, found by the others)."""
    import ray

    name = budget_name(llm)
    key = f"{ray.get_runtime_context().get_job_id()}/{name}"  # a handle is only good in its own cluster
    if key not in _BUDGETS:
        cls = ray.remote(num_cpus=0, max_restarts=-1)(_Budget)
        _BUDGETS[key] = cls.options(name=name, namespace=NAMESPACE, get_if_exists=True).remote(
            llm.requests_per_minute, llm.tokens_per_minute)
    return _BUDGETS[key]


def start_budget(cfg) -> None:
    """Driver hook (``rag.core.ray_executor.DRIVER_START``): with a rate limit set, the driver creates the
    shared budget actor, so it lives as long as the run."""
    if cfg.llm.requests_per_minute or cfg.llm.tokens_per_minute:
        budget_actor(cfg.llm)


if start_budget not in DRIVER_START:
    DRIVER_START.append(start_budget)


class SharedRateLimiter:
    """``RateLimiter``'s interface over the cluster-wide budget actor (used by ``ChatLLM`` in workers)."""

    def __init__(self, llm):
        self.actor = budget_actor(llm)
        self.limits_tokens = llm.tokens_per_minute > 0

    def acquire(self, tokens: int = 0) -> float:
        import ray

        wait = ray.get(self.actor.reserve.remote(tokens))
        if wait > 0:
            time.sleep(wait)
        return wait


def in_ray_worker() -> bool:
    """True inside a Ray task or actor (never imports ray)."""
    import sys

    ray = sys.modules.get("ray")
    try:
        return bool(ray and ray.is_initialized() and ray.get_runtime_context().worker.mode == ray.WORKER_MODE)
    except Exception:  # noqa: BLE001 - a partial ray import: not a worker
        return False


def limiter_for(llm_cfg):
    """The budget an LLM client takes from: inside a Ray worker with requests/min or tokens/min set, the
    cluster-wide actor for its endpoint (N workers share one API key's budget); otherwise its own."""
    rpm, tpm = llm_cfg.requests_per_minute, llm_cfg.tokens_per_minute
    if (rpm or tpm) and in_ray_worker():
        return SharedRateLimiter(llm_cfg)
    return RateLimiter(rpm, tpm)
