import hashlib
import json
import shutil
from pathlib import Path

import pytest

from rag.core.dataset import DatasetError, load_dataset, parse_ref
from conftest import SHARED_DEV


def _make(tmp_path: Path, n=2, questions=None, subset_extra="", answers=None) -> Path:
    root = tmp_path / "ds"
    (root / "pdfs").mkdir(parents=True)
    rows = ["sha1,company_name,cur,major_industry"]
    for i in range(n):
        data = f"%PDF-1.4 fake {i}".encode()
        sha = hashlib.sha1(data).hexdigest()
        (root / "pdfs" / f"{sha}.pdf").write_bytes(data)
        rows.append(f"{sha},Company {i} Inc.,USD,Tech")
    (root / "subset.csv").write_text("\n".join(rows) + "\n" + subset_extra)
    qs = questions if questions is not None else [{"text": "What is X of Company 0 Inc.?", "kind": "number"}]
    (root / "questions.json").write_text(json.dumps(qs))
    if answers is not None:
        (root / "answers.json").write_text(json.dumps(answers))
    return root


def test_valid_dataset(tmp_path):
    root = _make(tmp_path, answers={"What is X of Company 0 Inc.?": {
        "kind": "number", "answers": ["1.0"], "reference_pools": [["abc:0", "abc:4"]]}})
    ds = load_dataset(root)
    assert len(ds.reports) == 2 and ds.questions[0].qid == "q000"
    g = ds.gold["What is X of Company 0 Inc.?"]
    assert [p.page for p in g.pools[0]] == [1, 5]  # 0-based page_index -> 1-based page


def test_ref_conversion():
    assert parse_ref("deadbeef:0").page == 1
    with pytest.raises(ValueError):
        parse_ref("deadbeef")


@pytest.mark.reliability
def test_every_problem_is_named(tmp_path):
    root = _make(tmp_path, questions=[{"text": "q", "kind": "essay"}])
    first = (root / "subset.csv").read_text().splitlines()[1]
    sha = first.split(",")[0]
    with open(root / "subset.csv", "a") as f:
        f.write(first + "\n")  # duplicated sha1 on row 4
        f.write("0" * 40 + ",Ghost Ltd,USD,X\n")  # listed PDF absent, row 5
    # a file whose content does not match its name
    bad = root / "pdfs" / ("1" * 40 + ".pdf")
    bad.write_bytes(b"%PDF other")
    with open(root / "subset.csv", "a") as f:
        f.write("1" * 40 + ",Mismatch plc,GBP,X\n")
    with pytest.raises(DatasetError) as e:
        load_dataset(root)
    msg = str(e.value)
    assert "subset.csv:4: duplicated sha1 " + sha in msg
    assert "subset.csv:5: listed PDF" in msg and "is absent" in msg
    assert "does not match its name" in msg and "1111111111" in msg
    assert "questions.json[0]: unknown answer kind 'essay'" in msg


def test_missing_column(tmp_path):
    root = _make(tmp_path)
    (root / "subset.csv").write_text("sha1,company\nabc,X\n")
    with pytest.raises(DatasetError, match=r"subset.csv:1: missing column\(s\) company_name, cur"):
        load_dataset(root)


@pytest.mark.reliability
def test_missing_files_and_bad_json(tmp_path):
    root = _make(tmp_path)
    (root / "questions.json").write_text("[{")
    (root / "answers.json").write_text("{}")
    with pytest.raises(DatasetError, match="questions.json:1: not valid JSON"):
        load_dataset(root)
    with pytest.raises(DatasetError, match="not a directory"):
        load_dataset(tmp_path / "nope")


@pytest.mark.skipif(not SHARED_DEV.exists(), reason="../shared/erc2-dev not present")
def test_erc2_dev_loads():
    ds = load_dataset(SHARED_DEV)
    assert len(ds.reports) == 13 and len(ds.questions) == 22 and len(ds.gold) == 22


