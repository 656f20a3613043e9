"""What the disk cache (:mod:`rag.models.cache`) stores and how it checks it, apart from its connections.

Contract:
- ``make_key(*parts) -> str``: sha256 of the canonical JSON of the parts (the cache's keys).
- ``checksum(key, value) -> int``: CRC-32 of key and value, stored with each row (column ``c``).
- ``damage(k, v, c, check) -> str``: why a row read back is damaged ("" when sound): not bytes, a CRC that does
  not match, or a ``check(value)`` that raises ValueError / TypeError / KeyError.
- ``is_corrupt(e)``: whether sqlite's error says the file itself cannot be read (not locked, full, read-only).
- ``move_aside(path) -> Path``: renames an unreadable file to ``<name>.corrupt-<UTC time>[-n]`` with its
  -wal/-shm; the caller holds the cache's flock.
- ``retry_locked(c, sql)``: runs a statement again while sqlite says "database is locked", up to
  ``BUSY_TIMEOUT_S``.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
import zlib
from pathlib import Path
from typing import Any, Callable

# Seconds a writer waits for another process's lock before sqlite raises "database is locked".
BUSY_TIMEOUT_S = 60.0
# Pause between tries of a statement that sqlite fails at once with "database is locked" (see retry_locked).
_LOCKED_RETRY_S = 0.05
# sqlite's names of an unreadable file (Python 3.11+ sets sqlite_errorname; the messages are the fallback).
_CORRUPT = ("SQLITE_CORRUPT", "SQLITE_NOTADB")
_CORRUPT_TEXT = ("malformed", "not a database")

Check = Callable[[bytes], Any]  # raises ValueError naming what is wrong with a value read back


def make_key(*parts: Any) -> str:
    """sha256 of the canonical JSON of ``parts`` (sorted keys, so dict order does not matter)."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def checksum(key: str, value: bytes) -> int:
    """CRC-32 of key and value (a value stored under another key fails it too)."""
    return zlib.crc32(value, zlib.crc32(key.encode("utf-8")))


def is_corrupt(e: BaseException) -> bool:
    """True when sqlite says the file itself cannot be read (not: locked, full, read-only)."""
    if not isinstance(e, sqlite3.DatabaseError):
        return False
    name = getattr(e, "sqlite_errorname", "") or ""
    return name.startswith(_CORRUPT) or any(t in str(e) for t in _CORRUPT_TEXT)


def move_aside(path: Path) -> Path:
    """Rename an unreadable cache file (and its journal) out of the way; returns where it went."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    dest = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while dest.exists():
        n += 1
        dest = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    os.replace(path, dest)
    for side in ("-wal", "-shm"):  # the journal of the damaged file belongs with it
        p = path.with_name(path.name + side)
        if p.exists():
            os.replace(p, dest.with_name(dest.name + side))
    return dest


def damage(k: str, v: Any, c: int | None, check: Check | None) -> str:
    """Why a row read back is damaged, or "" when it is sound."""
    if not isinstance(v, (bytes, bytearray, memoryview)):
        return f"value is {type(v).__name__}, not bytes"
    v = bytes(v)
    if c is not None and checksum(k, v) != c:
        return "checksum mismatch"
    if check is not None:
        try:
            check(v)
        except (ValueError, TypeError, KeyError) as e:
            return f"{type(e).__name__}: {e}"
    return ""


def retry_locked(c: sqlite3.Connection, sql: str) -> None:
    """Run ``sql``, trying again while sqlite says "database is locked", up to ``BUSY_TIMEOUT_S``.

    Why: switching a new database file to WAL needs an exclusive lock and sqlite does not call the busy
    handler for it, so two processes opening the same fresh cache at once (two Ray workers starting stage
    04) failed one of them at once (seen in CI; 2 of 600 opens in a 3-process race here).
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            c.execute(sql)
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(_LOCKED_RETRY_S)
