"""ERC submission export: value types by kind, 0-based page_index, invalid submissions never written."""
from __future__ import annotations

import json

import pytest

from rag.answer.common.submission import SubmissionError, build_submission, export_value, validate_submission, write_submission

SHA = "0123456789abcdef0123456789abcdef01234567"


def rec(kind, value, pages=(3,), text="Q?"):
    return {"question_text": text, "kind": kind, "value": value,
            "references": [{"sha1": SHA, "page": p} for p in pages]}


def test_build_and_write_valid_submission(tmp_path):
    records = [rec("number", 406100000), rec("number", "N/A", ()), rec("boolean", True), rec("name", "Jane Roe"),
               rec("names", ["CFO", "CEO"]), rec("comparative", "Acme Corp"), rec("boolean", "N/A", ()),
               rec("boolean", None, ())]
    sub = build_submission(records, "team@example.com", "run-1")
    path = write_submission(tmp_path / "submission.json", sub)
    data = json.loads(path.read_text())
    assert set(data) == {"team_email", "submission_name", "answers"}
    vals = [a["value"] for a in data["answers"]]
    # A boolean N/A (06: a question routed to no single report, issue 33) stays N/A; an unanswered one is False.
    assert vals == [406100000.0, "N/A", True, "Jane Roe", ["CFO", "CEO"], "Acme Corp", "N/A", False]
    assert isinstance(vals[0], float)
    assert data["answers"][0]["references"] == [{"pdf_sha1": SHA, "page_index": 2}]  # page 3 -> index 2


@pytest.mark.parametrize("bad,msg", [
    (rec("number", "four hundred"), "does not fit kind 'number'"),
    (rec("boolean", "yes"), None),  # exports as False: a boolean is never left out
    (rec("names", []), None),  # empty list exports as "N/A"
    (rec("number", True), "does not fit kind 'number'"),
    (rec("name", 12), None),
])
def test_export_values(bad, msg):
    if msg is None:
        build_submission([bad], "t@e.com", "n")
    else:
        with pytest.raises(SubmissionError, match=msg):
            build_submission([bad], "t@e.com", "n")


@pytest.mark.parametrize("mutate,where", [
    (lambda d: d["answers"][0].update(value="abc"), "answers.0"),
    (lambda d: d["answers"][0]["references"][0].update(page_index=-1), "page_index"),
    (lambda d: d["answers"][0]["references"][0].update(pdf_sha1="nothex"), "pdf_sha1"),
    (lambda d: d["answers"][0].update(kind="date"), "kind"),
    (lambda d: d["answers"][0].update(value=["ok", ""]), "answers.0"),
    (lambda d: d.update(team_email="nobody"), "team_email"),
    (lambda d: d["answers"][0].pop("question_text"), "question_text"),
])
def test_malformed_submission_rejected_and_not_written(tmp_path, mutate, where):
    good = build_submission([rec("names", ["CFO"])], "t@e.com", "n").model_dump(mode="json")
    mutate(good)
    target = tmp_path / "submission.json"
    with pytest.raises(SubmissionError, match=where):
        write_submission(target, good)
    assert not target.exists()


def test_invalid_write_keeps_previous_file(tmp_path):
    target = tmp_path / "submission.json"
    write_submission(target, build_submission([rec("name", "A")], "t@e.com", "n"))
    before = target.read_text()
    bad = json.loads(before)
    bad["answers"][0]["value"] = ["not", "a", "name"]
    with pytest.raises(SubmissionError):
        write_submission(target, bad)
    assert target.read_text() == before


def test_export_value_by_kind():
    assert export_value("number", "1.5") == 1.5 and export_value("number", None) == "N/A"
    assert export_value("names", "CFO") == ["CFO"] and export_value("boolean", None) is False
    assert validate_submission({"team_email": "a@b.co", "submission_name": "x", "answers": []}).answers == []