@pytest.mark.reliability
def test_shifted_columns_currency_and_question_problems(tmp_path):
    root = _make(tmp_path, questions=[{"text": 7, "kind": "number"},
                                      {"text": "Did Company 0 Inc. pay a dividend?", "kind": "boolean"},
                                      {"text": "Did  Company 0 Inc. pay a dividend?", "kind": "boolean"}])
    data = b"%PDF-1.4 comma"
    sha = hashlib.sha1(data).hexdigest()
    (root / "pdfs" / f"{sha}.pdf").write_bytes(data)
    data2 = b"%PDF-1.4 cur"
    sha2 = hashlib.sha1(data2).hexdigest()
    (root / "pdfs" / f"{sha2}.pdf").write_bytes(data2)
    with open(root / "subset.csv", "a") as f:
        f.write(f"{sha},Northwind Logistics, Inc.,USD,Tech\n")  # row 4: unquoted comma
        f.write(f"{sha2},Aurelia AG,EUO,Pharma\n")  # row 5: three letters, but no ISO code
    with pytest.raises(DatasetError) as e:
        load_dataset(root)
    msg = str(e.value)
    assert "subset.csv:4: 5 fields, the header has 4" in msg
    assert "subset.csv:5: currency 'EUO' is not an ISO 4217 code" in msg
    assert "questions.json[0]: 'text' must be a string (got int)" in msg
    assert "questions.json[2]: duplicate of question [1]" in msg


@pytest.mark.reliability
def test_no_questions_and_unlisted_pdfs(tmp_path):
    empty = load_dataset(_make(tmp_path, questions=[]))
    assert empty.questions == () and "no questions" in empty.warnings[-1]
    root = _make(tmp_path / "b")
    (root / "pdfs" / ("2" * 40 + ".pdf")).write_bytes(b"%PDF extra")
    ds = load_dataset(root)
    assert len(ds.warnings) == 1 and "1 PDF(s) not listed in subset.csv" in ds.warnings[0] and "2222" in ds.warnings[0]
    ds2 = load_dataset(_make(tmp_path / "c"))
    assert ds2.warnings == () and ds2.reports[0].currency == "USD"


def test_filing_columns_and_file_name(tmp_path):
    """period / doc_type / file are optional; file names a PDF kept under another name (pdf_dirs.txt)."""
    root = tmp_path / "ds"
    shared = tmp_path / "shared"
    shared.mkdir()
    root.mkdir()
    data = b"%PDF-1.4 filing"
    sha = hashlib.sha1(data).hexdigest()
    (shared / "ACME_2018_10K.pdf").write_bytes(data)
    (root / "pdf_dirs.txt").write_text("../shared\n")
    (root / "subset.csv").write_text("sha1,company_name,cur,period,doc_type,file\n"
                                     f"{sha},Acme,USD,2018,10k,ACME_2018_10K.pdf\n")
    (root / "questions.json").write_text(json.dumps([{"text": "Why did Acme's margin change?", "kind": "text"}]))
    ds = load_dataset(root)
    r = ds.reports[0]
    assert (r.period, r.doc_type, r.pdf.name, r.filing) == ("2018", "10-K", "ACME_2018_10K.pdf", "Acme 10-K 2018")
    assert ds.questions[0].kind == "text"
    (root / "subset.csv").write_text("sha1,company_name,cur,period,doc_type,file\n"
                                     f"{sha},Acme,USD,FY18,proxy,../x.pdf\n")
    with pytest.raises(DatasetError) as e:
        load_dataset(root)
    msg = str(e.value)
    assert "period 'FY18'" in msg and "doc_type 'proxy'" in msg and "not a path" in msg


def test_erc_subset_without_filing_columns_loads(tmp_path):
    ds = load_dataset(_make(tmp_path))
    assert all(r.period == "" and r.doc_type == "" for r in ds.reports)
