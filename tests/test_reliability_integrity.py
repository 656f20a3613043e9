"""Issue 45's probes "trust nothing read back": damaged disk-cache entries and files, damaged stage artifacts,
non-UTF-8 dataset files, and a score older than its answers. Each fails on the code before the fix (bcf3d6a)
and is part of ``pytest -m reliability``'s table (conftest.py).

Subprocesses import the same ``rag`` as this test process (``PYTHONPATH`` = its project root), as in
tests/test_reliability.py.
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import rag

pytestmark = pytest.mark.reliability

ROOT = Path(rag.__file__).resolve().parents[1]


# ---- helpers ---------------------------------------------------------------------------------------
def damage_report() -> dict:
    """What this process noted as damaged since the last call (rag.core.integrity), {} on code without it (so
    that a probe run on the old code fails at what it probes, not at this import)."""
    try:
        from rag.core import integrity
    except ImportError:
        return {}
    return integrity.take()


def make_embedder(cache_path: Path, dim: int = 8):
    """A deterministic embedder (no model) over a real DiskCache: ``(embedder, calls)``, ``calls`` the texts
    each model call got."""
    from rag.models.cache import DiskCache
    from rag.models.embed import _CachedEmbedder

    calls: list[list[str]] = []

    class Fake(_CachedEmbedder):
        backend = "fake"

        def _embed_texts(self, texts):
            calls.append(list(texts))
            rows = [np.random.default_rng(sum(map(ord, t))).normal(size=dim) for t in texts]
            return np.asarray(rows, dtype=np.float32), 0

    return Fake("fake-model", 4, 512, DiskCache(cache_path)), calls


def corrupt_rows(path: Path, sql: str) -> int:
    """Run an UPDATE on the cache file behind the cache's back (what a bad disk or a stray tool does)."""
    con = sqlite3.connect(path)
    n = con.execute(sql).rowcount
    con.commit()
    con.close()
    return n


def damage_line(err: str, name: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("warning: cache ") and name in ln]


# ---- cache entries ------------------------------------------------------------------------------------
@pytest.mark.parametrize("garbage", ["odd_length", "same_length", "text"])
def test_garbage_embedding_entries_are_dropped_recomputed_and_counted_once(tmp_path, garbage):
    """Probe: garbage values in embeddings.sqlite gave `ValueError: buffer size must be a multiple of
    element size` for every question (exit 0, all N/A), the cache never named. Now each damaged vector is
    dropped and embedded again (the same vectors as before), and the count names the file."""
    path = tmp_path / "embeddings.sqlite"
    emb, calls = make_embedder(path)
    texts = [f"chunk {i}" for i in range(6)]
    clean = emb.embed(texts)
    damage_report()
    sql = {"odd_length": "UPDATE kv SET v = randomblob(7) WHERE rowid <= 3",
           "same_length": "UPDATE kv SET v = randomblob(32) WHERE rowid <= 3",  # 8 float32s: only CRC/norm see it
           "text": "UPDATE kv SET v = 'not a vector' WHERE rowid <= 3"}[garbage]
    assert corrupt_rows(path, sql) == 3
    emb2, calls2 = make_embedder(path)  # a new process's embedder on the same file
    again = emb2.embed(texts)
    np.testing.assert_array_equal(again, clean)
    assert sum(map(len, calls2)) == 3  # only the damaged three were embedded again
    found = damage_report()
    assert found[str(path)]["bad_entries"] == 3
    emb3, calls3 = make_embedder(path)
    np.testing.assert_array_equal(emb3.embed(texts), clean)
    assert calls3 == [] and damage_report() == {}  # recomputed vectors were stored back, sound


