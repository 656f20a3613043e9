"""Stage names, atomic writes, hashes and package versions (the stage folder itself: :mod:`rag.core.stage`).

Contract:
- Every file a stage writes goes through ``write_*_atomic``: data lands in a temp file in the
  same folder, is fsync'ed, then ``os.replace``'d over the target. A kill -9 leaves either the old
  file or the new one, never half of one (stray ``*.tmp-*`` files are ignored and swept).
- A stage records, per item (a report sha1, a question id…), the *key* its output was made from
  (upstream items' keys + config sections + code version, see :mod:`rag.core.deps`), its status,
  details and usage in ``.items/<item>.json``, written *after* the output (:class:`rag.core.stage.Stage`).
  ``Stage.is_current(item, key)`` is true only when both exist and the key matches, so a stage killed mid-run redoes exactly
  the unfinished items; the manifest is rebuilt from the records. The record also keeps each output's
  ``[size, sha256]`` (:func:`digest`): an output that no longer matches (:func:`file_damage`: truncated,
  overwritten) makes the item not current, so it is rebuilt like a missing one.
- Downstream stages ask an item's state through the producing stage's module (which calls
  :func:`rag.core.stage.item_state`); only the owner of a stage spells its folder.
- A stage writes only inside its own ``outputs/<run>/NN_stage/``; it reads earlier stages' files
  and never edits them.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterable

from . import stages as _stages
from .config import RunConfig

# Stage folder -> package, for every stage that writes a folder (declared in rag.core.stages; not to be
# confused with rag.core.stages.STAGES, name -> StageSpec, every stage).
STAGE_PACKAGES = {name: _stages.STAGES[name].package for name in _stages.PIPELINE}

# Packages whose versions go into every manifest.
TRACKED_PACKAGES = (
    "docling", "docling-parse", "faiss-cpu", "openai", "pydantic", "pandas", "tiktoken", "torch",
    "sentence-transformers", "llama_cpp_python", "bm25s", "rapidocr", "papermill",
)

_TMP_MARK = ".tmp-"
ITEMS_DIR = ".items"  # per-item records (see Stage)
LEGACY_KEYS_DIR = ".keys"  # per-item keys of outputs written before item records


def _umask() -> int:
    """The process umask (read by setting and restoring it: there is no getter)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """Mode a plain ``open(path, "w")`` would give a new file: 0666 minus the umask (mkstemp's 0600 would
    hide outputs from the other users of a shared box)."""
    return 0o666 & ~_umask()


def _fsync_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + _TMP_MARK, dir=path.parent)
    try:
        os.fchmod(fd, file_mode())
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


def json_bytes(obj: Any, indent: int | None = 1) -> bytes:
    """What :func:`write_json_atomic` writes."""
    return json.dumps(obj, indent=indent, ensure_ascii=False, default=_json_default).encode("utf-8")


def jsonl_bytes(rows: Iterable[Any]) -> bytes:
    """What :func:`write_jsonl_atomic` writes."""
    return "".join(json.dumps(r, ensure_ascii=False, default=_json_default) + "\n" for r in rows).encode("utf-8")


def write_json_atomic(path: Path | str, obj: Any, indent: int | None = 1) -> Path:
    return write_bytes_atomic(path, json_bytes(obj, indent))


def write_jsonl_atomic(path: Path | str, rows: Iterable[Any]) -> Path:
    return write_bytes_atomic(path, jsonl_bytes(rows))


def digest(data: bytes) -> list[Any]:
    """``[size, sha256]`` of bytes written: what an item record keeps to know its outputs unchanged."""
    return [len(data), hashlib.sha256(data).hexdigest()]


