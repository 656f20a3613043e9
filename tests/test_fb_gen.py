"""data/fb-gen: FinanceBench's domain templates asked of the tuning half's filings, gold written by hand. The set
stays tuning-only, the imported files stay what its source gives, and a printed gold figure is on its pages."""
from __future__ import annotations

import csv
import json
import re

import pytest

from rag.core.config import PROJECT_ROOT
from rag.core.pdf import pdf_page_texts
from rag.importers.fb_questions import map_question

GEN = PROJECT_ROOT / "data" / "fb-gen"
SHARED = PROJECT_ROOT.parent / "shared" / "financebench-dev"
needs_shared = pytest.mark.skipif(not (SHARED / "pdfs").is_dir(), reason="needs ../shared/financebench-dev")


def _source() -> list[dict]:
    return [json.loads(line) for line in (GEN / "source" / "questions.jsonl").read_text().splitlines() if line]


def test_every_question_is_about_a_tuning_half_company():
    split = json.loads((PROJECT_ROOT / "data" / "splits.json").read_text())["financebench"]
    assert {q["company"] for q in _source()} <= set(split["tuning"])
    assert not {q["company"] for q in _source()} & set(split["report"])


def test_the_imported_files_are_the_source_mapped_and_fb_dev_s_filings():
    with open(GEN / "subset.csv", newline="", encoding="utf-8") as f:
        sha1_by_doc = {r["file"].removesuffix(".pdf"): r["sha1"] for r in csv.DictReader(f)}
    mapped = [map_question(q, sha1_by_doc) for q in _source()]
    assert json.loads((GEN / "questions.json").read_text()) == [m.question_json(sha1_by_doc) for m in mapped]
    assert json.loads((GEN / "answers.json").read_text()) == {m.text: m.gold_json() for m in mapped}
    assert (GEN / "subset.csv").read_text() == (PROJECT_ROOT / "data" / "fb-dev" / "subset.csv").read_text()


@needs_shared
def test_every_figure_the_gold_quotes_is_printed_on_an_evidence_page():
    """Figures as the gold writes them (5,591; 17.8%; 0.950%), except the computed ones the README names (dg03's and dg14's
    margins, Amazon's tax rates, "about"), found in pdfium's text of the evidence pages; for a computed metric the
    operands its justification quotes."""
    bad = []
    for q in _source():
        if q["domain_question_num"] in ("dg03", "dg14") or "about" in q["answer"]:
            continue
        pages = dict(pdf_page_texts(SHARED / "pdfs" / f"{q['doc_name']}.pdf",
                                    [e["evidence_page_num"] + 1 for e in q["evidence"]]))
        text = " ".join(" ".join(t.split()) for t in pages.values())
        # a computed metric's gold is arithmetic: its justification's operands are the printed figures
        quoted = q["justification"] if q["question_type"] == "metrics-generated" else q["answer"]
        for fig in re.findall(r"\d[\d,]*\.\d+|\d{1,3}(?:,\d{3})+", quoted):
            if fig not in text and not quoted.count(f"{fig} percentage"):  # a difference is computed
                bad.append(f"{q['financebench_id']}: {fig}")
    assert not bad, bad
