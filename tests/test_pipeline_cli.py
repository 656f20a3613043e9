"""The pipeline CLI's handling of user errors: one line + resume hint instead of a traceback, and stage
names checked before anything runs."""
from __future__ import annotations

import pytest


@pytest.mark.reliability
def test_user_errors_from_papermill_are_one_line_with_resume_hint(tmp_path, capsys):
    """A ModelUnavailable raised inside a notebook reaches the CLI as papermill's exception (name + value):
    it is reported like a direct one, with the full message kept in outputs/<run>/error.log."""
    from papermill.exceptions import PapermillExecutionError

    from rag.pipeline import report_user_error, user_error

    msg = "llama.cpp server for m.gguf killed by SIGSEGV (signal 11) (after 1 restart(s)). Server log tail:\nline"
    e = PapermillExecutionError(3, 3, "run_retrieve(cfg, ds)", "ModelUnavailable", msg, ["tb"])
    assert user_error(e) == ("ModelUnavailable", msg)
    assert user_error(RuntimeError("boom")) is None  # bugs keep their traceback
    assert report_user_error(e, "05_retrieve", tmp_path, ["--data", "d", "--run", "r"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0] == "error: 05_retrieve: ModelUnavailable: " + msg.splitlines()[0]
    assert err[-1].endswith("resume with: python -m rag.pipeline --data d --run r")
    assert "Server log tail:\nline" in (tmp_path / "error.log").read_text()


@pytest.mark.reliability
def test_unknown_stage_name_is_refused_before_anything_runs(tmp_path, capsys):
    from rag.pipeline import main

    with pytest.raises(SystemExit) as ei:
        main(["--data", str(tmp_path), "--direct", "--stages", "01_parse,05_retreive"])
    assert ei.value.code == 2
    assert "unknown stage(s) 05_retreive" in capsys.readouterr().err
    assert not (tmp_path / "outputs").exists()


@pytest.mark.reliability
def test_one_corrupt_pdf_is_summarised_at_the_end_and_strict_exits_1(tmp_path, capsys):
    """A real run (01..03, direct) over a good report and a truncated one: the run finishes the good one,
    ends with a warning that names the broken file's item and the parser's error, exit 0; --strict exit 1."""
    from rag.pipeline import main
    from test_parse import _dataset, make_report_pdf

    good = make_report_pdf(tmp_path / "good.pdf").read_bytes()
    root = _dataset(tmp_path / "data", {"Good Corp": good, "Broken Corp": good[: len(good) // 3]})
    args = ["--preset", "test", "--data", str(root), "--run", "r", "--direct", "--stages", "01_parse,02_clean,03_chunk",
            "--set", f"outputs_dir={tmp_path / 'out'}", "--set", f"cache_dir={tmp_path / 'cache'}"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "warning: some items did not finish" in err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert any(ln.strip().startswith("01_parse: 1 item(s)") for ln in lines)
    assert any(ln.strip().startswith("03_chunk: 1 item(s)") for ln in lines)
    assert "failed in 01_parse" in err
    assert main(args + ["--strict"]) == 1  # the second run skips what is current and still reports the failure


def test_outcome_of_a_run_without_gold_says_nothing_was_scored(make_cfg, tmp_path, capsys):
    """A dataset of one's own has no answers.json: 07 scores 0 questions, and the summary says there was no
    gold instead of printing a score of 0."""
    import json

    from rag.evaluate import scores_path
    from rag.pipeline import print_outcome

    cfg = make_cfg()
    path = scores_path(cfg)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"totals": {"G": 0.0, "R": 0.0, "score": 0.0, "max_score": 0.0, "questions": 0}}))
    print_outcome(cfg)
    out = capsys.readouterr().out
    assert "Score: none (no gold in" in out and "score=0.0" not in out
    path.write_text(json.dumps({"totals": {"G": 1.0, "R": 0.5, "score": 1.25, "max_score": 1.5, "questions": 1}}))
    print_outcome(cfg)
    assert "Score: G=1.0, R=0.5, score=1.25, max_score=1.5, questions=1" in capsys.readouterr().out
