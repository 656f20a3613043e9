"""A small on-disk key -> bytes store (sqlite, WAL) shared by the LLM and embedding caches.

Contract: ``DiskCache(path).get(key) -> bytes | None`` and ``.put(key, value)``; safe under threads
(one connection per thread) and under several processes (sqlite WAL + busy timeout; an insert that loses
a race is ignored, both writers stored the same value for the same key). Keys are hex digests made by
:func:`make_key` from JSON-able parts, so any change of model, messages, schema or params is a new key.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterable

# Seconds a writer waits for another process's lock before sqlite raises "database is locked".
_BUSY_TIMEOUT_S = 60.0
# Pause between tries of a statement that sqlite fails at once with "database is locked" (see _retry_locked).
_LOCKED_RETRY_S = 0.05


def make_key(*parts: Any) -> str:
    """sha256 of the canonical JSON of ``parts`` (sorted keys, so dict order does not matter)."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class DiskCache:
    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        _retry_locked(self._conn(), "CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v BLOB NOT NULL)")

    def _conn(self) -> sqlite3.Connection:
        c = getattr(self._local, "conn", None)
        if c is None:
            c = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
            _retry_locked(c, "PRAGMA journal_mode=WAL")
            c.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = c
        return c

    def get(self, key: str) -> bytes | None:
        row = self._conn().execute("SELECT v FROM kv WHERE k = ?", (key,)).fetchone()
        return None if row is None else bytes(row[0])

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        keys = list(dict.fromkeys(keys))
        out: dict[str, bytes] = {}
        c = self._conn()
        step = 500  # sqlite's bound-parameter limit is 999 on old builds
        for i in range(0, len(keys), step):
            part = keys[i:i + step]
            q = f"SELECT k, v FROM kv WHERE k IN ({','.join('?' * len(part))})"
            out.update((k, bytes(v)) for k, v in c.execute(q, part))
        return out

    def put(self, key: str, value: bytes) -> None:
        self.put_many([(key, value)])

    def put_many(self, items: Iterable[tuple[str, bytes]]) -> None:
        c = self._conn()
        c.execute("BEGIN IMMEDIATE")
        try:
            c.executemany("INSERT OR IGNORE INTO kv (k, v) VALUES (?, ?)", list(items))
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise

    def __len__(self) -> int:
        return self._conn().execute("SELECT COUNT(*) FROM kv").fetchone()[0]


def _retry_locked(c: sqlite3.Connection, sql: str) -> None:
    """Run ``sql``, trying again while sqlite says "database is locked", up to ``_BUSY_TIMEOUT_S``.

    Why: switching a new database file to WAL needs an exclusive lock and sqlite does not call the busy
    handler for it, so two processes opening the same fresh cache at once (two Ray workers starting stage
    04) failed one of them at once (seen in CI; 2 of 600 opens in a 3-process race here).
    """
    deadline = time.monotonic() + _BUSY_TIMEOUT_S
    while True:
        try:
            c.execute(sql)
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(_LOCKED_RETRY_S)
