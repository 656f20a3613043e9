"""rag.evaluate.groups: values found / N/A precision and recall / booleans by gold, one run and two paired."""
from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pandas as pd
import pytest

from rag.core.dataset import Dataset, Gold, PageRef, Question
from rag.evaluate import evaluate_submission, main, run_evaluate
from rag.evaluate.groups import group_table, paired_groups

A = "a" * 40
# (text, kind, gold answers)
QS = [("n1?", "number", ["250"]), ("n2?", "number", ["7"]), ("n3?", "number", ["9"]), ("na1?", "number", ["N/A"]),
      ("na2?", "number", ["N/A"]), ("t?", "boolean", ["True"]), ("f?", "boolean", ["False"]),
      ("c?", "comparative", ["Bee Ltd"]), ("ns?", "names", ["CEO", "CFO"]), ("cna?", "comparative", ["N/A"])]


def _ds(tmp_path) -> Dataset:
    qs = tuple(Question(qid=f"q{i:03d}", text=t, kind=k) for i, (t, k, _) in enumerate(QS))
    gold = {t: Gold(kind=k, answers=tuple(a), pools=(() if a == ["N/A"] else ((PageRef(sha1=A, page=1),),)))
            for t, k, a in QS}
    return Dataset(root=tmp_path, name="g", reports=(), questions=qs, gold=gold)


def _sub(path: Path, values: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"answers": [{"question_text": t, "kind": k, "value": values[t], "references": []}
                                            for t, k, _ in QS if t in values]}))
    return path


# n1 right, n2 N/A, n3 wrong; na1 N/A (right), na2 a value; t right, f says True; c right; names half; cna N/A
RUN_A = {"n1?": 250, "n2?": "N/A", "n3?": 8, "na1?": "N/A", "na2?": 5, "t?": True, "f?": True, "c?": "bee ltd",
         "ns?": ["CEO"], "cna?": "N/A"}


def _rows(table: pd.DataFrame) -> dict[str, dict]:
    return {r["group"]: r for r in table.to_dict(orient="records")}


def test_group_table_hand_computed(tmp_path):
    per_q, _ = evaluate_submission(_sub(tmp_path / "a.json", RUN_A), _ds(tmp_path), gold_source="answers")
    g = _rows(group_table(per_q))
    assert (g["number value"]["n"], g["number value"]["right"], g["number value"]["as_na"],
            g["number value"]["wrong"]) == (3, 1, 1, 1)
    assert g["comparative value"]["right"] == 1 and g["comparative value"]["n"] == 1
    assert g["names value"]["right"] == 0 and g["names value"]["score"] == 0.5  # Jaccard 1/2: partial credit
    assert g["all values"]["n"] == 5 and g["all values"]["right"] == 2
    assert (g["N/A recall"]["n"], g["N/A recall"]["right"]) == (3, 2)  # na1, cna answered N/A; na2 not
    assert (g["N/A precision"]["n"], g["N/A precision"]["right"], g["N/A precision"]["wrong"]) == (3, 2, 1)
    assert (g["boolean True-gold"]["right"], g["boolean False-gold"]["right"]) == (1, 0)
    assert "name value" not in g  # no question of that group
    assert list(g) == ["number value", "names value", "comparative value", "all values", "N/A recall",
                       "N/A precision", "boolean True-gold", "boolean False-gold"]
    # the same table from the CSV written by stage 07 (gold as a list repr, booleans as text)
    again = group_table(pd.read_csv(io.StringIO(per_q.to_csv(index=False))))
    assert again.equals(group_table(per_q))


def test_group_table_empty_and_no_na_answers(tmp_path):
    assert group_table(pd.DataFrame()).empty
    per_q, _ = evaluate_submission(_sub(tmp_path / "b.json", {"n1?": 250}), _ds(tmp_path), gold_source="answers")
    table = group_table(per_q)
    g = _rows(table)
    assert json.loads(table.to_json(orient="records"))[5]["pct"] is None  # strict JSON in scores.json
    assert g["N/A precision"]["n"] == 0 and pd.isna(g["N/A precision"]["pct"])
    assert g["number value"]["wrong"] == 2  # unanswered questions count as wrong, not as N/A


def test_paired_groups_and_cli(make_cfg, tmp_path):
    ds = _ds(tmp_path)
    run_b = dict(RUN_A, **{"n2?": 7, "f?": False, "n1?": "N/A"})  # gains n2 and f, loses n1
    cfgs = []
    for name, values in (("ra", RUN_A), ("rb", run_b)):
        cfg = make_cfg(tmp_path, run=name)
        _sub(cfg.run_dir / "06_answer" / "submission.json", values)
        run_evaluate(cfg, ds, progress=False, gold_source="answers")
        cfgs.append(cfg)
    out = cfgs[0].run_dir / "07_evaluate"
    assert (out / "groups.csv").exists()
    groups = {r["group"]: r for r in json.loads((out / "scores.json").read_text())["groups"]}
    assert groups["N/A precision"]["n"] == 3 and groups["all values"]["right"] == 2
    pa, pb = (pd.read_csv(c.run_dir / "07_evaluate" / "per_question.csv") for c in cfgs)
    p = _rows(paired_groups(pa, pb))
    assert (p["number value"]["right_a"], p["number value"]["right_b"]) == (1, 1)
    assert (p["number value"]["gained"], p["number value"]["lost"]) == (1, 1)
    assert (p["boolean False-gold"]["gained"], p["boolean False-gold"]["lost"]) == (1, 0)
    assert (p["N/A precision"]["n_a"], p["N/A precision"]["n_b"]) == (3, 3) and pd.isna(p["N/A precision"]["gained"])
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["--paired", str(cfgs[0].run_dir), str(cfgs[1].run_dir)]) == 0
        assert main(["--run", str(cfgs[1].run_dir)]) == 0
    text = buf.getvalue()
    assert "right_a" in text and "boolean False-gold" in text and text.count("N/A precision") == 2
    # a run's name is enough when it lives in the default outputs folder (`--run dev`, as `rag run` names it)
    import rag.core.config

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rag.core.config, "PROJECT_ROOT", cfgs[1].run_dir.parent.parent)
        buf = io.StringIO()
        with redirect_stdout(buf):
            assert main(["--run", "rb"]) == 0
        assert "boolean False-gold" in buf.getvalue()


def test_groups_of_a_run_scored_without_gold_say_so(tmp_path, capsys):
    """07 on a dataset without gold writes an empty table: ``--run`` says why (exit 2), not a pandas traceback."""
    run = tmp_path / "nogold"
    (run / "07_evaluate").mkdir(parents=True)
    (run / "07_evaluate" / "per_question.csv").write_text("\n")
    assert main(["--run", str(run)]) == 2
    assert "scored without gold answers" in capsys.readouterr().err
    assert main(["--run", str(tmp_path / "missing")]) == 2
    assert "run stage 07_evaluate" in capsys.readouterr().err
