"""Stage directories, atomic writes, per-item currency keys and manifests.

Contract:
- Every file a stage writes goes through ``write_*_atomic``: data lands in a temp file in the
  same folder, is fsync'ed, then ``os.replace``'d over the target. A kill -9 leaves either the old
  file or the new one, never half of one (stray ``*.tmp-*`` files are ignored and swept).
- A stage records, per item (a report sha1, a question id…), the *key* its output was made from
  (hash of inputs + config sections + code version) in ``.keys/<item>.key``, written *after* the
  output. ``Stage.is_current(item, key)`` is true only when both exist and the key matches, so a
  stage killed mid-run redoes exactly the unfinished items.
- A stage writes only inside its own ``outputs/<run>/NN_stage/``; it reads earlier stages' files
  and never edits them.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

from .config import RunConfig

STAGES = {
    "01_parse": "parse",
    "02_clean": "clean",
    "03_chunk": "chunk",
    "04_index": "index",
    "05_retrieve": "retrieve",
    "06_answer": "answer",
    "07_evaluate": "evaluate",
}

# Packages whose versions go into every manifest.
TRACKED_PACKAGES = (
    "docling", "docling-parse", "faiss-cpu", "openai", "pydantic", "pandas", "tiktoken", "torch",
    "sentence-transformers", "llama_cpp_python", "bm25s", "rapidocr", "papermill",
)

_TMP_MARK = ".tmp-"


def _fsync_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + _TMP_MARK, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_bytes_atomic(path: Path | str, data: bytes) -> Path:
    path = Path(path)
    _fsync_write(path, data)
    return path


def write_text_atomic(path: Path | str, text: str) -> Path:
    return write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: Path | str, obj: Any, indent: int | None = 1) -> Path:
    return write_text_atomic(path, json.dumps(obj, indent=indent, ensure_ascii=False, default=_json_default))


def write_jsonl_atomic(path: Path | str, rows: Iterable[Any]) -> Path:
    text = "".join(json.dumps(r, ensure_ascii=False, default=_json_default) + "\n" for r in rows)
    return write_text_atomic(path, text)


def read_json(path: Path | str) -> Any:
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e})") from e


def read_jsonl(path: Path | str) -> list[Any]:
    path = Path(path)
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{n}: not valid JSON ({e})") from e
    return rows


def _json_default(o: Any) -> Any:
    if hasattr(o, "model_dump"):
        return o.model_dump(mode="json")
    if isinstance(o, Path):
        return str(o)
    if isinstance(o, (set, frozenset)):
        return sorted(o)
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def file_sha256(path: Path | str, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def hash_key(*parts: Any) -> str:
    """Stable short hash of JSON-able parts (the currency key of one item)."""
    blob = json.dumps(parts, sort_keys=True, default=_json_default).encode()
    return hashlib.sha256(blob).hexdigest()[:20]


def package_versions(names: Iterable[str] = TRACKED_PACKAGES) -> dict[str, str]:
    out = {"python": platform.python_version()}
    for n in names:
        try:
            out[n] = importlib.metadata.version(n)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


class Stage:
    """One stage's output folder ``outputs/<run>/<name>/`` with its manifest.

    Use::

        stage = Stage(cfg, "03_chunk")
        for sha1 in reports:
            key = hash_key(input_hash, cfg.section_hash("chunk"), CODE_VERSION)
            if stage.is_current(sha1, key):
                continue
            with stage.timed(sha1):
                stage.write_json(f"{sha1}.json", result)
            stage.mark_done(sha1, key, counts={...})
        stage.finish(counts={...})
    """

    def __init__(self, cfg: RunConfig, name: str):
        if name not in STAGES:
            raise ValueError(f"unknown stage {name!r}; known: {', '.join(STAGES)}")
        self.cfg = cfg
        self.name = name
        self.dir = cfg.run_dir / name
        self.dir.mkdir(parents=True, exist_ok=True)
        self._keys = self.dir / ".keys"
        self._keys.mkdir(exist_ok=True)
        self._lock = threading.Lock()
        self._started = time.time()
        self._items: dict[str, dict[str, Any]] = {}
        self._timings: dict[str, float] = {}
        self._tokens: dict[str, int] = {}
        self._done_now = 0  # items finished by this invocation (mark_done calls)
        self._previous: dict[str, Any] = {}
        old = self.dir / "manifest.json"
        if old.exists():
            try:
                self._previous = read_json(old)
                self._items = self._previous.get("items", {})
            except ValueError:
                self._previous, self._items = {}, {}
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

    # ---- currency ---------------------------------------------------------------------
    def _key_path(self, item: str) -> Path:
        return self._keys / f"{item}.key"

    def is_current(self, item: str, key: str, *outputs: str) -> bool:
        """True when ``item`` was finished with this ``key`` and its ``outputs`` still exist."""
        kp = self._key_path(item)
        if not kp.exists() or kp.read_text().strip() != key:
            return False
        return all(self.path(o).exists() for o in outputs)

    def mark_done(self, item: str, key: str, **info: Any) -> None:
        """Record ``item`` as finished (call after its outputs are written)."""
        write_text_atomic(self._key_path(item), key)
        with self._lock:
            self._items[item] = {"key": key, **info}
            self._done_now += 1

    def item_info(self, item: str) -> dict[str, Any]:
        return self._items.get(item, {})

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

    def finish(self, counts: dict[str, Any] | None = None, inputs: dict[str, str] | None = None,
               extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """Write ``manifest.json`` (config, hashes, versions, timings, counts, tokens).

        ``started``/``seconds``/``timings``/``tokens`` describe the invocation that last finished an item:
        when this one finished none (everything was current), they are carried over from the previous
        manifest and this invocation's time goes to ``checked`` — so a re-run that skips everything does
        not make the stage look free (ablation tables read these fields).
        """
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
            "tokens": dict(self._tokens),
            "counts": counts or {},
            "items": self._items,
            **(extra or {}),
        }
        if carried:
            manifest["checked"] = {"started": manifest["started"], "seconds": manifest["seconds"]}
            for k in ("started", "seconds", "timings", "tokens"):
                manifest[k] = prev.get(k, manifest[k])
        write_json_atomic(self.dir / "manifest.json", manifest)
        return manifest


def stage_dir(cfg: RunConfig, name: str) -> Path:
    """Read-side path of an earlier stage's folder (raises if that stage never ran)."""
    d = cfg.run_dir / name
    if not d.exists():
        raise FileNotFoundError(f"{d} does not exist: run stage {name} first")
    return d


def read_manifest(cfg: RunConfig, name: str) -> dict[str, Any]:
    return read_json(stage_dir(cfg, name) / "manifest.json")
