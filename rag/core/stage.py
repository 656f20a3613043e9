"""One stage's output folder: per-item records, currency, and the manifest rebuilt from the records.

Contract (see :class:`Stage`): ``.items/<item>.json`` = ``{"key", "status", "error", "info", "usage"}``,
written after the item's outputs; ``is_current(item, key, *outputs)``; ``finish()`` rebuilds
``manifest.json`` from the records. Downstream stages read an upstream item's state through the
producing stage's module, which calls :func:`item_state`.
"""
from __future__ import annotations

import shutil
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, NamedTuple, Sequence

from .artifacts import (_TMP_MARK, ITEMS_DIR, LEGACY_KEYS_DIR, STAGE_PACKAGES, file_damage, file_sha256, hash_key,
                        package_versions, read_json, read_jsonl, write_bytes_atomic, write_json_atomic,
                        write_jsonl_atomic, write_text_atomic)
from . import integrity
from .config import RunConfig


class ItemState(NamedTuple):
    """What a downstream stage needs to know about one upstream item."""

    status: str  # "done" | "failed" | "blocked" | "missing"
    key: str  # the producer's currency key ("" unless done)
    reason: str  # why it failed / was blocked ("" when done)


class Stage:
    """One stage's output folder ``outputs/<run>/<name>/`` with its per-item records and manifest.

    Per item the stage keeps ``.items/<item>.json`` = ``{"key", "status", "error", "info", "usage"}``,
    written *after* the item's outputs. The manifest is rebuilt from these records by :meth:`finish`,
    so a run killed mid-way and resumed reports what an uninterrupted run reports. The item loop
    (:func:`rag.core.loop.run_items`) is the normal writer; ``mark_done``/``mark_failed`` are its parts.
    """

    def __init__(self, cfg: RunConfig, name: str):
        if name not in STAGE_PACKAGES:
            raise ValueError(f"unknown stage {name!r}; known: {', '.join(STAGE_PACKAGES)}")
        self.cfg = cfg
        self.name = name
        self.dir = cfg.run_dir / name
        self.dir.mkdir(parents=True, exist_ok=True)
        self._records = self.dir / ITEMS_DIR
        self._records.mkdir(exist_ok=True)
        self._lock = threading.Lock()
        self._started = time.time()
        self._timings: dict[str, float] = {}
        self._tokens: dict[str, int] = {}
        self._done_now = 0  # items finished by this invocation (mark_done calls)
        self.execution: dict[str, Any] = {}  # how this invocation ran its items (set by the item loop)
        self.damaged: dict[str, str] = {}  # item -> why its outputs were not as written (rebuilt this time)
        self._previous: dict[str, Any] = {}
        old = self.dir / "manifest.json"
        if old.exists():
            try:
                self._previous = read_json(old)
            except ValueError:
                self._previous = {}
        self._sweep_tmp()

    def _sweep_tmp(self) -> None:
        for p in self.dir.rglob(f"*{_TMP_MARK}*"):
            try:
                p.unlink()
            except OSError:
                pass

    # ---- paths and writes -------------------------------------------------------------
    def path(self, rel: str) -> Path:
        return self.dir / rel

    def write_json(self, rel: str, obj: Any, indent: int | None = 1) -> Path:
        return write_json_atomic(self.path(rel), obj, indent)

    def write_jsonl(self, rel: str, rows: Iterable[Any]) -> Path:
        return write_jsonl_atomic(self.path(rel), rows)

    def write_text(self, rel: str, text: str) -> Path:
        return write_text_atomic(self.path(rel), text)

    def write_bytes(self, rel: str, data: bytes) -> Path:
        return write_bytes_atomic(self.path(rel), data)

    def remove(self, *rels: str) -> None:
        """Delete outputs (files or folders) so nothing downstream reuses them."""
        for rel in rels:
            p = self.path(rel)
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            elif p.exists():
                p.unlink()

    # ---- per-item records and currency ------------------------------------------------
    def _record_path(self, item: str) -> Path:
        return self._records / f"{item}.json"

    def record(self, item: str) -> dict[str, Any] | None:
        """The item's record, or None (a legacy ``.keys/<item>.key`` reads as a done record)."""
        return read_item_record(self.dir, item)

    def is_current(self, item: str, key: str, *outputs: str) -> bool:
        """True when ``item`` was finished with this ``key`` and its ``outputs`` still exist, unchanged: each
        file the record lists (``written``: size + sha256) must match it, and a JSON output of a record from
        before those lists must parse. A damaged item is not current (rebuilt like a missing one) and its
        reason goes to :attr:`damaged` (the manifest's ``damaged``)."""
        rec = self.record(item)
        if not rec or rec.get("status") != "done" or rec.get("key") != key:
            return False
        if not all(self.path(o).exists() for o in outputs):
            return False
        why = output_damage(self.dir, rec, outputs)
        if why:
            with self._lock:
                self.damaged[item] = why
            return False
        return True

    def _write_record(self, item: str, rec: dict[str, Any]) -> None:
        write_json_atomic(self._record_path(item), rec, indent=None)

    def mark_done(self, item: str, key: str, usage: dict[str, Any] | None = None,
                  written: dict[str, Any] | None = None, **info: Any) -> None:
        """Record ``item`` as finished (call after its outputs are written; ``written``: ``{file: [size,
        sha256]}`` of them, checked by :meth:`is_current`)."""
        rec = {"key": key, "status": "done", "error": "", "info": info, "usage": usage or {}}
        if written:
            rec["written"] = written
        self._write_record(item, rec)
        with self._lock:
            self._done_now += 1

    def mark_failed(self, item: str, key: str, error: str, outputs: Sequence[str] = (), status: str = "failed",
                    **info: Any) -> None:
        """Record ``item`` as failed (or ``status="blocked"`` by an upstream failure) and remove its old
        ``outputs``: a stale result must never be read as this config's."""
        self.remove(*outputs)
        self._write_record(item, {"key": key, "status": status, "error": error, "info": info, "usage": {}})

    def item_info(self, item: str) -> dict[str, Any]:
        rec = self.record(item) or {}
        return {"key": rec.get("key"), **rec.get("info", {})} if rec else {}

    # ---- timings, tokens, manifest -----------------------------------------------------
    @contextmanager
    def timed(self, label: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            with self._lock:
                self._timings[label] = self._timings.get(label, 0.0) + time.perf_counter() - t0

    def add_tokens(self, **counts: int) -> None:
        with self._lock:
            for k, v in counts.items():
                self._tokens[k] = self._tokens.get(k, 0) + int(v or 0)

    def _items(self, item_ids: Sequence[str] | None) -> dict[str, dict[str, Any]]:
        if item_ids is None:
            item_ids = sorted(p.name[:-len(".json")] for p in self._records.glob("*.json"))
        out = {}
        for i in item_ids:
            rec = self.record(i)
            if rec is not None:
                out[i] = rec
        return out

    def finish(self, counts: dict[str, Any] | None = None, inputs: dict[str, str] | None = None,
               extra: dict[str, Any] | None = None, item_ids: Sequence[str] | None = None) -> dict[str, Any]:
        """Write ``manifest.json`` (config, hashes, versions, timings, counts, items, usage).

        ``items``, ``counts.items_*`` and ``usage`` are rebuilt from the item records of ``item_ids``
        (default: every record in the folder): the cost of producing this stage's outputs, whichever
        invocation did the work. ``started``/``seconds``/``timings``/``tokens`` describe the invocation
        that last finished an item: when this one finished none (everything was current), they are
        carried over from the previous manifest and this invocation's time goes to ``checked``. ``execution``
        says how the items ran (local or Ray, cluster nodes and CPUs); each item's worker node is in its info.
        """
        from .usage import ItemUsage, total

        records = self._items(item_ids)
        usage = total(ItemUsage.from_dict(r.get("usage")) for r in records.values() if r.get("status") == "done")
        status_counts = {f"items_{s}": sum(r.get("status") == s for r in records.values())
                         for s in ("done", "failed", "blocked")}
        tokens = dict(self._tokens)
        for k in ("prompt_tokens", "completion_tokens", "embedding_tokens"):
            if getattr(usage, k):
                tokens[k] = getattr(usage, k)
        prev = self._previous
        carried = self._done_now == 0 and "seconds" in prev
        manifest = {
            "stage": self.name,
            "run": self.cfg.run,
            "preset": self.cfg.preset,
            "config_hash": self.cfg.config_hash(),
            "config": self.cfg.model_dump(mode="json"),
            "inputs": inputs or {},
            "versions": package_versions(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._started)),
            "seconds": round(time.time() - self._started, 3),
            "timings": {k: round(v, 3) for k, v in self._timings.items()},
            "tokens": tokens,
            "usage": usage.as_dict(),
            "counts": {**status_counts, **(counts or {})},
            "execution": self.execution or prev.get("execution", {}),
            "items": {i: {"key": r.get("key"), **({"status": r["status"]} if r.get("status") != "done" else {}),
                          **({"error": r["error"]} if r.get("error") else {}), **r.get("info", {}),
                          **({"usage": r["usage"]} if r.get("usage") else {})} for i, r in records.items()},
            **(extra or {}),
        }
        # What this invocation found damaged (never carried over: the closing summary says it once)
        damage = integrity.take()  # cache files: entries dropped, files moved aside
        if self.damaged:
            manifest["damaged"] = dict(self.damaged)
        if damage:
            manifest["damage"] = damage
        if carried:
            manifest["checked"] = {"started": manifest["started"], "seconds": manifest["seconds"]}
            for k in ("started", "seconds", "timings", "tokens"):
                manifest[k] = prev.get(k, manifest[k])
        write_json_atomic(self.dir / "manifest.json", manifest)
        return manifest


