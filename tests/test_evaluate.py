"""Scorer (ERC round-2 rules) on hand-computed cases, the all-N/A dev sanity score, stage files, plots."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from rag.core.dataset import Dataset, Gold, PageRef, Question, load_dataset
from rag.evaluate import (SubmissionError, compare_runs, evaluate_submission, load_submission, run_evaluate,
                          score_answer, score_references)

SHARED_DEV = Path(__file__).resolve().parents[2] / "shared" / "erc2-dev"
A, B = "a" * 40, "b" * 40


def g(kind, *answers, pools=()):
    return Gold(kind=kind, answers=tuple(answers), pools=tuple(tuple(PageRef(sha1=s, page=p) for s, p in pool)
                                                                for pool in pools))


# ---- answers ---------------------------------------------------------------------------
@pytest.mark.parametrize("value, gold, expected", [
    (100.9, "100", 1.0),        # within 1%
    (101.0, "100", 1.0),        # on the 1% boundary
    (101.2, "100", 0.0),        # outside 1%
    (98.5, "100", 0.0),
    ("1,000,000", "1000000.0", 1.0),   # numeric string with separators
    (-5000.0, "-5000", 1.0),    # negative gold: the original script never scored this
    (5000.0, "-5000", 1.0),     # sign ignored: |answer| vs |gold|
    (-5100.0, "-5000", 0.0),    # 2% off in magnitude
    (0, "0", 1.0),
    (True, "1", 0.0),           # a boolean is not a number
    ("abc", "12", 0.0),
    ("N/A", "12", 0.0),
])
def test_numbers(value, gold, expected):
    assert score_answer(value, g("number", gold)) == expected


def test_na_must_match_exactly():
    na = g("number", "N/A")
    assert score_answer("N/A", na) == 1.0
    assert score_answer(" N/A ", na) == 1.0
    assert score_answer(0.0, na) == 0.0
    assert score_answer(None, na) == 0.0
    assert score_answer("n/a", na) == 0.0
    assert score_answer(["N/A"], g("names", "N/A")) == 1.0
    assert score_answer(["CEO"], g("names", "N/A")) == 0.0
    assert score_answer("N/A", g("boolean", "False")) == 0.0


@pytest.mark.parametrize("value, gold, expected", [
    (True, "True", 1.0), ("True", "True", 1.0), ("true ", "True", 1.0), (False, "True", 0.0),
    ("False", "False", 1.0), (False, "False", 1.0), ("yes", "True", 0.0), (None, "False", 0.0),
])
def test_booleans(value, gold, expected):
    assert score_answer(value, g("boolean", gold)) == expected


def test_name_and_comparative_exact_case_insensitive():
    assert score_answer("  datalogic ", g("name", "Datalogic")) == 1.0
    assert score_answer("Datalogic SpA", g("name", "Datalogic")) == 0.0
    assert score_answer("Poste", g("comparative", "Datalogic", "Poste")) == 1.0  # alternatives: best counts


def test_names_jaccard():
    gold = g("names", "Chief Executive Officer", "CFO")
    assert score_answer(["chief executive officer ", "CFO"], gold) == 1.0
    assert score_answer(["CFO"], gold) == pytest.approx(0.5)
    assert score_answer(["CFO", "Chair", "COO"], gold) == pytest.approx(1 / 4)
    assert score_answer("CFO", gold) == pytest.approx(0.5)  # a bare string is a one-name list
    assert score_answer(["Chair"], gold) == 0.0


# ---- references ------------------------------------------------------------------------
def test_references_wrong_and_missed():
    pools = [[PageRef(sha1=A, page=3), PageRef(sha1=A, page=5)], [PageRef(sha1=B, page=1)]]
    r = score_references([PageRef(sha1=A, page=5), PageRef(sha1=B, page=1)], pools)
    assert (r["ref_score"], r["wrong"], r["missed"]) == (1.0, 0, 0)
    r = score_references([PageRef(sha1=A, page=3), PageRef(sha1=A, page=5)], pools)  # two from one pool
    assert (r["ref_score"], r["wrong"], r["missed"]) == (0.75, 0, 1)
    r = score_references([PageRef(sha1=A, page=9), PageRef(sha1=A, page=9), PageRef(sha1=B, page=2)], pools)
    assert r["wrong"] == 2 and r["missed"] == 2 and r["ref_score"] == pytest.approx(1 - 0.2 - 0.5)
    many = [PageRef(sha1=B, page=p) for p in range(10, 20)]
    assert score_references(many, pools)["ref_score"] == 0.0  # clipped at 0


def test_references_no_pools():
    assert score_references([], [])["ref_score"] == 1.0
    assert score_references([PageRef(sha1=A, page=1), PageRef(sha1=A, page=2)], [])["ref_score"] == pytest.approx(0.8)


# ---- whole submissions -----------------------------------------------------------------
def _tiny_ds(tmp_path) -> Dataset:
    qs = (Question(qid="q000", text="num?", kind="number"), Question(qid="q001", text="bool?", kind="boolean"),
          Question(qid="q002", text="na?", kind="number"), Question(qid="q003", text="nogold?", kind="name"))
    gold = {"num?": g("number", "-250", pools=[[(A, 4)]]), "bool?": g("boolean", "True", pools=[[(B, 2), (B, 3)]]),
            "na?": g("number", "N/A")}
    return Dataset(root=tmp_path, name="tiny", reports=(), questions=qs, gold=gold)


def _write_sub(path: Path, answers: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"team_email": "t@x", "submission_name": "t", "answers": answers}))
    return path


def test_submission_hand_computed(tmp_path):
    ds = _tiny_ds(tmp_path)
    sub = _write_sub(tmp_path / "s.json", [
        # right number (sign ignored), right page (page_index 3 = page 4), one wrong page -> R 0.9
        {"question_text": "num?", "kind": "number", "value": 250.0,
         "references": [{"pdf_sha1": A, "page_index": 3}, {"pdf_sha1": A, "page_index": 4}]},
        # "True" as a string is right; no references: missed pool -> R 0.75
        {"question_text": "bool?", "kind": "boolean", "value": "True", "references": []},
        # wrong: gold N/A; one citation where no pool exists -> R 0.9
        {"question_text": "na?", "kind": "number", "value": 3.0, "references": [{"pdf_sha1": B, "page_index": 0}]},
        {"question_text": "not in dataset", "kind": "name", "value": "x", "references": []},
    ])
    per_q, s = evaluate_submission(sub, ds, gold_source="answers")
    assert list(per_q.qid) == ["q000", "q001", "q002"]  # q003 has no gold: not graded
    assert list(per_q.answer_score) == [1.0, 1.0, 0.0]
    assert list(per_q.ref_score) == pytest.approx([0.9, 0.75, 0.9])
    t = s["totals"]
    assert t["G"] == 2.0 and t["R"] == pytest.approx(2.55)
    assert t["score"] == pytest.approx(2.0 + 2.55 / 2) and t["max_score"] == 4.5
    assert t["answer_accuracy"] == pytest.approx(2 / 3, abs=1e-4)
    assert t["na_recall"] == 0.0 and t["na_precision"] is None
    assert s["unknown_questions"] == ["not in dataset"] and s["ungraded_questions"] == ["q003"]


def test_unanswered_question_scores_as_no_answer(tmp_path):
    ds = _tiny_ds(tmp_path)
    per_q, s = evaluate_submission(_write_sub(tmp_path / "s.json", []), ds, gold_source="answers")
    assert not per_q.answered.any()
    assert s["totals"]["G"] == 0.0 and s["totals"]["R"] == pytest.approx(0.75 + 0.75 + 1.0)


def test_bad_submission_names_file_and_entry(tmp_path):
    p = _write_sub(tmp_path / "bad.json", [{"question_text": "q", "value": 1,
                                            "references": [{"pdf_sha1": A, "page_index": -1}]}])
    with pytest.raises(SubmissionError, match=r"bad\.json.*answers\[0\]\.references\[0\]"):
        load_submission(p)
    (tmp_path / "notjson.json").write_text("{")
    with pytest.raises(SubmissionError, match="notjson.json"):
        load_submission(tmp_path / "notjson.json")
    with pytest.raises(SubmissionError, match="no submission file"):
        load_submission(tmp_path / "absent.json")


def test_labels_override_answers_gold(tmp_path):
    from rag.core.labels import append_label

    ds = _tiny_ds(tmp_path)
    labels = tmp_path / "labels.jsonl"
    append_label(labels, "na?", 3.0, pages=[(B, 1)], status="corrected", kind="number")
    sub = _write_sub(tmp_path / "s.json", [{"question_text": "na?", "kind": "number", "value": 3.0,
                                             "references": [{"pdf_sha1": B, "page_index": 0}]}])
    per_q, _ = evaluate_submission(sub, ds, gold_source="both", labels_path=labels)
    row = per_q.set_index("qid").loc["q002"]
    assert row.gold_source == "labels" and row.answer_score == 1.0 and row.ref_score == 1.0
    per_q, _ = evaluate_submission(sub, ds, gold_source="labels", labels_path=labels)
    assert list(per_q.qid) == ["q002"]


# ---- the dev sanity check ---------------------------------------------------------------
@pytest.mark.skipif(not (SHARED_DEV / "answers.json").exists(), reason="erc2-dev not present")
def test_all_na_dev_scores_16_4_of_33(tmp_path):
    ds = load_dataset(SHARED_DEV, check_hashes=False)
    sub = _write_sub(tmp_path / "na.json", [{"question_text": q.text, "kind": q.kind, "value": "N/A",
                                              "references": []} for q in ds.questions])
    per_q, s = evaluate_submission(sub, ds, gold_source="answers")
    t = s["totals"]
    assert t["questions"] == 22 and t["max_score"] == 33
    assert t["G"] == 7 and t["R"] == pytest.approx(18.75)
    assert t["score"] == pytest.approx(16.375) and round(t["score"], 1) == 16.4
    assert t["na_precision"] == pytest.approx(7 / 22, abs=1e-4) and t["na_recall"] == 1.0


# ---- stage + compare + plots (real files) ----------------------------------------------
def test_run_evaluate_writes_files_and_compare(make_cfg, tmp_path):
    from rag.core.stage import Stage

    ds = _tiny_ds(tmp_path)
    runs = []
    for run, value in (("r1", 250.0), ("r2", "N/A")):
        cfg = make_cfg(tmp_path, run=run)
        chunk = Stage(cfg, "03_chunk")
        chunk.add_tokens(chunk_tokens=5000)  # corpus tokens: not LLM spend
        chunk.finish()
        for name in ("05_retrieve", "06_answer"):  # manifests with LLM tokens
            st = Stage(cfg, name)
            st.add_tokens(prompt_tokens=100, completion_tokens=20, requests=3)
            st.finish()
        _write_sub(cfg.run_dir / "06_answer" / "submission.json",
                   [{"question_text": "num?", "kind": "number", "value": value,
                     "references": [{"pdf_sha1": A, "page_index": 3}]}])
        per_q = run_evaluate(cfg, ds, progress=False, gold_source="answers")
        assert isinstance(per_q, pd.DataFrame) and len(per_q) == 3
        out = cfg.run_dir / "07_evaluate"
        for f in ("scores.json", "per_question.csv", "by_kind.csv", "stage_costs.csv", "score_by_kind.png",
                  "stage_costs.png", "manifest.json"):
            assert (out / f).exists(), f
        assert (out / "score_by_kind.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        s = json.loads((out / "scores.json").read_text())
        assert {c["stage"]: c["tokens"] for c in s["stage_costs"]} == {"03_chunk": 0, "05_retrieve": 120,
                                                                       "06_answer": 120}
        runs.append(cfg)
    table = compare_runs(*runs)
    assert list(table.index) == ["r1", "r2"]
    assert table.loc["r1", "score"] > table.loc["r2", "score"]
    assert table.loc["r1", "tokens"] == 240
    assert list(compare_runs(runs[0].run_dir / "07_evaluate").index) == ["r1"]
    from rag.evaluate import paired

    flips = paired(runs[0], runs[1])
    assert list(flips.question) == ["num?"] and list(flips.flip) == ["lost"]
    assert flips.value_a[0] == "250.0" or float(flips.value_a[0]) == 250.0
    assert paired(runs[0], runs[0]).empty
    kinds = {k["kind"]: k for k in json.loads((runs[1].run_dir / "07_evaluate" / "scores.json").read_text())["by_kind"]}
    assert {"na_precision", "na_recall", "gold_na", "value_correct"} <= set(kinds["number"])


def test_plots_retrieval_hit_and_ablation():
    from rag.evaluate import plots

    ret = pd.DataFrame({"qid": ["q0", "q1"], "hit@1": [1, 0], "hit@5": [1, 1], "recall": [0.5, 0.2]})
    assert plots.hit_at_k(ret) == {1: 0.5, 5: 1.0}
    assert plots.hit_at_k(pd.DataFrame({"k": [1, 1, 3], "hit": [0, 1, 1]})) == {1: 0.5, 3: 1.0}
    metrics_like = pd.DataFrame({"group": ["all", "number"], "n": [4, 1], "hit@1": [0.25, 1.0], "hit@5": [0.5, 1.0],
                                 "order": "final"})
    both = pd.concat([metrics_like, metrics_like.assign(order="retrieval", **{"hit@1": [0.0, 0.0]})])
    assert plots.hit_at_k(both) == {1: 0.25, 5: 0.5} and plots.hit_at_k(both, "retrieval") == {1: 0.0, 5: 0.5}
    assert plots.retrieval_hit_png(both)[:4] == b"\x89PNG"
    assert plots.retrieval_hit_png(ret)[:4] == b"\x89PNG"
    table = pd.DataFrame({"variant": ["a", "b"], "score": [3.0, 4.0], "hit@5": [0.5, 0.7],
                          "seconds": [10.0, 20.0], "tokens": [0, 100]})
    assert plots.ablation_png(table)[:4] == b"\x89PNG"


def _figures(monkeypatch):
    """The figures the plot functions draw (``_png`` kept from closing them), to read what they show."""
    from rag.evaluate import plots

    figs = []
    real = plots._png
    monkeypatch.setattr(plots, "_png", lambda fig: (figs.append(fig), real(fig))[1])
    return figs


def test_tradeoff_labels_do_not_print_over_each_other(monkeypatch):
    """Issue 47: thresholds landing on one point (0.9 and 0.95 give the same answers) share one label."""
    from rag.evaluate import plots

    curve = pd.DataFrame({"threshold": ["none", 0.3, 0.5, 0.6, 0.8, 0.9, 0.95],
                          "na_precision": [None, 0.5, 0.5, 0.5, 0.6, 0.75, 0.75],
                          "found_pct": [80.0, 75.0, 75.0, 75.0, 70.0, 50.0, 50.0]})
    assert plots.point_labels(curve.dropna()) == [(0.5, 75.0, "0.3–0.6"), (0.6, 70.0, "0.8"), (0.75, 50.0, "0.9, 0.95")]
    figs = _figures(monkeypatch)
    assert plots.tradeoff_png(curve)[:4] == b"\x89PNG"
    texts = figs[0].axes[0].texts
    assert [x.get_text() for x in texts] == ["0.3–0.6", "0.8", "0.9, 0.95"]
    assert len({x.xy for x in texts}) == len(texts)  # one label per point
    flat = pd.DataFrame({"threshold": ["none", 0.0, 0.3, 0.5, 1.0], "na_precision": [1.0, 1.0, 1.0, 1.0, 0.5],
                         "found_pct": [100.0, 100.0, 100.0, 100.0, 50.0]})  # the demo run's curve
    assert [s for _, _, s in plots.point_labels(flat)] == ["none, 0.0–0.5", "1.0"]


def test_stage_costs_says_no_api_cost_offline(monkeypatch):
    """Issue 47: an offline run's cost panel says so instead of drawing empty bars on a -0.04..0.04 axis."""
    from rag.evaluate import plots

    costs = pd.DataFrame({"stage": ["04_index", "06_answer"], "seconds": [8.0, 95.0], "prompt_tokens": [0, 4800],
                          "completion_tokens": [0, 400], "embedding_tokens": [3000, 0], "cost_usd": [0.0, 0.0]})
    figs = _figures(monkeypatch)
    plots.stage_costs_png(costs)
    plots.stage_costs_png(costs.assign(cost_usd=[0.0006, 0.012]))
    offline, paid = (f.axes[2] for f in figs)
    assert [x.get_text() for x in offline.texts] == [plots.NO_COST] and not len(offline.get_xticks())
    assert not paid.texts and len(paid.get_xticks())


