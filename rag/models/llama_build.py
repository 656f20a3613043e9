"""Which llama.cpp build this machine runs, for diagnostics (``python -m rag.models --check``).

- ``system_info()``: llama.cpp's system-info line (the SIMD sets the build uses), read in a subprocess.
- ``build_info()``: the variant and CMake flags ``make setup`` recorded in ``<venv>/llama-build.txt``.
- ``cpu_summary()``: the CPU model and the SIMD flags that decide which build can run.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ..core.artifacts import cpu_info
from .llama_server import describe_exit

# The CPU flags that decide which build can run (the Makefile's LLAMA_VARIANT) and which to avoid (AMX).
SIMD_FLAGS = ("avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16",
              "amx_tile", "amx_int8", "amx_bf16")

def system_info(timeout_s: float = 60.0) -> str:
    """llama.cpp's system info line (which SIMD sets the build uses), read in a subprocess so that a build
    the CPU cannot run (SIGILL) is reported, not fatal. Returns the line, or 'unavailable: <why>'."""
    code = "import llama_cpp; print(llama_cpp.llama_print_system_info().decode().strip())"
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return "unavailable: timed out"
    if r.returncode != 0:
        return f"unavailable: loading llama_cpp {describe_exit(r.returncode)}: {r.stderr.strip()[-300:]}"
    return r.stdout.strip().splitlines()[-1] if r.stdout.strip() else "unavailable: no output"


def build_info() -> str:
    """How llama-cpp-python was built here: the Makefile writes ``<venv>/llama-build.txt`` (variant and
    CMake flags); 'unknown build' when it was installed some other way."""
    p = Path(sys.prefix) / "llama-build.txt"
    return p.read_text().strip() if p.exists() else "unknown build (not installed by `make setup`)"


def cpu_summary() -> str:
    """CPU model and the SIMD features that decide which llama.cpp build runs (x86 Linux; else 'unknown')."""
    cpu = cpu_info()
    if cpu is None:
        return "unknown CPU"
    model, flags = cpu
    keep = sorted(f for f in flags if f in SIMD_FLAGS)
    return f"{model or '?'}, {os.cpu_count()} cores, flags: {' '.join(keep) or 'none of avx/avx2/avx512/amx'}"
