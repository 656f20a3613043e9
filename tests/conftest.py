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