def test_garbage_llm_cache_entries_are_asked_again(tmp_path, make_cfg):
    """Probe: garbage values in llm.sqlite gave a JSONDecodeError per question. Now a damaged entry is
    dropped and the model asked again (one request), the count names llm.sqlite."""
    from test_models_http import FakeOpenAI

    from rag.models import get_llm

    srv = FakeOpenAI(lambda body, n: (200, '{"value": 42}', {}))
    try:
        cfg = make_cfg(overrides={"llm.backend": "openai_compatible", "llm.base_url": srv.base_url,
                                  "llm.model": "fake-integrity", "llm.retry_base_s": 0.01})
        llm = get_llm(cfg)
        msgs = [[{"role": "user", "content": f"question {i}"}] for i in range(3)]
        first = [llm.complete(m).raw for m in msgs]
        assert len(srv.bodies) == 3
        damage_report()
        path = cfg.path("cache_dir") / "llm.sqlite"
        assert corrupt_rows(path, "UPDATE kv SET v = randomblob(40) WHERE rowid = 2") == 1
        assert [llm.complete(m).raw for m in msgs] == first
        assert len(srv.bodies) == 4  # the damaged one asked again, the others from the cache
        assert damage_report()[str(path)]["bad_entries"] == 1
    finally:
        srv.close()


