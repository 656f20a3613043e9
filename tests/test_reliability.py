"""Issue 33's probes, each a test with real processes where the probe used them: one writer per run
folder, unwritable places as one line, Ctrl-C as a clean stop, kill -9 + resume with identical outputs,
dataset problems on the console, unrouted questions and copied example names answered N/A, no kernel
transport warning. ``pytest -m reliability`` ends with the table of probes and outcomes (conftest.py).

Subprocesses import the same ``rag`` as this test process (``PYTHONPATH`` = its project root), so the
file can be run against another checkout's code to show what it catches there.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import rag
from rag.ablate import link_stage

from conftest import PYTHON_AS_FROM_A_TERMINAL

pytestmark = pytest.mark.reliability

ROOT = Path(rag.__file__).resolve().parents[1]  # the checkout whose code runs (see module docstring)
INDEXED = ("01_parse", "02_clean", "03_chunk")  # seeded from the baseline so a probe starts at 04
STAGE_TIMEOUT_S = 600  # a 2-core machine shared with other jobs: 04 on the demo takes ~1 min


# ---- helpers ---------------------------------------------------------------------------------------
class Proc:
    """A real ``python -m ...`` process in its own session (a terminal's Ctrl-C reaches its group);
    stdout and stderr collected by threads so the test can wait for a line."""

    def __init__(self, args: list[str], cwd: Path = ROOT):
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
        env.pop("RAG_RUN_TOKEN", None)
        self.p = subprocess.Popen([*PYTHON_AS_FROM_A_TERMINAL, "-m", *args], cwd=cwd, env=env, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        self.out: list[str] = []
        self.err: list[str] = []
        self._threads = [threading.Thread(target=self._read, args=(s, buf), daemon=True)
                         for s, buf in ((self.p.stdout, self.out), (self.p.stderr, self.err))]
        for t in self._threads:
            t.start()

    @staticmethod
    def _read(stream, buf: list[str]) -> None:
        for line in stream:
            buf.append(line)

    def wait_for(self, pattern: str, timeout: float = STAGE_TIMEOUT_S) -> str:
        """The first stdout/stderr line matching ``pattern``; fails when the process ends first."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.out + self.err:
                if rx.search(line):
                    return line
            if self.p.poll() is not None:
                time.sleep(0.2)  # let the readers drain
                for line in self.out + self.err:
                    if rx.search(line):
                        return line
                raise AssertionError(f"process ended (rc {self.p.returncode}) before {pattern!r}:\n{self.text()}")
            time.sleep(0.2)
        raise AssertionError(f"no {pattern!r} within {timeout}s:\n{self.text()}")

    def finish(self, timeout: float = STAGE_TIMEOUT_S) -> int:
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"still running after {timeout}s:\n{self.text()}") from None
        for t in self._threads:
            t.join(5)
        return rc

    def kill(self, sig: int = signal.SIGKILL) -> None:
        try:
            os.killpg(self.p.pid, sig)
        except ProcessLookupError:
            pass

    def text(self) -> str:
        return "".join(self.out) + "\n--- stderr ---\n" + "".join(self.err)

    def descendants(self) -> list[int]:
        import psutil

        try:
            return [c.pid for c in psutil.Process(self.p.pid).children(recursive=True)]
        except psutil.NoSuchProcess:
            return []


def alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


# The probes interrupt 04 while it embeds (~15 s an item here): every chunk vector stored by 04, not on demand.
STORED = {"index.chunk_vectors": "stored", "retrieve.dense_pool": 0}


def pipeline_args(data: Path, out: Path, run: str, *extra: str, direct: bool = True, cache: str = "cache") -> list[str]:
    return ["rag.pipeline", "--preset", "test", "--data", str(data), "--run", run,
            *(["--direct"] if direct else []), "--set", f"outputs_dir={out}", "--set", f"cache_dir={out / cache}",
            *(a for k, v in STORED.items() for a in ("--set", f"{k}={v}")), *extra]


