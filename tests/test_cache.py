"""The disk cache under several processes (rag.models.cache): Ray workers and parallel stages share one
``cache_dir``, so processes open the same fresh sqlite file at the same moment."""
from __future__ import annotations

import multiprocessing as mp
import time

import pytest

from rag.models.cache import DiskCache

pytestmark = pytest.mark.reliability

TRIALS = 120  # before the fix, 200 trials of 3 processes failed 2 to 13 opens with "database is locked"
PROCS = 3


def _open_and_write(path: str, start: float, tag: int, out) -> None:
    while time.time() < start:  # all processes open the new file at once
        pass
    try:
        c = DiskCache(path)
        c.put_many([(f"{tag}-{i}", b"v") for i in range(20)])
        out.put("ok" if c.get(f"{tag}-0") == b"v" else "lost")
    except Exception as e:  # noqa: BLE001 - reported to the test
        out.put(f"{type(e).__name__}: {e}")


def test_processes_opening_one_new_cache_at_once_all_succeed(tmp_path):
    ctx = mp.get_context("fork")
    errors: dict[str, int] = {}
    for t in range(TRIALS):
        path = str(tmp_path / f"t{t}" / "embeddings.sqlite")
        out, start = ctx.Queue(), time.time() + 0.05
        procs = [ctx.Process(target=_open_and_write, args=(path, start, i, out)) for i in range(PROCS)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        for _ in procs:
            r = out.get(timeout=10)
            if r != "ok":
                errors[r] = errors.get(r, 0) + 1
        assert len(DiskCache(path)) == PROCS * 20
    assert errors == {}
