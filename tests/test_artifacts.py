import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from rag.core.artifacts import hash_key, read_json, write_json_atomic

from rag.core.stage import Stage


def test_atomic_write_and_manifest(make_cfg):
    cfg = make_cfg()
    st = Stage(cfg, "03_chunk")
    key = hash_key("input", cfg.section_hash("chunk"))
    assert not st.is_current("r1", key)
    with st.timed("r1"):
        st.write_json("r1.json", {"a": 1})
    st.mark_done("r1", key, chunks=3)
    st.add_tokens(prompt=5)
    st.add_tokens(prompt=7)
    m = st.finish(counts={"reports": 1})
    assert st.is_current("r1", key, "r1.json")
    assert not st.is_current("r1", key + "x")
    assert m["tokens"]["prompt"] == 12 and m["items"]["r1"]["chunks"] == 3
    on_disk = read_json(st.dir / "manifest.json")
    assert on_disk["config_hash"] == cfg.config_hash() and "pydantic" in on_disk["versions"]
    # a missing output makes the item stale even with a matching key
    (st.dir / "r1.json").unlink()
    assert not st.is_current("r1", key, "r1.json")


def test_unknown_stage_rejected(make_cfg):
    with pytest.raises(ValueError, match="unknown stage"):
        Stage(make_cfg(), "99_magic")


def test_failed_write_leaves_old_file(tmp_path):
    p = tmp_path / "x.json"
    write_json_atomic(p, {"v": 1})
    with pytest.raises(TypeError):
        write_json_atomic(p, {"v": object()})
    assert json.loads(p.read_text()) == {"v": 1}
    assert [f.name for f in tmp_path.iterdir()] == ["x.json"]


def test_kill_9_mid_write_never_corrupts(tmp_path):
    """A writer killed with SIGKILL while rewriting a big file leaves a whole old or new file."""
    target = tmp_path / "big.json"
    code = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(os.getcwd())!r})
        from rag.core.artifacts import write_json_atomic
        i = 0
        while True:
            write_json_atomic({str(target)!r}, {{"i": i, "pad": "x" * 2_000_000}})
            i += 1
    """)
    proc = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.time() + 20
    while not target.exists() and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    data = json.loads(target.read_text())  # must parse: never half a file
    assert len(data["pad"]) == 2_000_000
    # the next Stage-less reader ignores temp leftovers; a Stage sweeps them
    leftovers = [f for f in tmp_path.iterdir() if ".tmp-" in f.name]
    assert all(f.name.startswith("big.json.tmp-") for f in leftovers)


def test_stage_sweeps_temp_files_and_resumes(make_cfg):
    cfg = make_cfg()
    st = Stage(cfg, "01_parse")
    (st.dir / "a.json.tmp-123").write_text("{half")
    st.write_json("done.json", {"ok": True})
    st.mark_done("done", "k1")
    # "crash": no finish(); a new Stage on the same folder sees what was done
    st2 = Stage(cfg, "01_parse")
    assert not (st2.dir / "a.json.tmp-123").exists()
    assert st2.is_current("done", "k1", "done.json")
    assert not st2.is_current("todo", "k1")


def test_a_rerun_that_skips_everything_keeps_the_cost_of_the_run_that_did_the_work(make_cfg):
    cfg = make_cfg()
    key = hash_key("input", cfg.section_hash("answer"))
    st = Stage(cfg, "06_answer")
    with st.timed("q0"):
        time.sleep(0.05)
        st.write_json("q0.json", {"v": 1})
    st.mark_done("q0", key)
    st.add_tokens(prompt=100, completion=10)
    first = st.finish(counts={"questions": 1})
    assert first["seconds"] >= 0.05 and "checked" not in first

    again = Stage(cfg, "06_answer")
    assert again.is_current("q0", key, "q0.json")
    second = again.finish(counts={"questions": 1, "skipped": 1})
    assert second["seconds"] == first["seconds"] and second["tokens"] == {"prompt": 100, "completion": 10}
    assert second["started"] == first["started"] and second["checked"]["seconds"] < first["seconds"]
    assert second["counts"]["skipped"] == 1

    third = Stage(cfg, "06_answer")  # one item redone: this invocation's own numbers
    third.mark_done("q0", key)
    m = third.finish()
    assert "checked" not in m and m["tokens"] == {}


def test_manifest_versions_name_the_machine():
    """A result names the CPU (and the llama.cpp build when the venv has one): the same GGUF answers
    differently on other SIMD builds."""
    from rag.core.artifacts import package_versions

    v = package_versions()
    assert v["cpu"] and "cores" in v["cpu"]
    if (Path(sys.prefix) / "llama-build.txt").exists():
        assert v["llama_build"].startswith("variant=")


def test_manifest_versions_name_kernel_caps_only_when_set(monkeypatch):
    """Runs made with torch's kernels capped (ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2, to stand
    in for a CPU without AVX-512 / AMX) say so in their manifests; runs without a cap read as before."""
    from rag.core import artifacts

    for k in artifacts.KERNEL_CAPS:
        monkeypatch.delenv(k, raising=False)
    artifacts._machine.cache_clear()
    try:
        assert "cpu_caps" not in artifacts.package_versions()
        monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
        monkeypatch.setenv("MKL_ENABLE_INSTRUCTIONS", " AVX2 ")
        monkeypatch.setenv("DNNL_MAX_CPU_ISA", "")  # empty: not a cap
        artifacts._machine.cache_clear()
        assert artifacts.package_versions()["cpu_caps"] == "ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2"
    finally:
        monkeypatch.undo()
        artifacts._machine.cache_clear()
