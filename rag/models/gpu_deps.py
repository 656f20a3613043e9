"""``make gpu-dry-run``: are ``make gpu``'s installs resolvable? Found on a laptop, not on the rented box.

Contract: ``main(argv) -> exit code`` resolves, with ``pip install --dry-run --ignore-installed --report``
(nothing is installed; pip reads wheel metadata, PEP 658, instead of downloading wheels), the pins
``make gpu`` installs, read from pyproject.toml:
1. ``torch`` (the main dependency) + ``torchvision`` (the ``[gpu]`` extra) from the PyTorch CUDA index
   (``--torch-index``, what the Makefile's ``$(GPU_STAMP)`` installs, ``--no-deps`` as there). An index
   that cannot be reached is ONE line naming it and why; the same pins are then resolved from PyPI with
   their dependencies (PyPI has the same versions: a torchvision pinning another torch shows there too).
2. The project with the ``[dev,gpu]`` extras from PyPI (``pip install -e ".[dev,gpu]"``); llama-cpp-python
   comes from ``--find-links`` (the wheel ``make setup`` built) when it is there (its sdist would compile).
3. The vLLM venv: ``vllm==<gpu-server pin>`` alone, as ``.venv-vllm`` gets it.
The three run side by side; each prints one line as it ends: ``ok`` with the package count and the key versions, or ``FAILED`` with pip's
last error lines (a conflict, a withdrawn or missing version). "PyPI" above means the index pip is
configured for (``--index URL`` names another; then pip runs without config files and ``PIP_*`` settings
except certificate and timeout, so a machine's own mirrors and constraints cannot hide what that index
says). Exit: 0 all resolved, 1 one failed, 2 the index unreachable.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

# "" = the index pip is configured for on this machine (a laptop: the public index; no host is named here).
DEFAULT_INDEX = ""
# Seconds for the reachability probe of an index, and for one pip resolution.
PROBE_TIMEOUT_S = 20
PIP_TIMEOUT_S = 3600
# Versions shown in the ok line when the resolution contains them.
KEY_PACKAGES = ("torch", "torchvision", "transformers", "sentence-transformers", "docling", "vllm", "numpy")
# PIP_* variables kept for the dry run (how to reach an index, not what it resolves to).
_KEEP = ("PIP_CERT", "PIP_DEFAULT_TIMEOUT", "PIP_CLIENT_CERT")


def pins(pyproject: Path) -> dict[str, str]:
    """``{"torch": "2.13.0", "torchvision": ..., "vllm": ...}`` from pyproject.toml's pins."""
    proj = tomllib.loads(pyproject.read_text())["project"]
    out = {}
    for spec in [*proj["dependencies"], *proj["optional-dependencies"].get("gpu", []),
                 *proj["optional-dependencies"].get("gpu-server", [])]:
        name, _, ver = spec.partition("==")
        out[name.split("[")[0].strip().lower()] = ver.strip()
    return out


def unreachable(index: str) -> str:
    """"" when ``index``/torch/ answers (``index`` "": pip's configured index), else why not (one line)."""
    if not index:
        try:
            r = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "torch"], capture_output=True,
                               text=True, timeout=PROBE_TIMEOUT_S * 3)
        except subprocess.TimeoutExpired:
            return f"pip index versions torch took over {PROBE_TIMEOUT_S * 3}s"
        lines = [ln for ln in (r.stderr or r.stdout).splitlines() if ln.strip()]
        return "" if r.returncode == 0 else (lines[-1][:160] if lines else f"pip exit {r.returncode}")
    url = index.rstrip("/") + "/torch/"
    try:
        with urllib.request.urlopen(url, timeout=PROBE_TIMEOUT_S) as r:
            r.read(1)
        return ""
    except Exception as e:  # noqa: BLE001 - DNS, proxy, TLS, HTTP errors: the reason is the message
        return f"{type(e).__name__}: {str(getattr(e, 'reason', e))[:160]}"


def pip_env(index: str) -> dict[str, str]:
    """pip's own configuration for the default index; with an explicit index none (no pip.conf: no local
    mirrors, find-links or constraints that would hide what that index says)."""
    if not index:
        return dict(os.environ)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") or k in _KEEP}
    env["PIP_CONFIG_FILE"] = os.devnull
    return env


