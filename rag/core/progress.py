"""Progress of the item loop: tqdm with ETA when interactive (a TTY or a notebook kernel), otherwise one log
line every :data:`LOG_EVERY` items and at the end (``[05_retrieve] 10/30 items  3.1s/item  ETA 1m02s  failed 0``).
"""
from __future__ import annotations

import sys
import time

LOG_EVERY = 10  # headless progress: one line per this many items at most (and one at the end)
MIN_LOG_LINES = 5  # ...but at least about this many lines for a short stage (3 reports: a line each)


def _interactive() -> bool:
    return "ipykernel" in sys.modules or sys.stderr.isatty()


def _fmt_s(s: float) -> str:
    s = int(round(s))
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


class Progress:
    """tqdm (with ETA) when interactive; one line per :data:`LOG_EVERY` items otherwise."""

    def __init__(self, name: str, total: int, unit: str, enabled: bool, every: int = LOG_EVERY):
        self.name, self.total, self.unit = name, total, unit
        self.every = max(1, min(every, total // MIN_LOG_LINES))
        self.enabled = enabled and total > 0
        self.n = self.failed = 0
        self.t0 = time.perf_counter()
        self.bar = None
        if self.enabled and _interactive():
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc=name, unit=unit)

    def update(self, failed: bool) -> None:
        self.n += 1
        self.failed += int(failed)
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.update(1)
            if failed:
                self.bar.set_postfix(failed=self.failed)
        elif self.n % self.every == 0 or self.n == self.total:
            el = time.perf_counter() - self.t0
            rate = el / self.n
            print(f"[{self.name}] {self.n}/{self.total} {self.unit}  {rate:.1f}s/{self.unit}  "
                  f"elapsed {_fmt_s(el)}  ETA {_fmt_s(rate * (self.total - self.n))}  failed {self.failed}",
                  flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