def test_run_evaluate_on_demo_corpus(demo_dir, make_cfg):
    """Real run on the generated demo corpus: a submission built from its gold scores the maximum."""
    ds = load_dataset(demo_dir)
    cfg = make_cfg(demo_dir, run="demo-eval")

    def value(gd):
        if gd.answers == ("N/A",):
            return "N/A"
        return {"number": lambda: float(gd.answers[0]), "boolean": lambda: gd.answers[0] == "True",
                "names": lambda: list(gd.answers)}.get(gd.kind, lambda: gd.answers[0])()

    answers = [{"question_text": q.text, "kind": q.kind, "value": value(ds.gold[q.text]),
                "references": [{"pdf_sha1": pool[-1].sha1, "page_index": pool[-1].page - 1}
                               for pool in ds.gold[q.text].pools]} for q in ds.questions]
    _write_sub(cfg.run_dir / "06_answer" / "submission.json", answers)
    per_q = run_evaluate(cfg, ds, progress=False, gold_source="answers")
    t = json.loads((cfg.run_dir / "07_evaluate" / "scores.json").read_text())["totals"]
    assert len(per_q) == len(ds.questions) and t["score"] == t["max_score"] == 1.5 * len(ds.questions)
    # Off-by-one pages (a 0-/1-based mix-up) lose every pool and gain a wrong page each.
    for a in answers:
        for r in a["references"]:
            r["page_index"] += 1
    _write_sub(cfg.run_dir / "06_answer" / "submission.json", answers)
    run_evaluate(cfg, ds, progress=False, gold_source="answers")
    t2 = json.loads((cfg.run_dir / "07_evaluate" / "scores.json").read_text())["totals"]
    assert t2["G"] == t["G"] and t2["R"] < t["R"] and t2["missed_pools"] == sum(len(g.pools) for g in ds.gold.values())


