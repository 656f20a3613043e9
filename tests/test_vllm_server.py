"""The managed vLLM server (llm.backend = "vllm") against a real stand-in process (tests/standin_vllm.py) that
speaks the OpenAI API: the command line it gets, readiness, json_schema structured outputs (and the
schema-in-prompt fallback when the server refuses one), a crash reported in one line with the log tail,
an exit at start, stop() and the parent-death watchdog ending the whole process group. No GPU and no
vLLM here: the stand-in is started exactly the way `vllm serve` would be."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

from rag.models import ModelUnavailable, get_llm
from rag.models import llm as llm_mod
from rag.models import vllm_server as vs

STANDIN = Path(__file__).with_name("standin_vllm.py")
SAY = [{"role": "user", "content": "Say OK."}]
MODEL = "org/standin-7b"


class Fact(BaseModel):
    company: str
    revenue_musd: float
    grew: bool


@pytest.fixture
def vllm_cfg(monkeypatch, make_cfg, tmp_path):
    """``vllm_cfg(mode="ok", n=0, **overrides)``: a test config whose llm is the stand-in vLLM server; the
    stand-in records its argv and every request in ``tmp_path / "requests.jsonl"``."""
    monkeypatch.setattr(vs, "_SERVERS", {})  # fresh registries: no server shared with other tests
    monkeypatch.setattr(llm_mod, "_REGISTRY", {})
    rec = tmp_path / "requests.jsonl"

    def make(mode: str = "ok", n: int = 0, **over):
        extra = ["--standin-mode", mode, "--standin-n", str(n), "--standin-record", str(rec)]
        return make_cfg(overrides={"llm.backend": "vllm", "llm.model": MODEL, "llm.cache": False,
                                   "llm.retry_base_s": 0.05, "llm.server_start_timeout_s": 30,
                                   "llm.vllm.command": f"{sys.executable} {STANDIN}",
                                   "llm.vllm.extra_args": extra, **over})

    make.record = lambda: [json.loads(x) for x in rec.read_text().splitlines()] if rec.exists() else []
    yield make
    for server in list(vs._SERVERS.values()):  # only the stand-ins this test started
        server.stop()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_vllm_serve_command_readiness_answer_and_stop(vllm_cfg):
    cfg = vllm_cfg(**{"llm.vllm.served_model_name": "standin-served", "llm.vllm.gpu_memory_utilization": 0.7,
                      "llm.vllm.tensor_parallel_size": 2, "llm.vllm.max_model_len": 4096})
    llm = get_llm(cfg)
    r = llm.complete(SAY)
    assert r.raw.startswith("OK ") and r.usage.requests == 1
    srv = llm.server
    assert isinstance(srv, vs.VLLMServer) and srv.running and srv.base_url.startswith("http://127.0.0.1:")
    cmd = srv.command()
    assert cmd[:4] == [sys.executable, str(vs.SERVE), str(os.getpid()), "--exec"]
    first, *requests = vllm_cfg.record()
    argv = first["argv"]
    assert argv[:2] == ["serve", MODEL]
    flags = dict(zip(argv[2::2], argv[3::2]))
    assert flags["--host"] == "127.0.0.1" and flags["--port"] == str(srv.port)
    assert flags["--served-model-name"] == "standin-served" and flags["--gpu-memory-utilization"] == "0.7"
    assert flags["--max-model-len"] == "4096" and flags["--tensor-parallel-size"] == "2"
    assert flags["--standin-mode"] == "ok"  # llm.vllm.extra_args are passed on
    assert requests == [{"model": "standin-served", "response_format": {}}]  # the served name is asked for
    standin_pid, pgid = first["pid"], srv.proc.pid
    log = srv._log_path
    assert log is not None and "standin vLLM serving" in log.read_text()
    llm.shutdown()
    assert srv.proc is None and not srv.running and not log.exists()
    assert not _alive(standin_pid) and not _group_alive(pgid)  # the server and its whole group are gone


def test_vllm_max_model_len_defaults_to_n_ctx_and_pins_cuda_n(vllm_cfg):
    s = vs.server_settings(vllm_cfg(**{"device": "cuda:1"}))
    assert s["max_model_len"] == vllm_cfg().llm.n_ctx and s["served_name"] == MODEL
    assert s["env"] == {"CUDA_VISIBLE_DEVICES": "1"}
    assert vs.server_settings(vllm_cfg())["env"] == {}


def test_vllm_structured_output_sends_json_schema(vllm_cfg):
    llm = get_llm(vllm_cfg())
    assert llm.structured_mode == "json_schema"
    r = llm.complete(SAY, schema=Fact)
    assert isinstance(r.value, Fact) and not r.repaired
    fmt = vllm_cfg.record()[-1]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "Fact"
    schema = fmt["json_schema"]["schema"]
    assert set(schema["properties"]) == {"company", "revenue_musd", "grew"} and schema["additionalProperties"] is False


def test_vllm_refusing_the_schema_falls_back_to_schema_in_prompt(vllm_cfg, capsys):
    llm = get_llm(vllm_cfg("reject-schema"))
    r = llm.complete(SAY, schema=Fact)
    assert isinstance(r.value, Fact) and llm.schema_fallbacks == 1
    r2 = llm.complete([{"role": "user", "content": "again"}], schema=Fact)
    assert isinstance(r2.value, Fact) and llm.schema_fallbacks == 1  # no second refused request
    fmts = [x["response_format"].get("type") for x in vllm_cfg.record()[1:]]
    assert fmts == ["json_schema", None, None]
    assert capsys.readouterr().err.count("vLLM refused a json_schema response_format") == 1


@pytest.mark.reliability
def test_vllm_crash_is_one_line_naming_the_signal_with_log_tail(vllm_cfg):
    llm = get_llm(vllm_cfg("segv", 0))
    t0 = time.monotonic()
    with pytest.raises(ModelUnavailable) as ei:
        llm.complete(SAY)  # kills server 1; the restarted server 2 crashes too
    msg = str(ei.value)
    first = msg.splitlines()[0]
    assert first.startswith(f"vLLM server for {MODEL} killed by SIGSEGV (signal 11) (after 1 restart(s)"), first
    assert "CUDA out of memory (lower llm.vllm.gpu_memory_utilization" in first  # the hint, same line
    assert "Server log tail:" in msg and "standin vLLM serving" in msg
    assert time.monotonic() - t0 < 30 and llm.server.restarts == 1
    assert llm.server.deaths == ["killed by SIGSEGV (signal 11)"] * 2


@pytest.mark.reliability
def test_vllm_exit_at_start_quotes_its_log(vllm_cfg):
    llm = get_llm(vllm_cfg("exit-at-start"))
    with pytest.raises(ModelUnavailable) as ei:
        llm.complete(SAY)
    first, *rest = str(ei.value).splitlines()
    assert first == f"vLLM server for {MODEL} exited with code 1 during start; its log:"
    assert any("CUDA out of memory" in line for line in rest)


@pytest.mark.reliability
def test_vllm_never_ready_times_out(vllm_cfg):
    llm = get_llm(vllm_cfg("never-ready", **{"llm.server_start_timeout_s": 2}))
    with pytest.raises(ModelUnavailable, match=r"vLLM server for org/standin-7b did not answer within 2s"):
        llm.complete(SAY)
    assert not any(s.running for s in vs._SERVERS.values())


def test_vllm_missing_executable_is_one_clear_message(vllm_cfg):
    with pytest.raises(ModelUnavailable, match=r"'/nonexistent/vllm' \(llm.vllm.command\) was not found: "
                                               r"install vLLM with `make gpu`"):
        get_llm(vllm_cfg(**{"llm.vllm.command": "/nonexistent/vllm"}))


def test_vllm_command_paths():
    from rag.core.config import PROJECT_ROOT

    assert vs.resolve_command(".venv-vllm/bin/vllm --x") == [str(PROJECT_ROOT / ".venv-vllm/bin/vllm"), "--x"]
    assert vs.resolve_command("/opt/vllm/bin/vllm") == ["/opt/vllm/bin/vllm"]
    assert vs.resolve_command("python3 -m vllm.entrypoints.cli.main")[1:] == ["-m", "vllm.entrypoints.cli.main"]
    assert vs.resolve_command("") == []


_PARENT = """
import sys, time
from rag.core.config import load_config
from rag.models.vllm_server import get_vllm_server
cfg = load_config("test", overrides={{"llm.backend": "vllm", "llm.model": "m", "llm.server_start_timeout_s": 30,
    "llm.vllm.command": {cmd!r}, "llm.vllm.extra_args": ["--standin-record", {rec!r}]}})
get_vllm_server(cfg).start()
print("ready", flush=True)
time.sleep(600)
"""


@pytest.mark.reliability
def test_vllm_server_ends_when_its_parent_is_killed(tmp_path):
    rec = tmp_path / "rec.jsonl"
    code = _PARENT.format(cmd=f"{sys.executable} {STANDIN}", rec=str(rec))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert parent.stdout.readline().strip() == "ready"
        pid = json.loads(rec.read_text().splitlines()[0])["pid"]
        assert _alive(pid)
        parent.send_signal(signal.SIGKILL)  # no atexit hook runs: only the watchdog can end the server
        parent.wait()
        deadline = time.monotonic() + 20
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(pid)
    finally:
        if parent.poll() is None:
            parent.kill()