def stage_bytes(run_dir: Path, stage: str) -> dict[str, bytes]:
    """Every artifact of a stage; manifests, item records, summaries and reports aside (they hold timings),
    as in test_contract's byte-reproducibility test."""
    d = run_dir / stage
    out = {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*"))
           if p.is_file() and ".items" not in p.parts and not p.name.startswith(("manifest", "summary", "report"))
           and p.suffix != ".csv"}
    assert out, f"no artifact in {d}"
    return out


@pytest.fixture(scope="module")
def indexed(demo_dir, tmp_path_factory):
    """The demo corpus and one uninterrupted real run of 01..04 on it (the baseline every probe compares
    with): ``(data, out, base_run_dir)``."""
    tmp = tmp_path_factory.mktemp("rel")
    data, out = tmp / "demo", tmp / "out"
    shutil.copytree(demo_dir, data)
    p = Proc(pipeline_args(data, out, "base", "--stages", ",".join((*INDEXED, "04_index"))))
    assert p.finish() == 0, p.text()
    return data, out, out / "base"


def seeded(indexed, run: str) -> Path:
    """A run folder holding the baseline's 01..03 (hard links): the next invocation starts at 04."""
    _, out, base = indexed
    for st in INDEXED:
        link_stage(base, out / run, st)
    return out / run


# ---- one writer per run folder -------------------------------------------------------------------
def test_two_writers_second_stops_at_once_naming_the_first_and_wait_waits(indexed):
    """Probe: two `rag run` on one run folder at once both ran every stage. Now the second stops at once
    with one line naming the first (PID, host, start) and the way out; `--wait` waits and then finds every
    item current."""
    data, out, base = indexed
    run_dir = seeded(indexed, "two")
    args = pipeline_args(data, out, "two", "--stages", "04_index", cache="cache-two")  # a cold cache: 04 embeds
    first = Proc(args)
    try:
        first.wait_for(r"\[04_index\] 4 items")
        t0 = time.monotonic()
        second = Proc(args)
        rc = second.finish(timeout=120)
        took = time.monotonic() - t0
        err = "".join(second.err).strip()
        assert rc == 2, second.text()
        assert err.count("\n") == 0, err  # one line
        assert err.startswith(f"error: {run_dir} is in use by another run (PID {first.p.pid} on ")
        assert "started 20" in err and "--wait" in err and "another --run" in err
        assert "[04_index]" not in "".join(second.out), "the second run started a stage"
        waiter = Proc([*args, "--wait"])
        waiter.wait_for(r"^waiting: .* in use by another run")
        assert first.finish() == 0, first.text()
        assert waiter.finish() == 0, waiter.text()
        assert "0 to run, 4 current" in "".join(waiter.out), waiter.text()
    finally:
        first.kill()
    assert not (run_dir / "run.lock").exists()  # released at exit
    assert stage_bytes(run_dir, "04_index") == stage_bytes(base, "04_index")
    print(f"second writer refused in {took:.1f}s (2-core machine shared with other jobs)")


def test_run_lock_unit_refusal_release_and_progress_notes(tmp_path):
    """In one process: a second lock on the folder is refused naming the holder; release removes the file
    and the run token; progress notes are written and read only under a lock."""
    from rag.core.run_guard import TOKEN_ENV, RunLock, RunLocked, interrupted_at, note_progress

    note_progress(tmp_path, "04_index", 1, 4)
    assert interrupted_at(tmp_path) is None  # no lock, no note
    with RunLock(tmp_path, "rag run --data d") as lock:
        with pytest.raises(RunLocked, match=rf"^{re.escape(str(tmp_path))} is in use by another run \(PID {os.getpid()} "
                                            r"on .*, started .* UTC: rag run --data d\); wait for it with --wait"):
            RunLock(tmp_path).acquire()
        note_progress(tmp_path, "04_index", 2, 4)
        assert interrupted_at(tmp_path) == ("04_index", 2, 4)
        assert json.loads((tmp_path / "run.lock").read_text())["pid"] == os.getpid() == lock.holder()["pid"]
    assert not (tmp_path / "run.lock").exists() and TOKEN_ENV not in os.environ
    RunLock(tmp_path).acquire().release()  # free again


