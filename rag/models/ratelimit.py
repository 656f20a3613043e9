"""Per-model request and token budgets (token buckets) and retry backoff.

Contract: ``RateLimiter(requests_per_minute, tokens_per_minute)`` (0 = unlimited). ``acquire(tokens)``
blocks the calling thread until one request and ``tokens`` tokens fit both buckets, then takes them.
``reserve(tokens)`` never blocks: it books the request now and returns the seconds the caller must wait
before sending it (what a cluster-wide limiter answers its remote callers, who then sleep themselves).
``rag.models.ray_budget.limiter_for(cfg.llm)``: this process's RateLimiter, or inside a Ray worker with a budget set the one
cluster-wide actor for that endpoint (:class:`rag.models.ray_budget.SharedRateLimiter`).
Buckets start full (a burst of one minute's budget) and refill continuously at budget/60 per second. A
request needing more tokens than a whole minute's budget waits for a full bucket and takes it all.
``backoff_s(attempt, base, cap, retry_after)``: the server's Retry-After when given (capped), else
exponential ``base * 2**attempt`` with equal jitter (between half and all of it), capped at ``cap`` seconds.
``retry_decision(e) -> (retry_after, retryable)``: whether an openai client error is worth another attempt.
"""
from __future__ import annotations

import random
import threading
import time


class _Bucket:
    def __init__(self, per_minute: int):
        self.capacity = float(per_minute)
        self.level = float(per_minute)
        self.rate = per_minute / 60.0  # units per second
        self.stamp: float | None = None  # clock reading of the last refill (set on first use)

    def _refill(self, now: float) -> None:
        if self.stamp is None:
            self.stamp = now
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait_s(self, amount: float, now: float) -> float:
        self._refill(now)
        amount = min(amount, self.capacity)
        return 0.0 if self.level >= amount else (amount - self.level) / self.rate

    def take(self, amount: float) -> None:
        self.level -= min(amount, self.capacity)

    def reserve(self, amount: float, now: float) -> float:
        """Book ``amount`` now (the level may go below zero); seconds until it is covered."""
        self._refill(now)
        self.take(amount)
        return max(0.0, -self.level / self.rate)


class RateLimiter:
    def __init__(self, requests_per_minute: int = 0, tokens_per_minute: int = 0,
                 sleep=time.sleep, clock=time.monotonic):
        self._req = _Bucket(requests_per_minute) if requests_per_minute > 0 else None
        self._tok = _Bucket(tokens_per_minute) if tokens_per_minute > 0 else None
        self._lock = threading.Lock()
        self._sleep, self._clock = sleep, clock

    @property
    def limits_tokens(self) -> bool:
        """True when a tokens/min budget is set (callers then estimate each request's tokens)."""
        return self._tok is not None

    def acquire(self, tokens: int = 0) -> float:
        """Block until the request fits; returns the seconds waited."""
        waited = 0.0
        while True:
            with self._lock:
                now = self._clock()
                wait = max(self._req.wait_s(1, now) if self._req else 0.0,
                           self._tok.wait_s(tokens, now) if self._tok else 0.0)
                if wait <= 0:
                    if self._req:
                        self._req.take(1)
                    if self._tok:
                        self._tok.take(tokens)
                    return waited
            self._sleep(wait)
            waited += wait

    def reserve(self, tokens: int = 0) -> float:
        """Book one request and ``tokens`` now; the seconds to wait before sending it (0: at once).
        Requests booked later wait behind it, so callers that sleep their answer never exceed the budget."""
        with self._lock:
            now = self._clock()
            return max(self._req.reserve(1, now) if self._req else 0.0,
                       self._tok.reserve(tokens, now) if self._tok else 0.0)


def backoff_s(attempt: int, base: float, cap: float, retry_after: float | None = None) -> float:
    """Seconds to wait before retry number ``attempt`` (0-based)."""
    if retry_after is not None and retry_after >= 0:
        return min(retry_after, cap)
    # "equal jitter": half the exponential step fixed, half random, so retries never bunch at zero wait
    step = min(cap, base * (2 ** attempt))
    return step / 2 + random.uniform(0, step / 2)


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After header (seconds, or an HTTP date) -> seconds; None when absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        from email.utils import parsedate_to_datetime

        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


_RETRY_STATUS = {408, 409, 429}  # plus every 5xx


def retry_decision(e: Exception) -> tuple[float | None, bool]:
    """``(Retry-After seconds or None, retryable)`` of an error the openai client raised: timeouts, connection
    errors, HTTP 408/409/429 and every 5xx are retried."""
    import openai

    if isinstance(e, (openai.APITimeoutError, openai.APIConnectionError)):
        return None, True
    if isinstance(e, openai.APIStatusError):
        headers = e.response.headers if e.response is not None else {}
        # OpenAI sends retry-after-ms (milliseconds) beside or instead of Retry-After (seconds or a date).
        ms = parse_retry_after(headers.get("retry-after-ms"))
        retry_after = ms / 1000 if ms is not None else parse_retry_after(headers.get("retry-after"))
        return retry_after, e.status_code in _RETRY_STATUS or e.status_code >= 500
    return None, False
