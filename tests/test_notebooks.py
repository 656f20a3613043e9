"""Smoke run: every notebook headless with papermill on the generated demo corpus (test preset)."""
import json

import pytest

from rag.pipeline import NOTEBOOKS, run_notebooks

pytestmark = [pytest.mark.slow, pytest.mark.llm]


def test_all_notebooks_run_headless(demo_dir, tmp_path):
    # the offline default's table candidates, picked by the model (a real call to the small model)
    overrides = {"outputs_dir": str(tmp_path / "outputs"), "cache_dir": str(tmp_path / "cache"),
                 "answer.table_candidates": True}
    done = run_notebooks("test", str(demo_dir), "smoke", overrides)
    assert [p.stem for p in done] == list(NOTEBOOKS)
    run_dir = tmp_path / "outputs" / "smoke"
    for stage in ("01_parse", "02_clean", "03_chunk", "04_index", "05_retrieve", "06_answer", "07_evaluate"):
        assert (run_dir / stage / "manifest.json").exists(), stage
    sub = json.loads((run_dir / "06_answer" / "submission.json").read_text())
    questions = json.loads((demo_dir / "questions.json").read_text())
    assert len(sub["answers"]) == len(questions)
    scores = json.loads((run_dir / "07_evaluate" / "scores.json").read_text())
    assert "totals" in scores
    debug = [json.loads(p.read_text()) for p in (run_dir / "06_answer" / "debug").glob("*.json")]
    assert any(c.get("kind") == "figure_pick" for d in debug for c in d.get("calls", [])), "no table pick ran"
    # executed notebooks carry their outputs (the summary table of each stage)
    nb = json.loads((run_dir / "notebooks" / "01_parse.ipynb").read_text())
    assert any(c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code")