def test_a_dead_owners_lock_is_taken_over(indexed):
    """kill -9 leaves run.lock behind (its owner dead): the same command takes it over and resumes."""
    data, out, base = indexed
    run_dir = seeded(indexed, "stale")
    # A cold cache, so 04 embeds and is still running when killed: on a warm one it could finish (and drop its
    # lock) between printing its item count and the kill (seen once in a full suite run).
    args = pipeline_args(data, out, "stale", "--stages", "04_index", cache="cache-stale")
    p = Proc(args)
    p.wait_for(r"\[04_index\] 4 items")
    p.kill()
    p.finish()
    assert json.loads((run_dir / "run.lock").read_text())["pid"] == p.p.pid  # left behind by the dead run
    again = Proc(args)
    assert again.finish() == 0, again.text()
    assert not (run_dir / "run.lock").exists()


# ---- kill -9 during 04, resume: identical outputs ------------------------------------------------
def test_kill_9_during_04_then_the_same_command_resumes_to_identical_indexes(indexed):
    data, out, base = indexed
    run_dir = seeded(indexed, "k04")
    args = pipeline_args(data, out, "k04", "--stages", "04_index", cache="cache-k04")  # a cold cache: 04 embeds
    p = Proc(args)
    p.wait_for(r"\[04_index\] 1/4 ")
    p.kill()
    assert p.finish() == -signal.SIGKILL
    again = Proc(args)
    assert again.finish() == 0, again.text()
    assert re.search(r"\[04_index\] 4 items \(index\): [123] to run, [123] current", "".join(again.out)), again.text()
    assert stage_bytes(run_dir, "04_index") == stage_bytes(base, "04_index")


# ---- Ctrl-C ------------------------------------------------------------------------------------------
def _interrupt_checks(p: Proc, stage: str, resume_prefix: str) -> tuple[int, int]:
    err = "".join(p.err)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    last = [ln for ln in err.splitlines() if ln.strip()][-1]
    m = re.fullmatch(rf"interrupted at {stage} \((\d+) of (\d+) items done\); resume with: (.+)", last)
    assert m, err
    assert m.group(3).startswith(resume_prefix), last
    return int(m.group(1)), int(m.group(2))


def _resume(p: Proc) -> Proc:
    """Run the command the interrupt line printed."""
    import shlex

    cmd = shlex.split("".join(p.err).strip().splitlines()[-1].split("resume with: ", 1)[1])
    assert cmd[:3] == ["python", "-m", "rag.pipeline"], cmd
    return Proc(cmd[2:])


def test_ctrl_c_during_01_stops_its_worker_processes_and_the_hint_resumes(indexed):
    """Probe: Ctrl-C printed ~70 lines of tracebacks (the driver's and each pool worker's) and no resume
    hint. SIGINT to the process group (what a terminal sends) while 01 parses in two worker processes: one
    line, exit 130, no process left; the printed command finishes with outputs identical to the baseline."""
    data, out, base = indexed
    p = Proc(pipeline_args(data, out, "int01", "--stages", "01_parse", "--set", "parse.workers=2", cache="cache-int01"))
    p.wait_for(r"\[01_parse\] 4 items")
    deadline = time.monotonic() + 60
    while len(p.descendants()) < 2 and time.monotonic() < deadline:  # the spawned workers
        time.sleep(0.2)
    kids = p.descendants()
    assert len(kids) >= 2, p.text()
    p.kill(signal.SIGINT)
    assert p.finish(timeout=60) == 130, p.text()
    done, total = _interrupt_checks(p, "01_parse", "python -m rag.pipeline --preset test")
    assert done < total == 4
    time.sleep(2)
    assert not [k for k in kids if alive(k)], f"left running: {kids}"
    again = _resume(p)
    assert again.finish() == 0, again.text()
    assert stage_bytes(out / "int01", "01_parse") == stage_bytes(base, "01_parse")


def test_ctrl_c_during_04_says_how_many_items_were_done_and_the_hint_resumes(indexed):
    """The same during 04 (serial items, ~15 s each here): "(1 of 4 items done)" or more; resumed, the
    indexes are byte-identical to an uninterrupted run's."""
    data, out, base = indexed
    run_dir = seeded(indexed, "int04")
    p = Proc(pipeline_args(data, out, "int04", "--stages", "04_index", cache="cache-int04"))  # 04 embeds
    p.wait_for(r"\[04_index\] 1/4 ")
    p.kill(signal.SIGINT)
    assert p.finish(timeout=60) == 130, p.text()
    done, total = _interrupt_checks(p, "04_index", "python -m rag.pipeline --preset test")
    assert 1 <= done < total == 4
    assert not (run_dir / "run.lock").exists()
    again = _resume(p)
    assert again.finish() == 0, again.text()
    assert stage_bytes(run_dir, "04_index") == stage_bytes(base, "04_index")


