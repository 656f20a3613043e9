"""Smoke run: every notebook headless with papermill on the generated demo corpus (test preset)."""
import json

import pytest

from rag.pipeline import NOTEBOOKS, run_notebooks

pytestmark = [pytest.mark.slow, pytest.mark.llm]


@pytest.mark.reliability
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
    # Issue 17: executed notebooks read as reports without widgets (interactive=False here).
    assert "pages_with_tables" in _outputs(run_dir, "01_parse") and "image/png" in _outputs(run_dir, "01_parse")
    assert "with_currency" in _outputs(run_dir, "02_clean")
    assert "past_limit" in _outputs(run_dir, "03_chunk") and "over 256" in _outputs(run_dir, "03_chunk")
    assert "embed_seconds" in _outputs(run_dir, "04_index")
    out05 = _outputs(run_dir, "05_retrieve")
    for col in ("routing", "top pages (final score)", "gold rank", "hit@1"):
        assert col in out05, col
    for q in questions[:3]:
        assert q["text"][:40] in out05  # one row per question
    out06 = _outputs(run_dir, "06_answer")
    for col in ("answer", "cited", "snippet", "gold", "right", "ref_score"):
        assert f"<th>{col}</th>" in out06, col
    assert "earlier scored runs" not in _outputs(run_dir, "07_evaluate")  # comments are not outputs
    assert "answer_accuracy" in _outputs(run_dir, "07_evaluate")

    # Issue 18: with the LLM cache, a second 05..06 over the same 01..04 gives the same submission bytes
    # and the same 05 records (timings and usage aside).
    from rag.ablate import link_stage
    from rag.pipeline import prepare, run_direct

    cfg2, ds = prepare("test", str(demo_dir), "smoke2", overrides)
    for st in ("01_parse", "02_clean", "03_chunk", "04_index"):
        link_stage(run_dir, cfg2.run_dir, st)
    run_direct(cfg2, ds, ["05_retrieve", "06_answer"], progress=False)
    again = cfg2.run_dir / "06_answer" / "submission.json"
    assert again.read_bytes() == (run_dir / "06_answer" / "submission.json").read_bytes()

    def content(path):
        rec = json.loads(path.read_text())
        for k in ("seconds", "usage"):
            rec.pop(k, None)
        return rec

    first = sorted((run_dir / "05_retrieve").glob("q*.json"))
    assert first and all(content(p) == content(cfg2.run_dir / "05_retrieve" / p.name) for p in first)


def _outputs(run_dir, name: str) -> str:
    """Every output (text, HTML, image mime types) of an executed notebook, as one string."""
    nb = json.loads((run_dir / "notebooks" / f"{name}.ipynb").read_text())
    parts = []
    for c in nb["cells"]:
        for o in c.get("outputs", []):
            parts.append("".join(o.get("text", "")))
            for mime, data in o.get("data", {}).items():
                parts.append(mime)
                parts.append(data if isinstance(data, str) else "".join(data))
    return "\n".join(parts)
