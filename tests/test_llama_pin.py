"""The llama-cpp-python pin and the logits patch's record, without model weights (issue 47).

The Makefile's ``LLAMA_VERSION`` is the one source of the pin: ``rag.models.llama_logits.CHECKED`` (the
versions the patch was read against) must name it, and every other file that spells a llama-cpp-python
version (pyproject.toml, environment.yml, the README, rag/) must spell the same one. The patch's status
("installed" / "refused (version X)") reaches the server log through ``rag/models/_serve.py``, run here with
a stand-in ``llama_cpp`` package.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from rag.models import llama_logits, server_notes
from rag.models.llama_server import SERVE, LlamaServer

ROOT = Path(__file__).resolve().parents[1]
# "llama-cpp-python[server]==0.3.36", "llama_cpp_python-0.3.36-...whl", "llama-cpp-python 0.3.36"
SPELLED = re.compile(r"llama[-_]cpp[-_]python(?:\[server\])?(?:==|-|\s+)(\d+\.\d+\.\d+)")


def makefile_pin() -> str:
    m = re.search(r"^LLAMA_VERSION\s*:?=\s*(\S+)", (ROOT / "Makefile").read_text(), re.M)
    assert m, "Makefile: no LLAMA_VERSION := ... line"
    return m.group(1)


def test_checked_is_the_makefile_pin():
    pin = makefile_pin()
    assert llama_logits.CHECKED[-1] == pin, (
        f"the Makefile builds llama-cpp-python {pin}, the logits patch was checked against {llama_logits.CHECKED}: "
        "read Llama.eval / generate / _create_completion of the new version, then update CHECKED")
    assert llama_logits.PINNED == pin


def test_every_spelled_pin_is_the_makefile_pin():
    pin = makefile_pin()
    files = [ROOT / "pyproject.toml", ROOT / "environment.yml", ROOT / "README.md", *sorted((ROOT / "rag").rglob("*.py"))]
    found = {str(f.relative_to(ROOT)): SPELLED.findall(f.read_text(encoding="utf-8")) for f in files if f.exists()}
    assert found["pyproject.toml"] == [pin] and found["environment.yml"] == [pin]
    wrong = {f: v for f, vs in found.items() for v in vs if v != pin}
    assert not wrong, f"llama-cpp-python spelled other than the Makefile's {pin}: {wrong}"


def _fake_llama_cpp(root: Path, version: str) -> Path:
    """A stand-in ``llama_cpp`` (version, a Llama with the patched methods, a server that only prints)."""
    pkg = root / "llama_cpp"
    (pkg / "server").mkdir(parents=True)
    (pkg / "__init__.py").write_text(f"__version__ = {version!r}\n")
    (pkg / "llama.py").write_text(
        "class Llama:\n"
        "    def eval(self, tokens): pass\n"
        "    def create_completion(self, prompt, echo=False, logprobs=None): pass\n"
        "    @staticmethod\n"
        "    def logits_to_logprobs(logits, axis=-1): return logits\n")
    (pkg / "server" / "__init__.py").write_text("")
    (pkg / "server" / "__main__.py").write_text("import sys\nprint('fake server', sys.argv[1:])\n")
    return root


@pytest.mark.parametrize("version,status", [(llama_logits.PINNED, "installed"), ("9.9.9", "refused (version 9.9.9)")])
def test_the_server_log_says_whether_the_patch_is_installed(tmp_path, version, status):
    fake = _fake_llama_cpp(tmp_path / version, version)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(fake), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, str(SERVE), str(os.getpid()), "--port", "1"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    log = out.stderr + out.stdout  # the server's log holds both (stderr into stdout)
    assert f"rag.models.llama_logits: {status}\n" in log and "fake server ['--port', '1']" in out.stdout
    assert llama_logits.logged_status(log) == status


def test_the_server_notes_come_from_its_log(tmp_path):
    server = LlamaServer(tmp_path / "m.gguf", "m", 512, 1, 5.0)
    assert server_notes(SimpleNamespace(server=server)) == {} and server_notes(object()) == {}
    server._log_path = tmp_path / "llama.log"
    server._log_path.write_text("rag.models.llama_logits: refused (version 0.3.99)\nllama_model_loader: ...\n")
    server.read_notes()
    assert server_notes(SimpleNamespace(server=server)) == {"logits_patch": "refused (version 0.3.99)"}


def test_install_records_a_refusal(monkeypatch):
    llama_cpp = pytest.importorskip("llama_cpp")
    llama_logits.uninstall()
    monkeypatch.setattr(llama_cpp, "__version__", "9.9.9")
    assert llama_logits.install() is False and llama_logits.status() == "refused (version 9.9.9)"
    assert llama_logits.log_line() == "rag.models.llama_logits: refused (version 9.9.9)"