@pytest.mark.slow
def test_ctrl_c_of_a_notebook_run_stops_its_kernel(indexed):
    """`rag run` (notebooks): the kernel runs in its own session, so Ctrl-C reaches only the driver; the
    driver kills the kernel's process group and prints the one line."""
    data, out, _ = indexed
    run_dir = seeded(indexed, "nbint")
    p = Proc(["rag.cli", "run", *pipeline_args(data, out, "nbint", "--stages", "04_index", direct=False)[1:]])
    deadline = time.monotonic() + STAGE_TIMEOUT_S
    while time.monotonic() < deadline:  # the kernel's item loop notes its progress in the run folder
        note = run_dir / ".progress.json"
        if note.exists() and json.loads(note.read_text()).get("done", 0) >= 1:
            break
        assert p.p.poll() is None, p.text()
        time.sleep(0.5)
    kids = p.descendants()
    assert kids, "no kernel process"
    p.kill(signal.SIGINT)
    assert p.finish(timeout=60) == 130, p.text()
    _interrupt_checks(p, "04_index", "rag run --preset test")
    time.sleep(2)
    assert not [k for k in kids if alive(k)], f"left running: {kids}"
    assert "Kernel is running over TCP" not in p.text()


# ---- unwritable places ---------------------------------------------------------------------------
@pytest.fixture
def unwritable(tmp_path):
    """``unwritable(name)`` -> a folder nothing can be written in, even as root: made immutable with
    ``chattr +i`` where that works (root on ext4/xfs), else ``chmod a-w`` (non-root), else a path under a
    regular file (always unwritable)."""
    made: list[Path] = []

    def make(name: str) -> Path:
        d = tmp_path / name
        d.mkdir()
        if shutil.which("chattr") and subprocess.run(["chattr", "+i", str(d)], capture_output=True).returncode == 0:
            made.append(d)
            return d
        if os.geteuid() != 0:
            d.chmod(0o555)
            return d
        (tmp_path / f"{name}.file").write_text("a file, not a folder")
        return tmp_path / f"{name}.file" / "sub"

    yield make
    for d in made:
        subprocess.run(["chattr", "-i", str(d)], check=False)


def _one_error_line(err: str, what: str, path: Path) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert re.fullmatch(rf"error: {what}: cannot write {re.escape(str(path))}\S* \((Operation not permitted|"
                        r"Permission denied|Not a directory|Read-only file system)\)", lines[0]), lines[0]


def test_rag_run_into_an_unwritable_output_folder_is_one_line_exit_2(indexed, unwritable):
    """Probe: a 15-line PermissionError traceback, exit 1. Now the real `rag run` (notebooks) stops before
    any stage with one line."""
    data, _, _ = indexed
    ro = unwritable("outputs")
    p = Proc(["rag.cli", "run", "--preset", "test", "--data", str(data), "--run", "r",
              "--set", f"outputs_dir={ro}"])
    assert p.finish(timeout=120) == 2, p.text()
    _one_error_line("".join(p.err), "output folder", ro)
    assert "[01_parse]" not in "".join(p.out)


def test_unwritable_output_and_cache_folders_in_python_m_rag_pipeline(demo_dir, tmp_path, unwritable, capsys):
    from rag.pipeline import main

    ro = unwritable("ro")
    base = ["--preset", "test", "--data", str(demo_dir), "--run", "r", "--direct", "--stages", "01_parse"]
    assert main([*base, "--set", f"outputs_dir={ro}", "--set", f"cache_dir={tmp_path / 'c'}"]) == 2
    _one_error_line(capsys.readouterr().err, "output folder", ro)
    assert main([*base, "--set", f"outputs_dir={tmp_path / 'o'}", "--set", f"cache_dir={ro}"]) == 2
    _one_error_line(capsys.readouterr().err, "cache folder", ro)
    assert not (tmp_path / "o" / "r" / "01_parse").exists()


