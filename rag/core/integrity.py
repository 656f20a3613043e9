"""Damage found in files read back (disk-cache entries, whole cache files, stage artifacts), counted per file
and said once (issue 45: a corrupted cache entry gave exit 0 with every question N/A and no word of the cache).

Contract:
- Readers that find damage call :func:`note_bad_entries` (entries that failed their checksum or shape: dropped,
  to be recomputed), :func:`note_moved` (a cache file sqlite could not read: moved aside, started afresh) or
  :func:`note_write_failed` (a cache write that failed, e.g. a full disk: the value is still used, only not
  kept). Counts live in this process until :func:`take` hands them over (and forgets them); an item's work
  done in a worker process (a pool, Ray) brings its counts back with its result (:func:`add`).
- :meth:`rag.core.stage.Stage.finish` takes them into its manifest (``damage``); the run's closing summary
  (``rag.run_messages.print_damage``) prints :func:`lines` of what this invocation's stages recorded: one line
  per file, however many stages and processes met it. Why not print at the moment of finding: a notebook
  kernel's output does not reach the console, and a line per stage would repeat itself.
"""
from __future__ import annotations

import threading
from typing import Any, Iterable

_LOCK = threading.Lock()
_FOUND: dict[str, dict[str, Any]] = {}


def _entry(path: str) -> dict[str, Any]:
    return _FOUND.setdefault(str(path), _empty())


def _empty() -> dict[str, Any]:
    # why_*: the first reason seen of each kind (a line names one, not every entry's)
    return {"bad_entries": 0, "why_bad": "", "moved_to": [], "why_moved": "", "write_errors": 0, "why_write": ""}


def note_bad_entries(path: Any, n: int, why: str) -> None:
    """``n`` entries of cache file ``path`` were damaged (``why``: the first reason seen) and dropped."""
    if n <= 0:
        return
    with _LOCK:
        e = _entry(path)
        e["bad_entries"] += n
        e["why_bad"] = e["why_bad"] or why


def note_moved(path: Any, moved_to: Any, why: str) -> None:
    """Cache file ``path`` could not be read (``why``) and was moved to ``moved_to``; a new one was started."""
    with _LOCK:
        e = _entry(path)
        e["moved_to"].append(str(moved_to))
        e["why_moved"] = e["why_moved"] or why


def note_write_failed(path: Any, why: str) -> None:
    """A write to cache file ``path`` failed (``why``, e.g. "database or disk is full"); the run went on."""
    with _LOCK:
        e = _entry(path)
        e["write_errors"] += 1
        e["why_write"] = e["why_write"] or why


def take() -> dict[str, dict[str, Any]]:
    """What this process noted since the last take (``{path: counts}``), then forgotten."""
    with _LOCK:
        out = {p: {**e, "moved_to": list(e["moved_to"])} for p, e in _FOUND.items()}
        _FOUND.clear()
    return out


def add(found: dict[str, dict[str, Any]]) -> None:
    """Count what another process :func:`take` -s (an item's worker: rag.core.items._call hands it back with
    the item's result) as found in this one."""
    if not found:
        return
    with _LOCK:
        for path, e in merge([dict(_FOUND), found]).items():
            _FOUND[path] = e


def merge(found: Iterable[dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Several :func:`take` results (one per stage manifest) summed per file."""
    out: dict[str, dict[str, Any]] = {}
    for one in found:
        for path, e in (one or {}).items():
            m = out.setdefault(path, _empty())
            m["bad_entries"] += int(e.get("bad_entries", 0))
            m["write_errors"] += int(e.get("write_errors", 0))
            m["moved_to"] += [p for p in e.get("moved_to", []) if p not in m["moved_to"]]
            for k in ("why_bad", "why_moved", "why_write"):
                m[k] = m[k] or e.get(k, "")
    return out


def lines(found: dict[str, dict[str, Any]]) -> list[str]:
    """One ``warning: cache <file>: ...`` line per file of :func:`take` / :func:`merge` output."""
    out = []
    for path, e in sorted(found.items()):
        said = []
        if e.get("moved_to"):
            said.append(f"unreadable ({e['why_moved']}), moved to {', '.join(e['moved_to'])} and started afresh")
        if e.get("bad_entries"):
            n = e["bad_entries"]
            said.append(f"{n} damaged entr{'y' if n == 1 else 'ies'} dropped and recomputed"
                        + f" (first: {e['why_bad']})")
        if e.get("write_errors"):
            said.append(f"{e['write_errors']} write(s) failed ({e['why_write']}): results used, not kept")
        if said:
            out.append(f"warning: cache {path}: " + "; ".join(said))
    return out
