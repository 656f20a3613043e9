"""Shared fixtures: the generated demo corpus (session-scoped) and a test config factory."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

# No test may reach a model hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SHARED_DEV = Path(__file__).resolve().parents[2] / "shared" / "erc2-dev"

# The interpreter as a terminal starts it, for the Ctrl-C tests: SIGINT at its default disposition. A shell
# starts a background job (`pytest ... &`, no job control) with SIGINT ignored, every child inherits that, and
# Python then never raises KeyboardInterrupt: those tests would see a run that no Ctrl-C can stop. The launcher
# restores the default and execs the real command (a default disposition survives exec).
PYTHON_AS_FROM_A_TERMINAL = [sys.executable, "-c", "import os, signal, sys; signal.signal(signal.SIGINT, "
                             "signal.SIG_DFL); os.execv(sys.executable, [sys.executable] + sys.argv[1:])"]


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory) -> Path:
    """A freshly generated demo corpus (ERC layout) in a temp folder."""
    from rag.demo import generate

    return generate(tmp_path_factory.mktemp("demo") / "demo")


@pytest.fixture
def make_cfg(tmp_path):
    """``make_cfg(data_dir, **overrides)`` -> a `test`-preset config writing under tmp_path."""
    from rag.core.config import load_config

    def _make(data_dir: Path | str = "data/demo", run: str = "t", overrides: dict | None = None, preset: str = "test"):
        return load_config(preset, overrides=overrides, data_dir=str(data_dir), run=run,
                           outputs_dir=str(tmp_path / "outputs"), cache_dir=str(tmp_path / "cache"))

    return _make


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture(scope="session")
def standin_llm():
    """The base URL of a stand-in OpenAI-compatible LLM server (tests/standin_llama.py, a real process on
    127.0.0.1 whose answers fit the request's JSON schema): stages run for real, quickly and deterministically."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("standin_llama.py")), str(port), "ok", "0",
                             "standin"])
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.2)
    yield f"http://127.0.0.1:{port}/v1"
    proc.kill()
    proc.wait()


# ---- `pytest -m reliability`: the table of probes and their outcomes (issue 33) ------------------------
_PROBES: dict[str, dict] = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Record each reliability test's outcome (a failed setup or teardown counts as the test's)."""
    rep = (yield).get_result()
    if item.get_closest_marker("reliability") is None:
        return
    row = _PROBES.setdefault(item.nodeid, {"probe": _probe_name(item), "outcome": "passed", "seconds": 0.0})
    row["seconds"] += rep.duration
    if rep.failed:
        row["outcome"] = "FAILED" if rep.when == "call" else f"ERROR ({rep.when})"
    elif rep.skipped and row["outcome"] == "passed":
        row["outcome"] = "xfailed" if hasattr(rep, "wasxfail") else "skipped"


def _probe_name(item) -> str:
    """``test_two_writers_...`` in tests/test_x.py -> "x: two writers ..." (+ parameters)."""
    name = item.originalname if hasattr(item, "originalname") else item.name
    module = Path(str(item.fspath)).stem.removeprefix("test_")
    params = f" [{item.callspec.id}]" if hasattr(item, "callspec") else ""
    return f"{module}: {name.removeprefix('test_').replace('_', ' ')}{params}"


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """After a run selecting ``-m reliability``: one line per probe, its outcome and time."""
    if not _PROBES or "reliability" not in (config.getoption("markexpr", "") or ""):
        return
    tr = terminalreporter
    width = min(110, max(len(r["probe"]) for r in _PROBES.values()))
    tr.section("reliability probes")
    tr.write_line(f"{'probe':<{width}}  {'outcome':<16} {'seconds':>8}")
    for r in _PROBES.values():
        probe = r["probe"] if len(r["probe"]) <= width else r["probe"][: width - 3] + "..."
        tr.write_line(f"{probe:<{width}}  {r['outcome']:<16} {r['seconds']:>8.1f}")
    counts: dict[str, int] = {}
    for r in _PROBES.values():
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    tr.write_line(", ".join(f"{n} {k}" for k, n in counts.items()) + " (timings on a shared machine)")