def test_unwritable_output_folder_in_rag_ask(demo_dir, unwritable, capsys):
    from rag.cli import main

    ro = unwritable("ro")
    assert main(["ask", "Did Aurelia Pharma AG announce a share buyback plan?", "--data", str(demo_dir),
                 "--preset", "test", "--set", f"outputs_dir={ro}", "--set", f"cache_dir={ro}"]) == 2
    _one_error_line(capsys.readouterr().err, "output folder", ro)


def test_unwritable_dataset_folder_in_rag_init_before_any_pdf_is_read(demo_dir, unwritable, capsys):
    from rag.cli import main

    ro = unwritable("ro")
    assert main(["init", str(ro / "mine"), "--pdfs", str(demo_dir / "pdfs")]) == 2
    _one_error_line(capsys.readouterr().err, "dataset folder", ro)


def test_unwritable_cache_folder_in_a_notebooks_first_cell(demo_dir, tmp_path, unwritable):
    """The notebooks' parameters cell is followed by ``setup(...)``: it raises the one-line error (papermill
    shows it as the cell's error; a run driven by `rag run` has checked before starting any notebook)."""
    from rag.notebook import setup

    ro = unwritable("ro")
    with pytest.raises(Exception, match=rf"^cache folder: cannot write {re.escape(str(ro))} \((Operation not "
                                        r"permitted|Permission denied|Not a directory)\)$") as ei:
        setup("test", str(demo_dir), "r", {"outputs_dir": str(tmp_path / "o"), "cache_dir": str(ro)})
    assert type(ei.value).__name__ == "Unwritable"


def test_unwritable_model_folder_is_one_line_before_any_download(unwritable, capsys):
    from rag.models.weights import GGUF, main

    ro = unwritable("models")
    assert main(["--ensure", next(iter(GGUF)), "--models-dir", str(ro)]) == 2
    _one_error_line(capsys.readouterr().err, "model folder", ro)


