"""A small on-disk key -> bytes store (sqlite, WAL) shared by the LLM and embedding caches.

Contract: ``DiskCache(path).get(key, check) -> bytes | None``, ``.get_many(keys, check)`` and ``.put(key, value)``;
safe under threads (one connection per thread) and under several processes on one machine (sqlite WAL + busy
timeout; writers of one key store the same value, so the last write wins harmlessly). Keys are hex digests made
by :func:`make_key` from JSON-able parts, so any change of model, messages, schema or params is a new key.

Nothing read back is trusted (issue 45: garbage values gave exit 0 with every answer N/A):
- each row carries a CRC-32 of its key and value (column ``c``; rows written before it have none and are
  checked by ``check`` alone); a read row whose CRC does not match, or that the caller's ``check(value)``
  refuses (raises ValueError: wrong length, not JSON, ...), is deleted and reported as a miss, so the caller
  recomputes and stores it again. Counts go to :mod:`rag.core.integrity` (said once at the run's end).
- a file sqlite cannot read (``file is not a database``: a garbage header; ``database disk image is
  malformed``: a truncated or torn file) is moved aside to ``<name>.corrupt-<UTC time>`` (with its -wal/-shm)
  and a fresh one started, under an flock so that two processes never move a file the other just made.
  Connections of other threads and processes notice the new file (its inode) at their next call.
- a write that fails (a full disk, an I/O error, a lock held past the busy timeout) is counted and skipped:
  the computed value is still returned to the caller, only not kept. sqlite writes each transaction
  atomically (a torn write leaves the previous state), and the CRC catches what the disk got wrong.
Not covered: WAL needs shared memory, so processes on different machines sharing a cache folder over NFS may
still corrupt it (sqlite's documented limit); the checks above then find it and recompute.
Keys, checksums, the damage check and moving a file aside are in :mod:`rag.models.cache_rows`.
"""
from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..core import integrity
from .cache_rows import BUSY_TIMEOUT_S, Check, checksum, damage, is_corrupt, move_aside, retry_locked


