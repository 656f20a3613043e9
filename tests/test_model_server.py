"""The local model server's watchdog, against real stand-in server processes (tests/standin_llama.py):
a server that segfaults on its first request, one that dies between calls, one that never becomes ready,
one that exits at start; and a stage-05 run whose server dies mid-run (records kept, one-line error,
resume). No mocks of the HTTP layer: the openai client talks to a real process on 127.0.0.1."""
from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from rag.models import ModelUnavailable, get_llm
from rag.models import llm as llm_mod
from rag.models import llama_server as ls

STANDIN = Path(__file__).with_name("standin_llama.py")
SAY = [{"role": "user", "content": "Say OK."}]


@pytest.fixture
def standin(monkeypatch, tmp_path):
    """``standin(mode, n=0)``: every LlamaServer started from now on runs the stand-in in that mode."""
    models = tmp_path / "models"
    (models / "gguf").mkdir(parents=True)

    def use(mode: str, n: int = 0):
        monkeypatch.setattr(ls.LlamaServer, "command",
                            lambda self: [sys.executable, str(STANDIN), str(self.port), mode, str(n), self.alias])
        monkeypatch.setattr(ls.LlamaServer, "check_installed", lambda self: None)

    monkeypatch.setattr(llm_mod.ChatLLM, "check_available", lambda self: None)
    # Fresh registries: a real server another test left running for the same model file would otherwise be
    # reused (get_server shares one server per settings) and answer in the stand-in's place.
    monkeypatch.setattr(ls, "_SERVERS", {})
    monkeypatch.setattr(llm_mod, "_REGISTRY", {})
    yield use
    for server in list(ls._SERVERS.values()):  # only the stand-ins this test started
        server.stop()


def _cfg(make_cfg, **over):
    return make_cfg(overrides={"llm.cache": False, "llm.retry_base_s": 0.05, **over})


@pytest.mark.reliability
def test_server_segfaulting_on_first_request_fails_fast_naming_the_signal(standin, make_cfg):
    standin("segv", 0)
    llm = get_llm(_cfg(make_cfg))
    t0 = time.monotonic()
    with pytest.raises(ModelUnavailable) as ei:
        llm.complete(SAY)
    elapsed = time.monotonic() - t0
    first = str(ei.value).splitlines()[0]
    assert "killed by SIGSEGV (signal 11)" in first and "after 1 restart(s)" in first, first
    assert elapsed < 30, elapsed  # seconds, not the minutes of a retry loop against a dead port
    assert llm.server.restarts == 1
    assert llm.http_requests == 2  # one request per server process, no retries against a dead port


@pytest.mark.reliability
def test_server_dying_between_calls_is_restarted_once_then_final(standin, make_cfg):
    standin("ok")
    llm = get_llm(_cfg(make_cfg))
    assert llm.complete(SAY).raw == "OK"
    os.kill(llm.server.proc.pid, signal.SIGKILL)  # e.g. the OOM killer
    llm.server.proc.wait()
    r = llm.complete(SAY)
    assert r.raw == "OK" and r.usage.restarts == 1 and r.usage.as_dict()["restarts"] == 1
    os.kill(llm.server.proc.pid, signal.SIGKILL)
    llm.server.proc.wait()
    t0 = time.monotonic()
    with pytest.raises(ModelUnavailable, match=r"killed by SIGKILL \(signal 9\) \(after 1 restart"):
        llm.complete(SAY)
    assert time.monotonic() - t0 < 5


@pytest.mark.reliability
def test_server_that_never_becomes_ready_times_out_with_a_clear_message(standin, make_cfg):
    standin("never-ready")
    llm = get_llm(_cfg(make_cfg, **{"llm.server_start_timeout_s": 2}))
    t0 = time.monotonic()
    with pytest.raises(ModelUnavailable, match=r"did not answer within 2s \(llm.server_start_timeout_s\)"):
        llm.complete(SAY)
    assert time.monotonic() - t0 < 20
    srv = next(iter(ls._SERVERS.values()))  # this test's registry holds only the stand-in
    log = ls.LOG_DIR / f"llama-{srv.alias}-{os.getpid()}-{srv.port}.log"
    assert not log.exists()  # its log was removed (other tests' live servers keep theirs)


@pytest.mark.reliability
def test_server_exiting_at_start_quotes_its_log(standin, make_cfg):
    standin("exit-at-start")
    llm = get_llm(_cfg(make_cfg))
    with pytest.raises(ModelUnavailable) as ei:
        llm.complete(SAY)
    assert "exited with code 3 during start" in str(ei.value) and "bad magic" in str(ei.value)


@pytest.mark.reliability
def test_describe_exit_and_stale_logs(tmp_path):
    assert ls.describe_exit(-11) == "killed by SIGSEGV (signal 11)"
    assert ls.describe_exit(1) == "exited with code 1"
    dead = tmp_path / "llama-m-999999999-1234.log"  # no such pid
    mine = tmp_path / f"llama-m-{os.getpid()}-1235.log"
    dead.write_text("x")
    mine.write_text("x")
    assert ls.clean_stale_logs(tmp_path) == 1
    assert not dead.exists() and mine.exists()


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("q*.json"))}


@pytest.mark.reliability
@pytest.mark.slow
def test_stage05_server_death_is_one_line_and_resume_keeps_finished_records(standin, demo_dir, tmp_path, capsys):
    from rag.pipeline import main

    args = ["--preset", "test", "--data", str(demo_dir), "--run", "death", "--direct",
            "--set", f"outputs_dir={tmp_path / 'outputs'}", "--set", f"cache_dir={tmp_path / 'cache'}",
            "--set", "rerank.mode=llm", "--set", "llm.cache=false"]
    assert main(args + ["--stages", "01_parse,02_clean,03_chunk,04_index"]) == 0
    standin("segv", 2)  # each server process answers 2 rerank calls, then segfaults
    capsys.readouterr()
    t0 = time.monotonic()
    assert main(args + ["--stages", "05_retrieve"]) == 2
    elapsed = time.monotonic() - t0
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "05_retrieve: ModelUnavailable: llama.cpp server" in lines[0], err
    assert "killed by SIGSEGV" in lines[0] and "resume with: python -m rag.pipeline" in err
    assert "Traceback" not in err
    assert elapsed < 120, elapsed
    d = tmp_path / "outputs" / "death" / "05_retrieve"
    before = _digest(d)
    assert 1 <= len(before) < len(json.loads((demo_dir / "questions.json").read_text()))
    for name in before:
        json.loads((d / name).read_text())  # every record written before the death is whole
    standin("ok")
    for server in list(ls._SERVERS.values()):
        server.stop()
    ls._SERVERS.clear()
    llm_mod._REGISTRY.clear()
    assert main(args + ["--stages", "05_retrieve"]) == 0
    after = _digest(d)
    assert len(after) == len(json.loads((demo_dir / "questions.json").read_text()))
    assert {k: after[k] for k in before} == before  # finished questions were not redone