def read_item_record(stage_folder: Path, item: str) -> dict[str, Any] | None:
    """Item record of ``item`` in a stage folder (see :class:`Stage`); None when there is none."""
    p = stage_folder / ITEMS_DIR / f"{item}.json"
    if p.exists():
        try:
            return read_json(p)
        except ValueError:
            return None
    legacy = stage_folder / LEGACY_KEYS_DIR / f"{item}.key"  # outputs written before item records
    if legacy.exists():
        return {"key": legacy.read_text().strip(), "status": "done", "error": "", "info": {}, "usage": {}}
    return None


def output_damage(stage_folder: Path, rec: dict[str, Any], outputs: Sequence[str]) -> str:
    """Why a done item's outputs are not what was written ("" when they are): a size or sha256 differing from
    the record's ``written``; for a record without one (made before), a ``.json``/``.jsonl`` output that does
    not parse."""
    written = rec.get("written") or {}
    for rel, recorded in written.items():
        why = file_damage(stage_folder / rel, recorded)
        if why:
            return why
    for rel in outputs:
        if rel in written or not rel.endswith((".json", ".jsonl")) or not (stage_folder / rel).is_file():
            continue
        try:
            (read_jsonl if rel.endswith(".jsonl") else read_json)(stage_folder / rel)
        except (ValueError, UnicodeDecodeError) as e:
            return f"{rel}: not valid JSON ({type(e).__name__})"
    return ""


def item_state(stage_folder: Path, item: str, outputs: Sequence[str] = ()) -> ItemState:
    """State of one upstream item for a downstream stage's key and skip decision.

    done: the producer's key; failed/blocked: the reason; an output present without any record (written
    by hand or by a test) is done with the sha256 of its files as key; otherwise missing.
    """
    rec = read_item_record(stage_folder, item)
    if rec is not None:
        st = rec.get("status", "done")
        if st == "done" and outputs and not all((stage_folder / o).exists() for o in outputs):
            return ItemState("missing", "", f"{stage_folder / outputs[0]} is missing")
        return ItemState(st, rec.get("key", "") if st == "done" else "", rec.get("error", ""))
    files = [stage_folder / o for o in outputs]
    if files and all(f.is_file() for f in files):
        return ItemState("done", "sha256:" + hash_key(*[file_sha256(f) for f in files]), "")
    return ItemState("missing", "", "")