def index_name(index: str) -> str:
    return index or "pip's configured index"


def resolve(label: str, args: list[str], index: str, extra_index: str | None = None,
            cwd: Path | None = None) -> tuple[bool, str]:
    """One ``pip install --dry-run`` resolution; (ok, one line)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
               "--disable-pip-version-check", "--report", str(report), *(["--index-url", index] if index else []),
               *(["--extra-index-url", extra_index] if extra_index else []), *args]
        t0 = time.time()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=PIP_TIMEOUT_S, env=pip_env(index), cwd=cwd)
        except subprocess.TimeoutExpired:
            return False, f"{label}: FAILED: pip took over {PIP_TIMEOUT_S}s"
        s = time.time() - t0
        if r.returncode != 0 or not report.exists():
            err = [ln.strip() for ln in (r.stderr or r.stdout).splitlines() if ln.strip()
                   and not ln.lstrip().startswith(("WARNING", "hint:", "note:"))]
            return False, f"{label}: FAILED ({s:.0f}s): " + " | ".join(err[-4:])[:600]
        got = {i["metadata"]["name"].lower(): i["metadata"]["version"] for i in json.loads(report.read_text())["install"]}
    keys = ", ".join(f"{k} {got[k]}" for k in KEY_PACKAGES if k in got)
    return True, f"{label}: ok ({s:.0f}s): {len(got)} packages resolve; {keys}"


def _show(result: tuple[bool, str]) -> tuple[bool, str]:
    print(result[1], flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    from ..core.config import PROJECT_ROOT

    ap = argparse.ArgumentParser(prog="python -m rag.models.gpu_deps", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--torch-index", default="https://download.pytorch.org/whl/cu128")
    ap.add_argument("--index", default=DEFAULT_INDEX, help="an index URL (default: the one pip is configured for)")
    ap.add_argument("--find-links", default=None, help="folder with the llama-cpp-python wheel make setup built")
    ap.add_argument("--only", choices=("torch", "project", "vllm"), action="append", default=None)
    a = ap.parse_args(argv)
    only = set(a.only or ("torch", "project", "vllm"))
    p = pins(PROJECT_ROOT / "pyproject.toml")
    why = unreachable(a.index)
    if why:
        print(f"{index_name(a.index)}: unreachable ({why}): nothing can be resolved from here")
        return 2
    jobs: list[tuple[str, list[str], str, Path | None]] = []  # (label, pip args, index, cwd)
    if "torch" in only:
        tv = [f"torch=={p['torch']}", f"torchvision=={p['torchvision']}"]
        why = unreachable(a.torch_index)
        if why:
            print(f"{a.torch_index}: unreachable ({why}); torch/torchvision resolved from {index_name(a.index)} instead "
                  "(same versions; the CUDA wheels themselves are not checked)", flush=True)
            jobs.append((f"torch + torchvision [gpu] from {index_name(a.index)}", tv, a.index, None))
        else:
            jobs.append((f"torch + torchvision [gpu] from {a.torch_index}", ["--no-deps", *tv], a.torch_index, None))
    if "project" in only:
        links = ["--find-links", a.find_links] if a.find_links and Path(a.find_links).is_dir() else []
        jobs.append((f"project .[dev,gpu] from {index_name(a.index)}" + (" + local llama wheel" if links else ""),
                     [*links, "-e", ".[dev,gpu]"], a.index, PROJECT_ROOT))
    if "vllm" in only:
        jobs.append((f"vLLM venv vllm=={p['vllm']} from {index_name(a.index)}", [f"vllm=={p['vllm']}"], a.index, None))
    # Side by side: each resolution mostly waits on the index (vLLM's tree alone takes minutes).
    with ThreadPoolExecutor(max_workers=len(jobs) or 1) as pool:
        futures = [pool.submit(resolve, label, args, index, cwd=cwd) for label, args, index, cwd in jobs]
        results = [_show(f.result()) for f in as_completed(futures)]
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
