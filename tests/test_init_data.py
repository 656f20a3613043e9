"""``rag init`` (rag.init_data): a dataset folder from a folder of PDFs, on tiny PDFs drawn here."""
from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pytest

from rag.core.dataset import DatasetError, load_dataset
from rag.demo_pdf import render_report
from rag.init_data import InitError, init_dataset, main
from rag.clean.currency import guess_currency
from rag.init_guess import guess_company, page_texts


def _pdf(folder: Path, file: str, name: str, money: str = "€12.5 million", year: int = 2024) -> Path:
    """A two-page report: a cover with the company's name, then a page of text naming it again."""
    company = dict(key=file, name=name, header=f"{name} | Annual Report {year}", pages=[
        [("cover", name, f"Annual Report {year}")],
        [("h1", "Financial review"),
         ("p", f"{name} (the \u201cCompany\u201d) reported revenue of {money} for {year}, up from {money} "
               "a year earlier. The Company remains focused on its customers.")]])
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / file
    path.write_bytes(render_report(company)[0])
    return path


def _sha1(path: Path) -> str:
    return hashlib.sha1(path.read_bytes()).hexdigest()


@pytest.fixture
def src(tmp_path) -> Path:
    folder = tmp_path / "reports"
    _pdf(folder, "zephyr.pdf", "Zephyr Widgets S.p.A.")
    _pdf(folder, "kestrel.PDF", "Kestrel Mining Ltd", money="A$8.1 million")
    (folder / "notes.txt").write_text("not a report")
    return folder


def test_copies_pdfs_by_sha1_and_the_dataset_loads(src, tmp_path):
    out = tmp_path / "data" / "mine"
    res = init_dataset(out, src)
    assert sorted(p.name for p in (out / "pdfs").iterdir()) == sorted(
        f"{_sha1(p)}.pdf" for p in src.iterdir() if p.suffix.lower() == ".pdf")
    assert not any(p.is_symlink() for p in (out / "pdfs").iterdir())
    ds = load_dataset(out)  # the real loader, hashes checked
    got = {r.company: r.currency for r in ds.reports}
    assert got == {"Kestrel Mining Ltd": "AUD", "Zephyr Widgets S.p.A.": "EUR"}
    assert {r.file for r in res.rows} == {"zephyr.pdf", "kestrel.PDF"} and res.warnings == ()
    assert [q.kind for q in ds.questions] == ["number", "boolean", "name", "comparative"]
    raw = json.loads((out / "questions.json").read_text())
    assert all("EXAMPLE" in q["note"] for q in raw)
    assert ds.warnings == ()  # no unlisted PDF, questions present
    with open(out / "subset.csv", newline="") as f:
        assert csv.DictReader(f).fieldnames == ["sha1", "company_name", "cur", "major_industry", "period", "doc_type",
                                                 "aliases"]
    assert not list(tmp_path.glob("data/.mine.init-*"))  # the temporary folder was renamed into place


def test_link_makes_absolute_symlinks_and_an_empty_folder_is_filled(src, tmp_path):
    out = tmp_path / "linked"
    out.mkdir()
    init_dataset(out, src, link=True)
    links = list((out / "pdfs").iterdir())
    assert len(links) == 2 and all(p.is_symlink() and Path(p.readlink()).is_absolute() for p in links)
    assert {p.resolve().parent for p in links} == {src.resolve()}
    assert len(load_dataset(out).reports) == 2


def test_refuses_to_overwrite_a_non_empty_folder(src, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "subset.csv").write_text("mine")
    with pytest.raises(DatasetError, match="refusing to overwrite"):
        init_dataset(out, src)
    assert [p.name for p in out.iterdir()] == ["subset.csv"] and (out / "subset.csv").read_text() == "mine"