class DiskCache:
    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        for attempt in range(3):
            try:
                self._open_schema()
                return
            except sqlite3.DatabaseError as e:
                replaced = self._replaced()
                if attempt == 2 or not (replaced or is_corrupt(e)):
                    raise
                if replaced:
                    self._drop_conn()  # another process moved the file aside as this one opened it
                else:
                    self._recover(e)

    # ---- connections ---------------------------------------------------------------------------
    def _inode(self) -> int | None:
        try:
            return os.stat(self.path).st_ino
        except FileNotFoundError:
            return None

    def _conn(self) -> sqlite3.Connection:
        """This thread's connection, reopened when the file was replaced (moved aside by any process)."""
        c, ino = getattr(self._local, "conn", None), getattr(self._local, "ino", None)
        if c is not None and ino == self._inode():
            return c
        if c is not None:
            c.close()
        self._local.conn = self._local.ino = None
        c = self._connect()
        try:
            retry_locked(c, "PRAGMA journal_mode=WAL")
            c.execute("PRAGMA synchronous=NORMAL")
        except BaseException:
            c.close()
            raise
        self._local.conn = c
        return c

    def _connect(self) -> sqlite3.Connection:
        """Open the file, making it only under the flock (and recording its inode in ``self._local.ino``).

        Why: a process that found no file and let sqlite make one while another process was moving a damaged
        file aside made a file (and -wal/-shm) that the mover then took for the damaged one's, and a
        connection whose -shm was moved under it failed with "disk I/O error" (seen once in CI). An existing
        file is opened read-write without create (``mode=rw``): if it vanishes between the look and the
        open, the open fails and the loop looks again. The inode is taken BEFORE connecting: a file found
        unreadable is then known by the inode that failed, never by one another process made meanwhile
        (which _recover must not move aside).
        """
        uri = Path(os.path.abspath(self.path)).as_uri() + "?mode=rw"
        while True:
            self._local.ino = self._inode()
            if self._local.ino is not None:
                try:
                    return sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)
                except sqlite3.OperationalError:
                    if self._inode() is None:
                        continue  # moved aside between the look and the open: look again
                    raise
            with self._file_lock():  # no file: make it, while no one can be moving one aside
                c = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
                self._local.ino = self._inode()
                return c

    def _replaced(self) -> bool:
        """True when this thread's connection is to a file no longer at the path (moved aside meanwhile)."""
        ino = getattr(self._local, "ino", None)
        return ino is not None and ino != self._inode()

    def _drop_conn(self) -> None:
        c = getattr(self._local, "conn", None)
        if c is not None:
            c.close()
        self._local.conn = self._local.ino = None

    def _open_schema(self) -> None:
        c = self._conn()
        retry_locked(c, "CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v BLOB NOT NULL, c INTEGER)")
        cols = {row[1] for row in c.execute("PRAGMA table_info(kv)")}
        if "c" not in cols:  # a cache made before checksums: its rows keep c NULL (checked by shape alone)
            try:
                retry_locked(c, "ALTER TABLE kv ADD COLUMN c INTEGER")
            except sqlite3.OperationalError as e:
                if "duplicate column" not in str(e):  # another process added it first
                    raise
        c.execute("SELECT 1 FROM kv LIMIT 1").fetchall()  # reads the table's root page: a torn file fails here

    # ---- an unreadable file --------------------------------------------------------------------
    @contextmanager
    def _file_lock(self) -> Iterator[None]:
        """An flock on ``<name>.lock`` (re-entrant within a thread: _recover makes the new file under it)."""
        if getattr(self._local, "locked", False):
            yield
            return
        with open(self.path.with_name(self.path.name + ".lock"), "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            self._local.locked = True
            try:
                yield
            finally:
                self._local.locked = False
                fcntl.flock(f, fcntl.LOCK_UN)

    def _recover(self, e: BaseException) -> None:
        """Move the unreadable file aside (once, whichever process sees it first) and start afresh."""
        failed_ino = getattr(self._local, "ino", None)
        self._drop_conn()
        with self._file_lock():
            if failed_ino is None or self._inode() != failed_ino:
                return  # another process or thread already replaced it (and made its table, under this lock)
            integrity.note_moved(self.path, move_aside(self.path), str(e))
            self._open_schema()

    def _read(self, sql: str, params: list[Any]) -> list[tuple]:
        """Rows of a SELECT; an unreadable file is moved aside (its rows are gone: all misses)."""
        try:
            return self._conn().execute(sql, params).fetchall()
        except sqlite3.DatabaseError as e:
            if self._replaced():  # moved aside by another process: read the new file
                self._drop_conn()
                return self._conn().execute(sql, params).fetchall()
            if not is_corrupt(e):
                raise
            self._recover(e)
            return []

    # ---- reads ---------------------------------------------------------------------------------
    def get(self, key: str, check: Check | None = None) -> bytes | None:
        return self.get_many([key], check).get(key)

    def get_many(self, keys: Iterable[str], check: Check | None = None) -> dict[str, bytes]:
        """Values found for ``keys`` that pass their CRC and ``check``; damaged ones are deleted (misses)."""
        keys = list(dict.fromkeys(keys))
        out: dict[str, bytes] = {}
        bad: dict[str, tuple[Any, str]] = {}  # key -> (the damaged value, why)
        step = 500  # sqlite's bound-parameter limit is 999 on old builds
        for i in range(0, len(keys), step):
            part = keys[i:i + step]
            for k, v, c in self._read(f"SELECT k, v, c FROM kv WHERE k IN ({','.join('?' * len(part))})", part):
                why = damage(k, v, c, check)
                if why:
                    bad[k] = (v, why)
                else:
                    out[k] = bytes(v)
        if bad:
            self._delete(bad)
            integrity.note_bad_entries(self.path, len(bad), next(iter(bad.values()))[1])
        return out

    def _delete(self, bad: dict[str, tuple[Any, str]]) -> None:
        """Delete damaged rows, each only while it still holds the damaged value (another process may have
        stored the recomputed one meanwhile)."""
        try:
            self._write("DELETE FROM kv WHERE k = ? AND v = ?", [(k, v) for k, (v, _) in bad.items()])
        except sqlite3.Error:
            pass  # the recomputed value replaces the row anyway (put writes INSERT OR REPLACE)

    # ---- writes --------------------------------------------------------------------------------
    def put(self, key: str, value: bytes) -> None:
        self.put_many([(key, value)])

    def put_many(self, items: Iterable[tuple[str, bytes]]) -> None:
        """Store values (with their CRC). A failed write is counted, never raised: the caller has its values."""
        rows = [(k, v, checksum(k, v)) for k, v in items]
        if not rows:
            return
        try:
            try:
                self._write("INSERT OR REPLACE INTO kv (k, v, c) VALUES (?, ?, ?)", rows)
            except sqlite3.DatabaseError as e:
                if not is_corrupt(e):
                    raise
                self._recover(e)
                self._write("INSERT OR REPLACE INTO kv (k, v, c) VALUES (?, ?, ?)", rows)
        except sqlite3.Error as e:  # full disk, I/O error, a lock held past the busy timeout
            integrity.note_write_failed(self.path, f"{type(e).__name__}: {e}")

    def _write(self, sql: str, rows: list[tuple]) -> None:
        c = self._conn()
        c.execute("BEGIN IMMEDIATE")
        try:
            c.executemany(sql, rows)
            c.execute("COMMIT")
        except BaseException:
            try:
                c.execute("ROLLBACK")
            except sqlite3.Error:
                pass  # sqlite already rolled back (SQLITE_FULL does)
            raise

    def __len__(self) -> int:
        return self._conn().execute("SELECT COUNT(*) FROM kv").fetchone()[0]