def test_a_folder_under_a_regular_file_is_one_line_too(demo_dir, tmp_path, capsys):
    """Where neither chattr nor chmod bites: an output path under a regular file."""
    from rag.pipeline import main

    (tmp_path / "f").write_text("x")
    assert main(["--preset", "test", "--data", str(demo_dir), "--direct", "--stages", "01_parse",
                 "--set", f"outputs_dir={tmp_path / 'f' / 'out'}", "--set", f"cache_dir={tmp_path / 'c'}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: output folder: cannot write {tmp_path / 'f' / 'out' / 'demo'} (Not a directory)"


# ---- dataset problems on the console -------------------------------------------------------------
@pytest.mark.parametrize("breakage, expected", [
    ("semicolons", r"subset\.csv:\d+: .*"),
    ("missing_cur", r"subset\.csv.*cur"),
    ("sha1_mismatch", r"pdfs/[0-9a-f]{40}\.pdf.*sha1"),
    ("bad_json", r"questions\.json.*"),
    ("unknown_kind", r"questions\.json.*kind"),
], ids=["semicolons", "missing_cur", "sha1_mismatch", "bad_json", "unknown_kind"])
def test_dataset_problems_print_their_lines_under_rag_run(demo_dir, tmp_path, capsys, breakage, expected):
    """Probe: only "… has 1 problem(s):" and a resume hint on the console, the line itself in a shared
    outputs/error.log. Now the problem lines are printed, no resume hint (nothing ran), and the log is in
    the run's folder."""
    from rag.pipeline import main

    data = tmp_path / "data"
    shutil.copytree(demo_dir, data)
    subset, questions = data / "subset.csv", data / "questions.json"
    if breakage == "semicolons":
        subset.write_text(subset.read_text().replace(",", ";"))
    elif breakage == "missing_cur":
        rows = [ln.split(",") for ln in subset.read_text().splitlines()]
        subset.write_text("\n".join(",".join(r[:2] + r[3:]) for r in rows) + "\n")
    elif breakage == "sha1_mismatch":
        pdf = sorted((data / "pdfs").glob("*.pdf"))[0]
        pdf.write_bytes(pdf.read_bytes() + b"\n% changed")
    elif breakage == "bad_json":
        questions.write_text(questions.read_text()[:-5])
    else:
        qs = json.loads(questions.read_text())
        qs[0]["kind"] = "essay"
        questions.write_text(json.dumps(qs))
    out = tmp_path / "out"
    assert main(["--preset", "test", "--data", str(data), "--run", "bad", "--direct",
                 "--set", f"outputs_dir={out}", "--set", f"cache_dir={tmp_path / 'c'}"]) == 2
    err = capsys.readouterr().err
    assert err.strip().startswith("error: DatasetError: ") and "Traceback" not in err
    assert re.search(expected, err), err  # the file:row: problem line itself
    assert "resume with" not in err
    assert (out / "bad" / "error.log").exists() and not (out / "error.log").exists()


# ---- questions routed to no single report -----------------------------------------------------------
class NoModel:
    """An LLM that must not be called (the questions below are answered without reading pages)."""

    def __getattr__(self, name):
        raise AssertionError(f"the model was called ({name})")


def test_unrouted_and_ambiguous_questions_are_na_with_the_reason_and_listed_at_the_end(indexed, tmp_path, capsys):
    """Probe: a question naming no known company was answered `false`, nothing said. Now 05 records it,
    06 answers N/A with the reason (no model call), the submission says N/A, and the run's closing summary
    lists it; a boolean naming two companies (ambiguous) the same."""
    from rag.answer import run_answer, submission_path
    from rag.core.config import load_config
    from rag.core.dataset import load_dataset
    from rag.pipeline import print_routing
    from rag.retrieve import run_retrieve

    data, _, base = indexed
    mine = tmp_path / "data"
    shutil.copytree(data, mine)
    (mine / "questions.json").write_text(json.dumps([
        {"text": "Did Globex Corporation announce a share buyback plan?", "kind": "boolean"},
        {"text": "Did Aurelia Pharma AG and Kitsune Robotics Ltd announce a merger?", "kind": "boolean"}]))
    cfg = load_config("test", data_dir=str(mine), run="routing", outputs_dir=str(tmp_path / "out"),
                      cache_dir=str(tmp_path / "cache"), overrides={"rerank.mode": "none", **STORED})  # 05 without the model
    for st in (*INDEXED, "04_index"):
        link_stage(base, cfg.run_dir, st)
    ds = load_dataset(mine)
    run_retrieve(cfg, ds, progress=False)
    df = run_answer(cfg, ds, progress=False, llm=NoModel())
    assert list(df["value"]) == ["N/A", "N/A"]
    assert df["na_reason"][0] == "routing: unrouted: the question names no company of the dataset"
    assert df["na_reason"][1].startswith("routing: ambiguous: the question fits several reports (Aurelia Pharma AG")
    sub = json.loads(submission_path(cfg).read_text())
    assert [a["value"] for a in sub["answers"]] == ["N/A", "N/A"]
    print_routing(cfg.run_dir)
    err = capsys.readouterr().err
    assert "2 question(s) not routed to one report (answered N/A)" in err
    assert re.search(r"^  \S+: routing: unrouted", err, re.M) and re.search(r"^  \S+: routing: ambiguous", err, re.M)


# ---- names printed on the pages ------------------------------------------------------------------
def test_a_copied_example_name_or_a_name_no_page_prints_is_na(make_cfg):
    """Probe: a names question on a report without the asked name was answered "Jane Roe", the example
    answer of prompts/examples/name.txt. Names now stand only when a page of the context prints them,
    and an example answer never."""
    from test_answer import A, FakeLLM, base, make_ds, page, write_retrieval

    from rag.answer import run_answer

    cfg = make_cfg()
    ds = make_ds([("Who is the CEO of Acme Corp?", "name"), ("Who chairs the board of Acme Corp?", "name"),
                  ("Which positions changed at Acme Corp?", "names")])
    text = "Jane Roe signs. Our CEO is Ann Smith. Tom Low became Head of Risk."
    for qid in ("q000", "q001", "q002"):
        write_retrieval(cfg, qid, [page(A, 3, text, 1.0)])
    answers = {"the CEO of": "Jane Roe", "chairs the board": "Max Mustermann",
               "positions changed": ["Company Secretary", "Head of Risk", "CTO"]}

    def reply(messages, schema):
        q = messages[-1]["content"]
        return {**base([1]), "final_answer": next(v for k, v in answers.items() if k in q)}

    df = run_answer(cfg, ds, progress=False, llm=FakeLLM(reply)).set_index("qid")
    assert df.loc["q000", "value"] == "N/A" and "example answer" in df.loc["q000", "na_reason"]  # printed, still an example
    assert df.loc["q001", "value"] == "N/A" and "printed on no cited page" in df.loc["q001", "na_reason"]
    assert df.loc["q002", "value"] == ["Head of Risk"]  # the example title and the unprinted one dropped


# ---- quiet output ------------------------------------------------------------------------------------
def test_notebook_kernels_print_no_tcp_warning_and_real_warnings_stay(tmp_path):
    """Probe: every notebook printed `[IPKernelApp] WARNING | Kernel is running over TCP without
    encryption`. The run's kernels use IPC sockets (rag.kernels); a warning the notebook raises still shows.
    The same notebook on papermill's default kernel manager prints the transport warning (the check bites).
    Nothing is filtered: what the kernel process writes to its stderr still reaches the console."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import os; os.write(2, b'WARNING: a real kernel warning\\n')")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp_path / "t.ipynb")
    code = ("import sys, papermill as pm\nfrom rag.kernels import RunKernelManager\n"
            "kw = {'kernel_manager_class': RunKernelManager} if sys.argv[1] == 'ipc' else {}\n"
            "pm.execute_notebook('t.ipynb', 'o.ipynb', progress_bar=False, **kw)\n")
    (tmp_path / "run_nb.py").write_text(code)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = {m: subprocess.run([sys.executable, "run_nb.py", m], cwd=tmp_path, env=env, capture_output=True,
                             text=True, timeout=300) for m in ("tcp", "ipc")}
    assert all(r.returncode == 0 for r in res.values()), res
    assert "Kernel is running over TCP without encryption" in res["tcp"].stderr  # what every stage printed
    assert "Kernel is running over TCP" not in res["ipc"].stderr + res["ipc"].stdout
    assert "WARNING: a real kernel warning" in res["ipc"].stderr
    # jupyter_client's default IPC path is relative ("kernel-ipc-N" in the working directory: sockets were
    # left in the repository root); they belong in the runtime folder
    assert not list(tmp_path.glob("kernel-ipc*")), sorted(p.name for p in tmp_path.iterdir())
    from jupyter_core.paths import jupyter_runtime_dir

    from rag.kernels import RunKernelManager

    a, b = RunKernelManager().ip, RunKernelManager().ip
    assert os.path.dirname(a) == jupyter_runtime_dir() and a != b


def test_ctrl_c_kills_the_kernel_before_papermills_cleanup_can_ask_it_to_shut_down(tmp_path):
    """CI failure: Ctrl-C during a notebook run printed the kernel's "[IPKernelApp] ERROR | Exception in
    message handler ... ZMQError: Socket operation on non-socket": the interrupt landed inside nbclient's
    coroutine, whose cleanup sent a live kernel a shutdown request while it was replying. With
    ``interrupt_kills_kernels_first`` the kernel is already dead when KeyboardInterrupt reaches the caller
    (before ``stop_kernels``), so nothing is left to shut down or to print. On the old code it was alive."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import os, time\nopen('kernel.pid', 'w').write(str(os.getpid()))\n"
                                          "time.sleep(120)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp_path / "t.ipynb")
    code = ("import papermill as pm\nfrom rag.kernels import RunKernelManager, _alive, "
            "interrupt_kills_kernels_first, stop_kernels\n"
            "try:\n    with interrupt_kills_kernels_first():\n"
            "        pm.execute_notebook('t.ipynb', 'o.ipynb', progress_bar=False, "
            "kernel_manager_class=RunKernelManager)\n"
            "except KeyboardInterrupt:\n    pid = int(open('kernel.pid').read())\n"
            "    print('kernel alive at the interrupt:', _alive(pid), flush=True)\n    stop_kernels()\n")
    (tmp_path / "run_nb.py").write_text(code)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen([*PYTHON_AS_FROM_A_TERMINAL, "run_nb.py"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (tmp_path / "kernel.pid").exists() and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.2)
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert "kernel alive at the interrupt: False" in out, (out, err)
    assert "Traceback" not in err and "Exception in message handler" not in err, err
    assert not alive(int((tmp_path / "kernel.pid").read_text()))


# ---- kill -9 during 06, resume: the same submission --------------------------------------------------
@pytest.mark.slow
@pytest.mark.llm
def test_kill_9_during_06_then_the_same_command_gives_the_uninterrupted_submission(indexed):
    """05 + 06 with the small local model: kill -9 after 06 answered some questions, the same command
    again; its submission is byte-identical to a run never interrupted (with a model-call cache of its own,
    so the answers are the model's again, not copies)."""
    data, out, base = indexed
    runs = {}
    for run in ("k06", "straight06"):
        runs[run] = seeded(indexed, run)
        link_stage(base, runs[run], "04_index")
    # 05 without the LLM reranker (the probe is about 06; the test preset's 0.5B rerank costs minutes a run)
    fast05 = ("--set", "rerank.mode=none")
    args = pipeline_args(data, out, "k06", "--stages", "05_retrieve,06_answer", *fast05)
    p = Proc(args)
    p.wait_for(r"\[06_answer\] [1-9]/\d+ ")
    p.kill()
    assert p.finish() == -signal.SIGKILL
    done = len(list((runs["k06"] / "06_answer" / "debug").glob("*.json")))
    again = Proc(args)
    assert again.finish() == 0, again.text()
    assert re.search(rf"\[06_answer\] \d+ items \(question\): \d+ to run, {done} current", "".join(again.out)), again.text()
    straight = Proc(pipeline_args(data, out, "straight06", "--stages", "05_retrieve,06_answer", *fast05,
                                  cache="cache-straight"))
    assert straight.finish() == 0, straight.text()
    sub = "06_answer/submission.json"
    assert (runs["k06"] / sub).read_bytes() == (runs["straight06"] / sub).read_bytes()


# ---- bad PDFs beside a good one ------------------------------------------------------------------------
def test_truncated_empty_text_and_password_protected_pdfs_are_named_with_the_parsers_reason(tmp_path, capsys):
    """Probe (ok before, kept): a truncated PDF, a 0-byte one, a text file named .pdf and a password-protected
    one beside a good report: the run goes on, the good report is parsed, and the summary names each failed
    report with PDFium's reason; exit 0."""
    from reportlab.lib.pdfencrypt import StandardEncryption

    from rag.pipeline import main
    from test_parse import _canvas, _dataset, make_report_pdf

    good = make_report_pdf(tmp_path / "good.pdf").read_bytes()
    c = _canvas(tmp_path / "locked.pdf", encrypt=StandardEncryption("user-secret", ownerPassword="owner-secret"))
    c.drawString(72, 700, "Only with the password.")
    c.showPage()
    c.save()
    pdfs = {"Good Corp": good, "Truncated Ltd": good[: len(good) // 3], "Empty Inc": b"",
            "Text Plc": b"just some text, not a PDF\n", "Locked AG": (tmp_path / "locked.pdf").read_bytes()}
    root = _dataset(tmp_path / "data", pdfs)
    args = ["--preset", "test", "--data", str(root), "--run", "bad", "--direct", "--stages", "01_parse",
            "--set", f"outputs_dir={tmp_path / 'out'}", "--set", f"cache_dir={tmp_path / 'cache'}"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "01_parse: 4 item(s)" in err, err
    import hashlib

    lines = {name: next((ln for ln in err.splitlines() if hashlib.sha1(data).hexdigest() in ln), "")
             for name, data in pdfs.items()}
    assert lines["Good Corp"] == ""  # parsed
    for name in ("Truncated Ltd", "Empty Inc", "Text Plc"):
        assert re.search(r"format|empty|not a PDF|0 bytes", lines[name], re.I), (name, err)
    assert re.search(r"password", lines["Locked AG"], re.I), err
