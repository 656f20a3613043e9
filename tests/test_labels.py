"""Hand labels: append-only file round trip, last line wins, resume point, torn lines, counts, widget."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.core.dataset import Dataset, PageRef, Question, Report, load_dataset
from rag.label import label_counts, label_state
from rag.core.labels import (LabelError, append_label, labels_as_gold, labels_path,
                        latest_labels, read_labels)

A, B = "a" * 40, "b" * 40


def _ds(root: Path) -> Dataset:
    qs = (Question(qid="q000", text="How much?", kind="number"), Question(qid="q001", text="Who?", kind="names"),
          Question(qid="q002", text="Did it?", kind="boolean"))
    reps = (Report(sha1=A, company="Acme", currency="USD", pdf=root / "a.pdf"),
            Report(sha1=B, company="Bee", currency="USD", pdf=root / "b.pdf"))
    return Dataset(root=root, name="tiny", reports=reps, questions=qs, gold={})


def test_round_trip_last_line_wins_and_gold(tmp_path):
    p = tmp_path / "labels.jsonl"
    append_label(p, "How much?", 12.5, pages=[PageRef(sha1=A, page=3)], status="accepted", labeller="ann",
                 kind="number", qid="q000")
    append_label(p, "Who?", ["CEO", "CFO"], pages=[(A, 2), (B, 7), (A, 4)], status="corrected", kind="names")
    append_label(p, "How much?", 13.0, pages=[{"sha1": A, "page": 5}], status="corrected", kind="number")
    append_label(p, "Did it?", None, status="skipped", kind="boolean")
    recs = read_labels(p)
    assert len(recs) == 4 and recs[0]["labeller"] == "ann" and recs[0]["time"].endswith("Z")
    assert latest_labels(p)["How much?"]["value"] == 13.0
    gold = labels_as_gold(p)
    assert set(gold) == {"How much?", "Who?"}  # skipped is not gold
    assert gold["How much?"].answers == ("13.0",) and gold["How much?"].pools == ((PageRef(sha1=A, page=5),),)
    # names: the value list is the gold set; pages grouped into one pool per report
    assert gold["Who?"].answers == ("CEO", "CFO")
    assert gold["Who?"].pools == ((PageRef(sha1=A, page=2), PageRef(sha1=A, page=4)), (PageRef(sha1=B, page=7),))


def test_skip_after_accept_removes_gold_and_bool_values(tmp_path):
    p = tmp_path / "labels.jsonl"
    append_label(p, "Did it?", True, status="accepted", kind="boolean")
    assert labels_as_gold(p)["Did it?"].answers == ("True",)
    append_label(p, "Did it?", None, status="skipped", kind="boolean")
    assert labels_as_gold(p) == {}


def test_resume_point_and_counts(tmp_path):
    ds = _ds(tmp_path)
    p = tmp_path / "labels.jsonl"
    st = label_state(ds, p)
    assert (st.index, st.qid, st.labelled, st.total) == (0, "q000", 0, 3)
    append_label(p, "How much?", 1.0, status="accepted", kind="number")
    append_label(p, "Did it?", None, status="skipped", kind="boolean")
    st = label_state(ds, p)
    assert (st.index, st.qid, st.labelled) == (1, "q001", 2)  # first question without a label
    counts = label_counts(ds, p)
    assert counts.loc["all", "accepted"] == 1 and counts.loc["all", "skipped"] == 1
    assert counts.loc["all", "unlabelled"] == 1 and counts.loc["names", "unlabelled"] == 1
    append_label(p, "Who?", ["X"], status="corrected", kind="names")
    assert label_state(ds, p).index == 3 and label_state(ds, p).qid is None


def test_torn_last_line_is_ignored_and_next_append_is_whole(tmp_path):
    p = tmp_path / "labels.jsonl"
    append_label(p, "How much?", 1.0, status="accepted", kind="number")
    with open(p, "a") as f:  # a crash mid-append
        f.write('{"time": "2026-01-01T00:00:00Z", "question": "Who?", "val')
    with pytest.warns(UserWarning, match=r"labels.jsonl:2: torn"):
        assert [r["question"] for r in read_labels(p)] == ["How much?"]
    append_label(p, "Who?", ["CEO"], status="accepted", kind="names")
    with pytest.warns(UserWarning, match="torn"):
        assert [r["question"] for r in read_labels(p)] == ["How much?", "Who?"]


def test_bad_label_lines_and_values_are_errors(tmp_path):
    p = tmp_path / "labels.jsonl"
    p.write_text("not json at all\n")
    with pytest.raises(LabelError, match=r"labels.jsonl:1"):
        read_labels(p)
    p.write_text(json.dumps({"question": "x", "status": "maybe"}) + "\n")
    with pytest.raises(LabelError, match="status"):
        read_labels(p)
    with pytest.raises(LabelError, match="status"):
        append_label(tmp_path / "x.jsonl", "q", 1, status="done")
    with pytest.raises(LabelError, match="1-based"):
        append_label(tmp_path / "x.jsonl", "q", 1, pages=[(A, 0)])


def test_labels_path_rule(tmp_path):
    from rag.core.config import PROJECT_ROOT

    inside = Dataset(root=PROJECT_ROOT / "data" / "demo", name="demo", reports=(), questions=(), gold={})
    assert labels_path(inside) == (PROJECT_ROOT / "data" / "demo" / "labels.jsonl").resolve()
    outside = Dataset(root=tmp_path / "erc2-dev", name="erc2-dev", reports=(), questions=(), gold={})
    assert labels_path(outside) == (PROJECT_ROOT / "data" / "erc2-dev" / "labels.jsonl").resolve()


# ---- widget -----------------------------------------------------------------------------------
def test_parse_helpers(tmp_path):
    from rag.views.widgets.label_widget import parse_pages, parse_value

    ds = _ds(tmp_path)
    assert parse_pages("aaaa:3, b:7\n4", ds, default_sha1=A) == [PageRef(sha1=A, page=3), PageRef(sha1=B, page=7),
                                                                PageRef(sha1=A, page=4)]
    with pytest.raises(ValueError, match="say which report"):
        parse_pages("4", ds)
    with pytest.raises(ValueError, match="1-based"):
        parse_pages("a:0", ds)
    assert parse_value("1,234.5", "number") == 1234.5 and parse_value("N/A", "number") == "N/A"
    assert parse_value("true", "boolean") is True and parse_value("CEO; CFO ", "names") == ["CEO", "CFO"]
    with pytest.raises(ValueError):
        parse_value("maybe", "boolean")


def test_widget_labels_and_resumes_on_demo(demo_dir, make_cfg, tmp_path):
    """Real PDFs (demo corpus): page images render, buttons append labels, a new widget resumes."""
    pytest.importorskip("ipywidgets")
    from rag.views.widgets.label_widget import label_widget

    ds = load_dataset(demo_dir)
    cfg = make_cfg(demo_dir, run="lab")
    q0, q1 = ds.questions[0], ds.questions[1]
    pool_page = ds.gold[q0.text].pools[0][0]
    sub = {"team_email": "t@x", "submission_name": "t", "answers": [
        {"question_text": q0.text, "kind": q0.kind, "value": 1.0,
         "references": [{"pdf_sha1": pool_page.sha1, "page_index": pool_page.page - 1}]}]}
    (cfg.run_dir / "06_answer").mkdir(parents=True)
    (cfg.run_dir / "06_answer" / "submission.json").write_text(json.dumps(sub))
    labels = tmp_path / "labels.jsonl"
    w = label_widget(cfg, ds, labeller="ann", path=labels)
    img = w.children[6]
    assert w._label_state["i"] == 0 and bytes(img.value[:4]) == b"\x89PNG"
    w._buttons["Accept"].click()
    assert w._label_state["i"] == 1
    w._buttons["Skip"].click()
    recs = read_labels(labels)
    assert recs[0]["status"] == "accepted" and recs[0]["pages"] == [{"sha1": pool_page.sha1, "page": pool_page.page}]
    assert recs[-1]["status"] == "skipped" and recs[-1]["question"] == q1.text
    w2 = label_widget(cfg, ds, path=labels)
    assert w2._label_state["i"] == 2
    q2 = ds.questions[2]
    w2._fields["value"].value = "N/A" if q2.kind != "boolean" else "False"
    w2._fields["pages"].value = f"{pool_page.sha1[:10]}:2"
    w2._buttons["Save correction"].click()
    rec = read_labels(labels)[-1]
    assert rec["question"] == q2.text and rec["status"] == "corrected"
    assert rec["pages"] == [{"sha1": pool_page.sha1, "page": 2}]
    w2._buttons["Back"].click()
    assert w2._label_state["i"] == 2
    w2._fields["value"].value = "not a value" if q2.kind in ("number", "boolean") else ""
    n = len(read_labels(labels))
    w2._buttons["Save correction"].click()  # a bad value is reported, nothing appended
    assert len(read_labels(labels)) == n if q2.kind in ("number", "boolean") else True


def test_reasoning_text_finds_nested_fields(make_cfg, tmp_path):
    from rag.views.widgets.label_widget import reasoning_text

    cfg = make_cfg(tmp_path, run="r")
    d = cfg.run_dir / "06_answer" / "debug"
    d.mkdir(parents=True)
    (d / "q000.json").write_text(json.dumps({"qid": "q000", "calls": [
        {"parsed": {"step_by_step_analysis": "1. found revenue on page 3", "relevant_pages": [3]}},
        {"parsed": None, "p_true": 0.31}],  # a yes/no page read without reasoning
        "na_reason": None}))
    txt = reasoning_text(cfg, "q000")
    assert "found revenue on page 3" in txt and "na_reason" not in txt and "p_true: 0.31" in txt
    assert reasoning_text(cfg, "q999") == "(no debug record)"
