"""Tests of rag.demo: deterministic, valid ERC layout, and a truth file that matches the PDFs' text."""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from rag import demo
from rag.core.dataset import KINDS, load_dataset


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return demo.generate(tmp_path_factory.mktemp("demo") / "demo")


@pytest.fixture(scope="module")
def truth(corpus) -> dict:
    return json.loads((corpus / demo.TRUTH_FILE).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def page_texts(corpus, truth) -> dict[str, list[str]]:
    """sha1 -> whitespace-normalised text of each page (index 0 = page 1)."""
    out = {}
    for r in truth["reports"]:
        pdf = pdfium.PdfDocument(corpus / "pdfs" / f"{r['sha1']}.pdf")
        try:
            out[r["sha1"]] = [_norm(pdf[i].get_textpage().get_text_range()) for i in range(len(pdf))]
        finally:
            pdf.close()
    return out


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def _all_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_two_generations_are_byte_identical(corpus, tmp_path):
    again = demo.generate(tmp_path / "again")
    assert _all_files(again) == _all_files(corpus)


def test_pdf_names_are_their_sha1(corpus, truth):
    pdfs = sorted((corpus / "pdfs").glob("*.pdf"))
    assert len(pdfs) == len(truth["reports"]) >= 3
    for p in pdfs:
        assert p.stem == hashlib.sha1(p.read_bytes()).hexdigest()


def test_generate_is_idempotent_and_repairs_tampering(tmp_path):
    out = demo.generate(tmp_path / "d")
    pdf = next((out / "pdfs").glob("*.pdf"))
    stamp = pdf.stat().st_mtime_ns
    demo.generate(out)
    assert pdf.stat().st_mtime_ns == stamp  # current: nothing rewritten
    (out / "questions.json").write_text("[]", encoding="utf-8")
    assert not demo.is_current(out)
    demo.generate(out)
    assert demo.is_current(out) and json.loads((out / "questions.json").read_text(encoding="utf-8"))
    assert not list(tmp_path.glob(".d.*"))  # no temp folder left behind
    (out / "labels.jsonl").write_text('{"qid": "q000"}\n', encoding="utf-8")  # hand labels: not ours
    assert demo.is_current(out)
    (out / "answers.json").write_text("{}", encoding="utf-8")
    demo.generate(out)
    assert demo.is_current(out) and (out / "labels.jsonl").read_text(encoding="utf-8") == '{"qid": "q000"}\n'


def test_an_edit_to_any_content_module_makes_the_corpus_stale(tmp_path, monkeypatch):
    """The content is a package (one module per company): editing any of its modules, not only its
    __init__, must change the generator hash that decides whether data/demo is regenerated."""
    import shutil

    pkg = Path(demo.content.__file__).parent
    copy = tmp_path / "demo_content"
    shutil.copytree(pkg, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(demo.content, "__file__", str(copy / "__init__.py"))
    before = demo._generator_hash()
    assert demo._generator_hash() == before
    for module in sorted(p.name for p in pkg.glob("*.py") if p.name != "__init__.py"):
        text = (copy / module).read_text(encoding="utf-8")
        (copy / module).write_text(text + "\n# edited\n", encoding="utf-8")
        assert demo._generator_hash() != before, f"{module} is not part of the generator hash"
        (copy / module).write_text(text, encoding="utf-8")


def test_refuses_to_replace_a_foreign_folder(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(demo.DemoError, match="not a demo corpus"):
        demo.generate(tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


def test_cli_writes_the_corpus(tmp_path, capsys):
    assert demo.main(["--out", str(tmp_path / "cli")]) == 0
    assert "demo corpus in" in capsys.readouterr().out
    load_dataset(tmp_path / "cli")


def test_dataset_validates_with_every_kind_and_gold(corpus):
    ds = load_dataset(corpus)
    assert {r.currency for r in ds.reports} >= {"USD", "EUR", "GBP", "JPY"}
    assert any(r.company.startswith("The ") for r in ds.reports)
    # every ERC kind; "text" (issue 31's open questions, FinanceBench's kind) has no ERC template
    assert {q.kind for q in ds.questions} == set(KINDS) - {"text"}
    assert 8 <= len(ds.questions) <= 12  # the answering stage is slow on CPU: keep the set small
    n_pages = {r.sha1: len(pdfium.PdfDocument(r.pdf)) for r in ds.reports}
    for q in ds.questions:
        g = ds.gold[q.text]
        assert g.kind == q.kind and g.answers
        if g.answers == ("N/A",):
            assert g.pools == ()
        else:
            assert g.pools, q.text
        for pool in g.pools:
            for ref in pool:
                assert 1 <= ref.page <= n_pages[ref.sha1]
    booleans = {ds.gold[q.text].answers[0] for q in ds.questions if q.kind == "boolean"}
    assert booleans == {"True", "False"}
    comparative = [q for q in ds.questions if q.kind == "comparative"]
    for q in comparative:  # one pool per company named in the question, gold is one of them
        named = [r.company for r in ds.reports if f'"{r.company}"' in q.text]
        g = ds.gold[q.text]
        assert len(g.pools) == len(named) and g.answers[0] in named


def test_answers_json_uses_zero_based_page_index(corpus, truth):
    raw = json.loads((corpus / "answers.json").read_text(encoding="utf-8"))
    pages = {(r["sha1"], s["page"]) for r in truth["reports"] for s in r["sentences"]}
    pages |= {(r["sha1"], t["page"]) for r in truth["reports"] for t in r["tables"]}
    for g in raw.values():
        for pool in g["reference_pools"]:
            for ref in pool:
                sha1, idx = ref.split(":")
                assert (sha1, int(idx) + 1) in pages  # 0-based in the file, 1-based in the truth


def test_every_table_cell_is_printed_on_its_page(truth, page_texts):
    n_tables = 0
    for r in truth["reports"]:
        for t in r["tables"]:
            text = page_texts[r["sha1"]][t["page"] - 1]
            if t["title"] is not None:
                assert _norm(t["title"]) in text and _norm(t["unit"]) in text
            else:
                assert t["continued"] and t["header_rows"] == 0
            for row in t["cells"]:
                line = " ".join(c for c in row if c)
                assert line in text, f"{t['table_id']} p{t['page']}: {line!r}"
            n_tables += 1
    assert n_tables >= 8


def test_split_table_rows_are_on_the_pages_the_truth_says(truth, page_texts):
    split = [(r, t) for r in truth["reports"] for t in r["tables"] if t["parts"] > 1]
    assert split, "the corpus must contain a table that spans a page break"
    for r, t in split:
        other = t["page"] + (1 if t["part"] == 1 else -1)
        other_text = page_texts[r["sha1"]][other - 1]
        for row in t["cells"][t["header_rows"]:]:
            if any(c and c[0].isdigit() or c.startswith("(") for c in row[1:]):
                assert " ".join(c for c in row if c) not in other_text, (t["table_id"], row)
        if t["continued"] and t["header_rows"]:
            assert t["title"].endswith("(continued)")
    assert {t["header_rows"] for _, t in split if t["continued"]} == {0, 1}  # repeated and not repeated


def test_parenthesised_negatives_and_units_present(truth):
    cells = [c for r in truth["reports"] for t in r["tables"] for row in t["cells"] for c in row]
    assert any(re.fullmatch(r"\([\d,.]+\)", c) for c in cells)
    units = {t["unit"] for r in truth["reports"] for t in r["tables"] if t["unit"]}  # some tables state no unit
    assert any("thousands" in u for u in units) and any("millions" in u for u in units)
    assert any("\u20ac" in u for u in units)


def test_known_sentences_are_on_their_page(truth, page_texts):
    n = 0
    for r in truth["reports"]:
        texts = page_texts[r["sha1"]]
        assert len(texts) == r["pages"]
        for s in r["texts"]:
            assert _norm(s["text"]) in texts[s["page"] - 1], (r["company"], s)
        for s in r["sentences"]:
            hits = [i + 1 for i, t in enumerate(texts) if _norm(s["text"]) in t]
            assert s["page"] in hits, (s, hits)
            if s["kind"] == "paragraph":  # a fact sentence is printed once: its page is THE page
                assert hits == [s["page"]], (s, hits)
            n += 1
        for i, t in enumerate(texts[1:], 2):  # running header on every page but the cover
            assert t.startswith(r["running_header"]), (r["company"], i)
    assert n >= 15