# ---- whole cache files ------------------------------------------------------------------------------
@pytest.mark.parametrize("damage", ["garbage_header", "truncated"])
def test_an_unreadable_cache_file_is_moved_aside_and_started_afresh(tmp_path, damage):
    """Probe: a garbage header gave `sqlite3.DatabaseError: file is not a database` (a traceback in `rag ask`).
    Now the file is moved to `<name>.corrupt-<UTC time>` and a new cache started; the line names both."""
    path = tmp_path / "embeddings.sqlite"
    emb, _ = make_embedder(path)
    clean = emb.embed([f"text {i}" for i in range(400)])  # a few hundred KB: a truncation cuts into the table
    del emb
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    data = path.read_bytes()
    damaged = os.urandom(len(data)) if damage == "garbage_header" else data[: len(data) // 2]
    path.write_bytes(damaged)
    damage_report()
    emb2, calls = make_embedder(path)
    np.testing.assert_array_equal(emb2.embed([f"text {i}" for i in range(400)]), clean)
    assert sum(map(len, calls)) == 400  # nothing could be kept
    moved = [p for p in tmp_path.glob("embeddings.sqlite.corrupt-*") if not p.name.endswith(("-wal", "-shm"))]
    assert len(moved) == 1 and re.fullmatch(r"embeddings\.sqlite\.corrupt-\d{8}T\d{6}Z", moved[0].name), moved
    assert moved[0].read_bytes() == damaged  # kept as it was, for a look
    from rag.core import integrity

    lines = integrity.lines(damage_report())
    assert len(lines) == 1 and lines[0].startswith(f"warning: cache {path}: unreadable (") and \
        f"moved to {moved[0]}" in lines[0], lines


def _open_damaged(path: str, start: float, out) -> None:
    while time.time() < start:  # both processes meet the damaged file at once
        pass
    try:
        from rag.models.cache import DiskCache

        c = DiskCache(path)
        c.put(f"k{os.getpid()}", b"v")
        out.put("ok" if c.get(f"k{os.getpid()}") == b"v" else "lost")
    except Exception as e:  # noqa: BLE001 - reported to the test
        out.put(f"{type(e).__name__}: {e}")


def test_two_processes_meeting_one_damaged_cache_file_move_it_aside_once(tmp_path):
    """Two processes sharing a cache folder open a damaged file at the same moment: one moves it aside,
    neither moves the fresh file the other just made, both go on with the new file."""
    from rag.models.cache import DiskCache

    ctx = mp.get_context("fork")
    for trial in range(6):
        path = tmp_path / f"t{trial}" / "llm.sqlite"
        path.parent.mkdir()
        path.write_bytes(b"garbage, not sqlite " * 300)
        out, start = ctx.Queue(), time.time() + 0.3
        procs = [ctx.Process(target=_open_damaged, args=(str(path), start, out)) for _ in range(3)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        assert sorted(out.get(timeout=10) for _ in procs) == ["ok"] * 3
        moved = [p for p in path.parent.iterdir() if ".corrupt-" in p.name and not p.name.endswith(("-wal", "-shm"))]
        assert len(moved) == 1, sorted(p.name for p in path.parent.iterdir())
        assert len(DiskCache(path)) == 3  # every process's write is in the one new file


def test_a_missing_cache_file_is_made_only_under_the_lock(tmp_path):
    """The CI failure of stop 50 ("disk I/O error" in the race above): a process that found no file let sqlite
    make one (and its -wal/-shm) while another process, between moving a damaged file aside and making the
    new one, held the lock; the mover then took those for the damaged file's. Now a missing file is made
    only under the lock: while another holder has it, opening waits and makes nothing."""
    import fcntl
    import threading

    from rag.models.cache import DiskCache

    path = tmp_path / "llm.sqlite"
    made = []
    with open(str(path) + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # what _recover holds while it moves a file aside
        t = threading.Thread(target=lambda: made.append(DiskCache(path)))
        t.start()
        t.join(1.0)
        assert t.is_alive() and not path.exists(), sorted(p.name for p in tmp_path.iterdir())
        fcntl.flock(lock, fcntl.LOCK_UN)
    t.join(30)
    assert made and path.exists()
    made[0].put("a", b"1")
    assert made[0].get("a") == b"1"


def test_a_connection_opened_before_the_file_was_replaced_follows_the_new_file(tmp_path):
    """A cache object (another thread's or process's) that opened the file before a second one moved it
    aside writes to the new file, not to the moved one."""
    from rag.models.cache import DiskCache

    path = tmp_path / "llm.sqlite"
    early = DiskCache(path)
    early.put("a", b"1")
    # the file is damaged under it (a disk error, a copy over it) and a second cache object moves it aside
    path.write_bytes(b"garbage, not sqlite " * 300)
    for side in ("-wal", "-shm"):
        Path(str(path) + side).unlink(missing_ok=True)
    late = DiskCache(path)
    early.put("b", b"2")
    assert late.get("b") == b"2" and early.get("a") is None
    damage_report()


def _read_a_damaged_entry(item):
    """An item's work in a spawned worker process: one cache read that meets a damaged row."""
    from rag.core.loop import Json, Result
    from rag.models.cache import DiskCache

    assert DiskCache(item.payload).get(item.id) is None  # the damaged row reads as a miss
    return Result(files={f"{item.id}.json": Json({"ok": True})})


def test_damage_found_in_worker_processes_reaches_the_stage_manifest(tmp_path, make_cfg):
    """Items run in spawned worker processes (parse/clean pools, Ray): what their work found damaged in a
    cache comes back with each result, so the stage's manifest (and the closing line) counts it."""
    from rag.core.loop import Item, LocalExecutor, run_items
    from rag.core.stage import Stage
    from rag.models.cache import DiskCache

    path = tmp_path / "llm.sqlite"
    DiskCache(path).put_many([(f"i{n}", b'{"text": "x"}') for n in range(3)])
    assert corrupt_rows(path, "UPDATE kv SET v = randomblob(13)") == 3
    damage_report()
    stage = Stage(make_cfg(), "02_clean")
    items = [Item(id=f"i{n}", key="k", outputs=(f"i{n}.json",), payload=str(path)) for n in range(3)]
    outcomes = run_items(stage, items, _read_a_damaged_entry, executor=LocalExecutor("processes", 2), progress=False)
    assert [o.status for o in outcomes.values()] == ["ran"] * 3, outcomes
    manifest = stage.finish()
    assert manifest.get("damage", {}).get(str(path), {}).get("bad_entries") == 3, manifest.get("damage")


def test_a_full_disk_while_caching_does_not_fail_the_work(tmp_path):
    """Probe: the disk filling mid-write. A cache write that fails (sqlite: "database or disk is full") is
    counted, the vectors are still returned, and the next run embeds them again."""
    path = tmp_path / "embeddings.sqlite"
    emb, calls = make_embedder(path, dim=256)
    emb.embed(["warm"])
    conn = emb.cache._conn()
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages + 1}")  # this connection's disk is full now
    damage_report()
    texts = [f"long chunk {i}" for i in range(64)]
    vecs = emb.embed(texts)
    assert vecs.shape == (64, 256) and np.isfinite(vecs).all()
    found = damage_report()[str(path)]
    assert found["write_errors"] >= 1 and "full" in found["why_write"]


# ---- stage artifacts ------------------------------------------------------------------------------------
def _pipeline(data: Path, out: Path, run: str, *stages: str, code: Path = ROOT, notebooks: bool = False):
    env = {**os.environ, "PYTHONPATH": str(code)}
    env.pop("RAG_RUN_TOKEN", None)
    args = (["-m", "rag.cli", "run"] if notebooks else ["-m", "rag.pipeline", "--direct"]) + [
        "--preset", "test", "--data", str(data), "--run", run, "--stages", ",".join(stages),
        "--set", f"outputs_dir={out}", "--set", f"cache_dir={out / 'cache'}"]
    return subprocess.run([sys.executable, *args], cwd=code, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def parsed(demo_dir, tmp_path_factory):
    """One real 01_parse + 02_clean of the demo corpus: ``(data, out, run_dir)``."""
    tmp = tmp_path_factory.mktemp("art")
    data, out = tmp / "demo", tmp / "out"
    shutil.copytree(demo_dir, data)
    p = _pipeline(data, out, "base", "01_parse", "02_clean")
    assert p.returncode == 0, p.stdout + p.stderr
    return data, out, out / "base"


@pytest.mark.parametrize("damage", ["truncated", "same_size", "old_record_truncated"])
def test_a_damaged_stage_artifact_is_rebuilt_like_a_missing_one(parsed, damage):
    """Probe: with 01_parse/<sha1>.json cut short, the rerun exited 1 in a papermill traceback ending
    `ValueError: ...: not valid JSON` (with --direct: 02 failed the report). Now the item is not current:
    01 rebuilds it byte-identical, and the closing summary says once which item and why. A same-size
    overwrite is caught by the recorded sha256; a record from before checksums by parsing the JSON."""
    data, out, base = parsed
    run = f"dmg-{damage}"
    shutil.copytree(base, out / run)
    d = out / run / "01_parse"
    sha1 = sorted(p.stem for p in d.glob("*.json") if len(p.stem) == 40)[0]
    target = d / f"{sha1}.json"
    good = target.read_bytes()
    if damage == "same_size":
        target.write_bytes(good.replace(b'"', b"'", 1))  # still the same size, not the same bytes
    else:
        target.write_bytes(good[: len(good) // 2])
    if damage == "old_record_truncated":  # an item record written before records kept sizes and hashes
        rec_path = d / ".items" / f"{sha1}.json"
        rec = json.loads(rec_path.read_text())
        rec.pop("written", None)
        rec_path.write_text(json.dumps(rec))
    (out / run / "02_clean" / f"{sha1}.json").unlink()  # 02 must read 01's file again
    p = _pipeline(data, out, run, "01_parse", "02_clean")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and "some items did not finish" not in p.stderr, p.stderr
    assert target.read_bytes() == good
    lines = [ln for ln in p.stderr.splitlines() if "damaged" in ln]
    assert lines == [f"warning: 01_parse: 1 item(s) rebuilt because their artifacts were damaged: {sha1} "
                     f"({sha1}.json: " + lines[0].split(f"({sha1}.json: ", 1)[-1]], p.stderr
    assert re.search(r"\[01_parse\] 4 items \(report\): 1 to run, 3 current", p.stdout), p.stdout
    again = _pipeline(data, out, run, "01_parse", "02_clean")
    assert "damaged" not in again.stderr and "0 to run, 4 current" in again.stdout  # said once


# Frames of the notebook kernel's message loop: a kernel shutting down under load may log a zmq/tornado
# callback traceback (seen once in a full suite run) that says nothing about the pipeline.
_KERNEL_IO = ("/zmq/", "/tornado/", "/asyncio/", "/jupyter_client/", "/ipykernel/")


def _our_tracebacks(stderr: str) -> list[str]:
    """Tracebacks in ``stderr`` with a frame outside the kernel's message loop (every one but that noise)."""
    out = []
    for block in stderr.split("Traceback (most recent call last):")[1:]:
        frames = re.findall(r'File "([^"]+)"', block.split("\n\n", 1)[0])
        if not frames or any(not any(k in f for k in _KERNEL_IO) for f in frames):
            out.append(block[:500])
    return out


@pytest.mark.slow
def test_a_truncated_artifact_under_rag_run_notebooks_is_rebuilt(parsed):
    """The same under `rag run` (notebooks): it was exit 1 after a ~100-line papermill traceback."""
    data, out, base = parsed
    shutil.copytree(base, out / "nb")
    target = next(p for p in sorted((out / "nb" / "01_parse").glob("*.json")) if len(p.stem) == 40)
    good = target.read_bytes()
    target.write_bytes(good[:500])
    p = _pipeline(data, out, "nb", "01_parse", notebooks=True)
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    assert not _our_tracebacks(p.stderr) and target.read_bytes() == good, p.stderr[-3000:]
    assert f"rebuilt because their artifacts were damaged: {target.stem}" in p.stderr


# ---- non-UTF-8 dataset files ---------------------------------------------------------------------
def _latin1(data: Path, which: str) -> int:
    """Rewrite ``which`` in latin-1 with one accented letter; returns the offset of its first non-UTF-8 byte."""
    if which == "questions.json":
        qs = json.loads((data / which).read_text())
        qs[1]["text"] = "Quelle est la trésorerie d'Aurelia Pharma AG ?"
        blob = json.dumps(qs, ensure_ascii=False, indent=1).encode("latin-1")
    else:
        blob = (data / which).read_text().replace("Aurelia Pharma AG", "Aurélia Pharma AG").encode("latin-1")
    (data / which).write_bytes(blob)
    return blob.index(b"\xe9")


@pytest.mark.parametrize("which", ["questions.json", "subset.csv"])
@pytest.mark.parametrize("command", ["pipeline", "rag_run", "rag_ask"])
def test_a_latin1_dataset_file_is_one_problem_line_with_the_offset_and_exit_2(demo_dir, tmp_path, capsys,
                                                                              which, command):
    """Probe: a latin-1 questions.json or subset.csv gave a raw UnicodeDecodeError traceback, exit 1, and an
    empty run folder. Now: the dataset error names the file, the byte, its offset and the fix; exit 2; the
    run folder holds the error.log."""
    from rag.cli import main as cli
    from rag.pipeline import main as pipeline

    data = tmp_path / "data"
    shutil.copytree(demo_dir, data)
    offset = _latin1(data, which)
    out = tmp_path / "out"
    common = ["--preset", "test", "--data", str(data), "--set", f"outputs_dir={out}", "--set",
              f"cache_dir={tmp_path / 'c'}"]
    if command == "pipeline":
        rc = pipeline([*common, "--run", "r", "--direct"])
    elif command == "rag_run":
        rc = cli(["run", *common, "--run", "r"])
    else:
        rc = cli(["ask", "Did Aurelia Pharma AG announce a share buyback plan?", *common, "--run", "r"])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "Traceback" not in err and "UnicodeDecodeError" not in err, err
    assert err.startswith("error: DatasetError: "), err
    line = next(ln.strip() for ln in err.splitlines() if which in ln and "UTF-8" in ln)
    line_no = (data / which).read_bytes()[:offset].count(b"\n") + 1
    assert line == (f"{data / which}: byte 0xe9 at offset {offset} (line {line_no}) is not UTF-8; save it as "
                    "UTF-8 (e.g. iconv -f latin1 -t utf-8, or your editor's 'Save as UTF-8')")
    run_dir = out / "r"
    assert not run_dir.exists() or any(run_dir.iterdir()), "an empty run folder was left behind"


def test_a_utf8_bom_questions_file_is_read(demo_dir, tmp_path):
    """A questions.json saved "UTF-8 with BOM" (Windows Notepad) was refused as not valid JSON; it is read."""
    from rag.core.dataset import load_dataset

    data = tmp_path / "data"
    shutil.copytree(demo_dir, data)
    for name in ("questions.json", "subset.csv"):
        (data / name).write_bytes(b"\xef\xbb\xbf" + (data / name).read_bytes())
    ds = load_dataset(data)
    assert len(ds.questions) == len(json.loads((demo_dir / "questions.json").read_text()))
    assert ds.reports[0].sha1 == (demo_dir / "subset.csv").read_text().splitlines()[1].split(",")[0]


# ---- stale scores -------------------------------------------------------------------------------------
def test_a_score_older_than_the_submission_says_stale_with_the_refresh_command(demo_dir, make_cfg, capsys):
    """Probe: after `python -m rag.pipeline ... --direct --stages 06_answer` changed answers on a finished
    run, the closing `Score:` line and `python -m rag.evaluate --run RUN` printed 07's old numbers as
    current. Now both say stale and name the command that refreshes them; that command scores the new
    submission and the marks go."""
    from test_evaluate import _write_sub

    from rag.core.dataset import load_dataset
    from rag.evaluate import main as evaluate_main
    from rag.evaluate import run_evaluate
    from rag.pipeline import main as pipeline
    from rag.pipeline import print_outcome

    ds = load_dataset(demo_dir)
    cfg = make_cfg(demo_dir, run="scored")
    sub = cfg.run_dir / "06_answer" / "submission.json"
    answers = [{"question_text": q.text, "kind": q.kind, "value": "N/A", "references": []} for q in ds.questions]
    _write_sub(sub, answers)
    run_evaluate(cfg, ds, progress=False, gold_source="answers")
    capsys.readouterr()
    print_outcome(cfg)
    assert re.search(r"^Score: G=", capsys.readouterr().out, re.M)  # current: no mark
    answers[0]["value"] = 1.0  # 06 ran again and changed an answer
    _write_sub(sub, answers)
    print_outcome(cfg)
    score = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("Score"))
    m = re.fullmatch(r"Score \(stale: 06_answer/submission\.json changed after 07_evaluate scored it; refresh with: "
                     r"(python -m rag\.pipeline .*--direct --stages 07_evaluate)\): G=.*", score)
    assert m, score
    assert evaluate_main(["--run", str(cfg.run_dir)]) == 0
    err = capsys.readouterr().err
    assert f"warning: {cfg.run_dir}: scores are stale: " in err and m.group(1) in err, err
    import shlex

    cmd = shlex.split(m.group(1))
    assert cmd[:3] == ["python", "-m", "rag.pipeline"]
    assert pipeline(cmd[3:]) == 0  # the printed command refreshes 07
    capsys.readouterr()
    print_outcome(cfg)
    out = capsys.readouterr().out
    assert re.search(r"^Score: G=", out, re.M) and "stale" not in out, out


# ---- the demonstration: a corrupted cache gives the clean run's submission ------------------------------
@pytest.mark.slow
@pytest.mark.llm
def test_a_run_over_corrupted_caches_gives_the_clean_runs_submission(parsed, tmp_path):
    """Issue 45's "must show": 05 + 06 with the small local model, then every third row of embeddings.sqlite
    and llm.sqlite overwritten with random bytes (half of another length) and the same stages run into a new
    run folder over that cache: exit 0, a submission byte-identical to the clean run's, and one line per
    cache file naming it and its count. (On bcf3d6a: exit 0, 9 of 10 questions failed in 05 with
    `buffer size must be a multiple of element size`, the cache never named.)"""
    import random

    from rag.ablate import link_stage

    data, out, base = parsed
    cache = tmp_path / "cache"
    runs = {}
    for run in ("clean", "damaged"):
        for st in ("01_parse", "02_clean"):
            link_stage(base, out / run, st)
        args = [sys.executable, "-m", "rag.pipeline", "--preset", "test", "--data", str(data), "--run", run,
                "--direct", "--stages", "03_chunk,04_index,05_retrieve,06_answer", "--set", f"outputs_dir={out}",
                "--set", f"cache_dir={cache}", "--set", "rerank.mode=none"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        env.pop("RAG_RUN_TOKEN", None)
        runs[run] = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
        assert runs[run].returncode == 0, runs[run].stdout + runs[run].stderr
        if run == "clean":
            rng, damaged = random.Random(45), {}
            for name in ("embeddings.sqlite", "llm.sqlite"):
                con = sqlite3.connect(cache / name)
                rows = con.execute("SELECT rowid, length(v) FROM kv ORDER BY rowid").fetchall()[::3]
                for i, (rowid, n) in enumerate(rows):
                    junk = bytes(rng.getrandbits(8) for _ in range(n if i % 2 else n + 3))
                    con.execute("UPDATE kv SET v = ? WHERE rowid = ?", (junk, rowid))
                con.commit()
                con.close()
                damaged[name] = len(rows)
    sub = "06_answer/submission.json"
    assert (out / "damaged" / sub).read_bytes() == (out / "clean" / sub).read_bytes()
    err = runs["damaged"].stderr
    assert "some items did not finish" not in err, err
    for name, n in damaged.items():
        assert damage_line(err, name) == [f"warning: cache {cache / name}: {n} damaged entries dropped and "
                                          "recomputed (first: checksum mismatch)"], err