@pytest.mark.reliability
def test_a_corrupt_or_empty_pdf_is_carried_through_with_a_warning_as_rag_run_does(src, tmp_path):
    """A PDF pdfium cannot open (garbage, or 0 pages) beside readable ones: listed with a warning naming the
    file and the problem (rag run then fails it in 01 and goes on), not the whole folder refused."""
    (src / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not really a PDF\n")
    import pypdfium2 as pdfium

    pdfium.PdfDocument.new().save(str(src / "empty.pdf"))  # 0 pages
    out = tmp_path / "data" / "mine"
    res = init_dataset(out, src)
    assert {r.file for r in res.rows} == {"zephyr.pdf", "kestrel.PDF", "broken.pdf", "empty.pdf"}
    warned = [w for w in res.warnings if "not a readable PDF" in w]
    assert len(warned) == 2 and any(str(src / "broken.pdf") in w for w in warned)
    assert any(str(src / "empty.pdf") in w for w in warned) and all("stage 01 will fail it" in w for w in warned)
    assert len(load_dataset(out).reports) == 4


def test_a_folder_of_unreadable_pdfs_is_named_and_nothing_is_written(tmp_path):
    src = tmp_path / "reports"
    src.mkdir()
    (src / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not really a PDF\n")
    out = tmp_path / "data" / "mine"
    with pytest.raises(DatasetError) as e:
        init_dataset(out, src)
    msg = str(e.value)
    assert str(src / "broken.pdf") in msg and "not a readable PDF" in msg and "\n" not in msg
    assert not (tmp_path / "data").exists()  # not even the parent: every PDF is read before writing


def test_duplicate_files_become_one_row_and_a_warning(src, tmp_path):
    (src / "zephyr2.pdf").write_bytes((src / "zephyr.pdf").read_bytes())
    res = init_dataset(tmp_path / "mine", src)
    assert len(res.rows) == 2
    assert any("zephyr2.pdf is the same file as zephyr.pdf" in w for w in res.warnings)
    assert len(load_dataset(tmp_path / "mine").reports) == 2


def test_an_empty_folder_or_a_missing_one_is_an_error(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "readme.txt").write_text("no reports here")
    with pytest.raises(InitError, match="no .pdf files"):
        init_dataset(tmp_path / "out", tmp_path / "empty")
    with pytest.raises(InitError, match="not a folder"):
        init_dataset(tmp_path / "out", tmp_path / "absent")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["Borealis Foods plc", "Acme Holdings, Inc.", "Nordlicht Energie AG",
                                  "The Harbour Group Limited", "Van Dijk Logistics N.V."])
def test_the_company_is_guessed_from_a_generated_title_page(tmp_path, name):
    assert guess_company(page_texts(_pdf(tmp_path, "r.pdf", name))) == name


def test_the_demo_corpus_guesses_match_its_subset(demo_dir):
    with open(demo_dir / "subset.csv", newline="") as f:
        for row in csv.DictReader(f):
            pages = page_texts(demo_dir / "pdfs" / f"{row['sha1']}.pdf")
            assert (guess_company(pages), guess_currency(pages)) == (row["company_name"], row["cur"])


def test_company_heuristics_on_text():
    cover_10k = ("FORM 10-K\nCommission File Number 001-1\nZORBEX THERAPEUTICS, INC.\n"
                 "(Exact name of registrant as specified in its charter)\nDelaware\n")
    later = "Zorbex Therapeutics, Inc. develops medicines. Patheon, Inc. supplies them.\n"
    assert guess_company([cover_10k, later, later]) == "Zorbex Therapeutics, Inc."  # mixed case preferred
    header = "Kelly Roads Holdings Limited 12\nThe Company and the Group grew.\nComputershare Pty Ltd\n"
    assert guess_company(["Annual Report 2023", header, header]) == "Kelly Roads Holdings Limited"
    assert guess_company(["The Company and the Group", ""]) is None


@pytest.mark.parametrize("text,cur", [
    ("The financial statements are presented in pounds sterling. Deals of US$5m and US$2m.", "GBP"),
    ("Revenue $12.1m, profit $3.4m. ABN 12 345 678 901, listed on the ASX.", "AUD"),
    ("Revenue $12.1m, profit $3.4m (in thousands, except per share data).", "USD"),
    ("Net sales ¥1,128 billion; operating profit ¥90 billion; dividends of ¥62 per share.", "JPY"),
    ("Revenue €4.2 million (2023: €3.9 million), a loan of CHF 2 million.", "EUR"),
    ("No amounts here.", None),
])
def test_currency_heuristics_on_text(text, cur):
    assert guess_currency([text]) == cur


def test_main_prints_the_table_and_the_next_command(src, tmp_path, capsys):
    out = tmp_path / "mine"
    assert main([str(out), "--pdfs", str(src)]) == 0
    text = capsys.readouterr().out
    assert "Zephyr Widgets S.p.A." in text and "EUR" in text and "kestrel.PDF" in text
    assert "subset.csv" in text and "questions.json" in text and f"--data {out}" in text and "rag ask" in text