def file_damage(path: Path, recorded: Any) -> str:
    """Why ``path`` is not the file recorded as ``[size, sha256]`` ("" when it is): a size is a stat, the hash
    is read only when the size matches."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return ""  # missing, not damaged: the caller's existence check says so
    if size != recorded[0]:
        return f"{path.name}: {size} bytes, {recorded[0]} written"
    if file_sha256(path) != recorded[1]:
        return f"{path.name}: content differs from what was written (sha256)"
    return ""


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
    """Versions for a manifest, plus the CPU and the llama.cpp build: floating point differs across CPUs
    and SIMD builds, and the same code answered 2 of 8 erc2-dev booleans differently on two machines
    (1.5B model), so a result names the machine that made it."""
    out = {"python": platform.python_version()}
    for n in names:
        try:
            out[n] = importlib.metadata.version(n)
        except importlib.metadata.PackageNotFoundError:
            pass
    out.update(_machine())
    return out


@functools.lru_cache(maxsize=1)
def cpu_info() -> tuple[str, frozenset[str]] | None:
    """(model name, feature flags) of this CPU as Linux lists them in /proc/cpuinfo ("" / empty when a line
    is missing); None where there is no /proc/cpuinfo (not Linux). The one reader: manifests, the model check
    (rag.models.llama_build) and the embedder's dtype choice (rag.models.device) all ask here."""
    try:
        info = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return None
    model = next((ln.split(":", 1)[1].strip() for ln in info.splitlines() if ln.startswith("model name")), "")
    flags = next((ln.split(":", 1)[1].split() for ln in info.splitlines() if ln.startswith("flags")), [])
    return model, frozenset(flags)


# Environment switches that cap the CPU kernels torch's oneDNN and MKL may use (e.g. to stand in for a CPU
# without AVX-512 or AMX on one that has them): a result made under one is that setting's, not this CPU's.
# oneDNN reads ONEDNN_MAX_CPU_ISA, else its older name DNNL_MAX_CPU_ISA.
KERNEL_CAPS = ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "MKL_ENABLE_INSTRUCTIONS")


def kernel_caps() -> dict[str, str]:
    """The :data:`KERNEL_CAPS` set (non-empty) in this process's environment."""
    return {k: os.environ[k].strip() for k in KERNEL_CAPS if os.environ.get(k, "").strip()}


@functools.lru_cache(maxsize=1)
def _machine() -> dict[str, str]:
    out = {}
    cpu = cpu_info()
    if cpu is not None:
        model, flags = cpu
        simd = [f for f in ("avx2", "avx512f", "amx_tile") if f in flags]
        out["cpu"] = f"{model or platform.processor() or platform.machine()} ({os.cpu_count()} cores; {' '.join(simd)})"
    else:  # not Linux
        out["cpu"] = f"{platform.processor() or platform.machine()} ({os.cpu_count()} cores)"
    caps = kernel_caps()
    if caps:  # only when set: manifests made without a cap read as before
        out["cpu_caps"] = " ".join(f"{k}={v}" for k, v in caps.items())
    build = Path(sys.prefix) / "llama-build.txt"  # written by the Makefile's llama.cpp build
    if build.exists():
        out["llama_build"] = build.read_text(errors="replace").split(" CMAKE_ARGS", 1)[0].strip()
    return out


def run_dir_of(cfg_or_run: RunConfig | Path | str) -> Path:
    """A run folder from a RunConfig or a path (owner readers accept either): a run folder, or one of its
    stage folders (``outputs/<run>/07_evaluate`` -> ``outputs/<run>``)."""
    if isinstance(cfg_or_run, RunConfig):
        return cfg_or_run.run_dir
    p = Path(cfg_or_run)
    return p.parent if p.name in STAGE_PACKAGES else p


def stage_dir(cfg_or_run: RunConfig | Path | str, name: str) -> Path:
    """Read-side path of a stage's folder in a run (RunConfig or run folder; raises if it never ran)."""
    d = run_dir_of(cfg_or_run) / name
    if not d.exists():
        raise FileNotFoundError(f"{d} does not exist: run stage {name} first")
    return d


MANIFEST = "manifest.json"  # a stage folder's manifest (written by rag.core.stage.Stage.finish)


def read_manifest(cfg_or_run: RunConfig | Path | str, name: str, missing_ok: bool = False) -> dict[str, Any] | None:
    """Stage ``name``'s manifest in a run (RunConfig or run folder): run metadata (time, tokens, counts,
    failures), not the stage's items. A stage that never ran raises FileNotFoundError naming the folder, or
    gives None with ``missing_ok``."""
    path = run_dir_of(cfg_or_run) / name / MANIFEST
    if not path.parent.exists() and not missing_ok:
        raise FileNotFoundError(f"{path.parent} does not exist: run stage {name} first")
    if missing_ok and not path.exists():
        return None
    return read_json(path)