# ---- ablations (fake stage functions: sharing, table, plot) -----------------------------------
def _fake_stages(calls: list, fail_run: str | None = None):
    """Stage functions that write a marker file + manifest; 06 writes a submission whose value is
    right only when rerank.mode == "llm"; 07 is the real scorer."""
    from rag.core.stage import Stage

    def make(name):
        def fn(cfg, ds, progress=True):
            calls.append((cfg.run, name))
            if cfg.run == fail_run and name == "05_retrieve":
                raise RuntimeError("boom")
            st = Stage(cfg, name)
            st.write_text("out.txt", f"{name} chunk={cfg.chunk.sizes} rerank={cfg.rerank.mode}")
            st.add_tokens(prompt_tokens=10)
            if name == "06_answer":
                ok = cfg.rerank.mode == "llm"
                st.write_json("submission.json", {"answers": [
                    {"question_text": "num?", "kind": "number", "value": -250.0 if ok else 1.0,
                     "references": [{"pdf_sha1": A, "page_index": 3}]}]})
            st.finish()
            return pd.DataFrame()
        return fn

    fns = {n: make(n) for n in ("01_parse", "02_clean", "03_chunk", "04_index", "05_retrieve", "06_answer")}
    fns["07_evaluate"] = lambda cfg, ds, progress=True: (calls.append((cfg.run, "07_evaluate")),
                                                        run_evaluate(cfg, ds, progress=False, gold_source="answers"))
    return fns


def test_grid_parsing():
    from rag.ablate import expand_grid, parse_axis, variant_overrides

    assert parse_axis("rerank.mode=none,llm") == ("rerank.mode", ["none", "llm"])
    assert parse_axis("chunk.sizes=[300,1000],500") == ("chunk.sizes", [[300, 1000], [500]])
    assert parse_axis("clean.serialize_tables=on,off") == ("clean.serialize_tables", [True, False])
    grid = expand_grid([("a.x", [1, 2]), ("b.y", ["p", "q"])])
    assert grid == [{"a.x": 1, "b.y": "p"}, {"a.x": 1, "b.y": "q"}, {"a.x": 2, "b.y": "p"}, {"a.x": 2, "b.y": "q"}]
    assert variant_overrides({}, {"chunk.sizes": [1000]})["retrieve.chunk_size"] == 1000
    assert variant_overrides({}, {"chunk.sizes": [1000], "retrieve.chunk_size": 300})["retrieve.chunk_size"] == 300
    with pytest.raises(ValueError, match="KEY=V1"):
        parse_axis("rerank.mode")


def test_ablation_shares_unchanged_stages(tmp_path):
    from rag.ablate import run_ablation

    ds = _tiny_ds(tmp_path)
    calls: list = []
    table = run_ablation("test", str(tmp_path), "abl", ["chunk.sizes=300,1000", "rerank.mode=none,llm"],
                         stage_fns=_fake_stages(calls), ds=ds, progress=False, outputs_dir=str(tmp_path / "out"))
    runs = list(table.run)
    assert len(runs) == 4 and all(not e for e in table.error)
    ran = {r: [s for rr, s in calls if rr == r] for r in runs}
    full = ["01_parse", "02_clean", "03_chunk", "04_index", "05_retrieve", "06_answer", "07_evaluate"]
    assert ran[runs[0]] == full                   # 300/none: everything
    assert ran[runs[1]] == full[4:]               # 300/llm: shares 01..04 with variant 0
    assert ran[runs[2]] == full[2:]               # 1000/none: shares 01..02
    assert ran[runs[3]] == full[4:]               # 1000/llm: shares 01..04 with variant 2
    out = tmp_path / "out"
    a, b = out / runs[0] / "03_chunk" / "out.txt", out / runs[1] / "03_chunk" / "out.txt"
    assert a.stat().st_ino == b.stat().st_ino     # hard-linked, not recomputed
    assert "1000" in (out / runs[3] / "03_chunk" / "out.txt").read_text()
    # llm variants answer right: the table shows it; time/tokens include the shared stages
    t = table.set_index("run")
    assert t.loc[runs[1], "score"] > t.loc[runs[0], "score"] and t.loc[runs[1], "G"] == 1.0
    assert t.loc[runs[1], "tokens"] == t.loc[runs[0], "tokens"] == 60
    for f in ("ablation.csv", "ablation.md", "ablation.png", "plan.json"):
        assert (out / "ablations" / "abl" / f).exists()
    assert (out / "ablations" / "abl" / "ablation.md").read_text().startswith("| variant | score")
    # A second invocation resumes: the same sharing plan, nothing breaks, same scores.
    again = run_ablation("test", str(tmp_path), "abl", ["chunk.sizes=300,1000", "rerank.mode=none,llm"],
                         stage_fns=_fake_stages([]), ds=ds, progress=False, outputs_dir=str(tmp_path / "out"))
    assert list(again.score) == list(table.score)


def test_ablation_failed_variant_is_reported(tmp_path):
    from rag.ablate import run_ablation

    ds = _tiny_ds(tmp_path)
    calls: list = []
    table = run_ablation("test", str(tmp_path), "f", ["rerank.mode=none,llm"], ds=ds, progress=False,
                         stage_fns=_fake_stages(calls, fail_run="f-00-none"), outputs_dir=str(tmp_path / "out"))
    assert "boom" in table.error[0] and not table.error[1]
    assert table.score[1] > 0


def test_ablation_does_not_share_a_failed_donor_stage(tmp_path):
    from rag.ablate import run_ablation

    ds = _tiny_ds(tmp_path)
    calls: list = []
    # variant 0 fails at 05; variant 1 (same everything but answer.max_pages) must run 05 itself.
    table = run_ablation("test", str(tmp_path), "d", ["answer.max_pages=2,3"], ds=ds, progress=False,
                         stage_fns=_fake_stages(calls, fail_run="d-00-2"), outputs_dir=str(tmp_path / "out"))
    ran1 = [s for r, s in calls if r == "d-01-3"]
    assert ran1 == ["05_retrieve", "06_answer", "07_evaluate"] and not table.error[1]
    assert table.shared[1] == "01,02,03,04"
