"""FinanceBench importer (rag.importers.financebench) and scorer (rag.evaluate.financebench) on a tiny
folder in the benchmark's layout (fake PDFs: the importer only hashes them)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.cli import main as rag_main
from rag.core.dataset import load_dataset
from rag.core.records import CandidatePage, RetrievalRecord, RoutedReport
from rag.evaluate.financebench import (append_verdict, hand_verdicts, judge_number, judge_yes_no, routing_accuracy,
                                       score_run, verdict)
from rag.importers.fb_questions import asked_unit, map_question
from rag.importers.financebench import FinanceBenchError, import_financebench

DOCS = [{"doc_name": "ACME_2018_10K", "company": "Acme", "doc_type": "10k", "doc_period": 2018, "gics_sector": "Industrials"},
        {"doc_name": "ACME_2022_10K", "company": "Acme", "doc_type": "10k", "doc_period": 2022},
        {"doc_name": "ACME_2023Q2_10Q", "company": "Acme", "doc_type": "10q", "doc_period": 2023},
        {"doc_name": "ACME_2023_8K_dated-2023-05-05", "company": "Acme", "doc_type": "8k", "doc_period": 2023},
        {"doc_name": "OTHER_2020_10K", "company": "Other", "doc_type": "10k", "doc_period": 2020}]
QS = [{"financebench_id": "id1", "company": "Acme", "doc_name": "ACME_2018_10K", "question_type": "metrics-generated",
       "question": "What is the FY2018 capital expenditure amount (in USD millions) for Acme?", "answer": "$1577.00",
       "evidence": [{"doc_name": "ACME_2018_10K", "evidence_page_num": 59, "evidence_text": "..."}]},
      {"financebench_id": "id2", "company": "Acme", "doc_name": "ACME_2022_10K", "question_type": "domain-relevant",
       "question": "Is Acme a capital-intensive business based on FY2022 data?", "answer": "No, the company is asset light.",
       "evidence": [{"doc_name": "ACME_2022_10K", "evidence_page_num": 47}, {"doc_name": "ACME_2022_10K", "evidence_page_num": 49}]},
      {"financebench_id": "id3", "company": "Acme", "doc_name": "ACME_2023Q2_10Q", "question_type": "novel-generated",
       "question": "As of Q2'2023, what drove Acme's margin?", "answer": "Pricing.",
       "evidence": [{"doc_name": "ACME_2023Q2_10Q", "evidence_page_num": 3}]},
      {"financebench_id": "id4", "company": "Other", "doc_name": "OTHER_2020_10K", "question_type": "metrics-generated",
       "question": "What is Other's FY2020 revenue growth (in units of percents)?", "answer": "30.8%", "evidence": []}]


def _bench(tmp_path: Path, qs=QS, docs=DOCS) -> Path:
    src = tmp_path / "fb"
    (src / "data").mkdir(parents=True)
    (src / "pdfs").mkdir()
    (src / "data" / "financebench_open_source.jsonl").write_text("".join(json.dumps(q) + "\n" for q in qs))
    (src / "data" / "financebench_document_information.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    for d in docs:
        (src / "pdfs" / f"{d['doc_name']}.pdf").write_bytes(f"%PDF-1.4 {d['doc_name']}".encode())
    return src


def test_import_writes_a_loadable_dataset_without_copying_pdfs(tmp_path, capsys):
    src = _bench(tmp_path)
    out = tmp_path / "data" / "fb"
    assert rag_main(["import", "financebench", str(src), "--out", str(out)]) == 0
    assert "4 questions (number 2, yes/no 1, text 1), 5 filings of 2 companies" in capsys.readouterr().out
    assert not (out / "pdfs").exists()
    ds = load_dataset(out)  # sha1 of every PDF checked through pdf_dirs.txt + file
    by_name = {r.pdf.stem: r for r in ds.reports}
    assert (by_name["ACME_2023Q2_10Q"].period, by_name["ACME_2023Q2_10Q"].doc_type) == ("2023Q2", "10-Q")
    assert by_name["ACME_2023_8K_dated-2023-05-05"].period == "2023-05-05"
    assert [q.kind for q in ds.questions] == ["number", "boolean", "text", "number"]
    g = ds.gold[QS[1]["question"]]
    assert g.answers == ("False",) and [[p.page for p in pool] for pool in g.pools] == [[48], [50]]  # 0-based +1
    assert ds.gold[QS[0]["question"]].answers == ("1577.00",)
    meta = [json.loads(x) for x in (out / "financebench.jsonl").read_text().splitlines()]
    assert meta[0]["unit"] == "USD millions" and meta[3]["unit"] == "percent" and meta[3]["decimals"] == 1
    # the dataset's own default: FinanceBench's gold for an unprinted margin is the computed value
    from rag.core.config import load_config

    assert load_config("offline").answer.computed_figures is False  # the preset's (ERC: N/A)
    assert load_config("offline", data_dir=str(out)).answer.computed_figures is True
    fb = load_config("offline", data_dir=str(out)).answer  # no N/A gold: numbers matched by meaning, any probability
    assert (fb.metric_choice, fb.metric_choice_min_p) == (True, 0.0)
    assert load_config("offline", {"answer.computed_figures": False}, data_dir=str(out)).answer.computed_figures is False
    # a second import into the same folder is refused; a missing asked-about PDF is named
    with pytest.raises(FinanceBenchError, match="not an empty folder"):
        import_financebench(src, out)
    (src / "pdfs" / "ACME_2018_10K.pdf").unlink()
    with pytest.raises(FinanceBenchError, match="ACME_2018_10K.pdf: missing"):
        import_financebench(src, tmp_path / "other")
    assert not (tmp_path / "other").exists()


def test_company_filter_and_bad_lines(tmp_path):
    src = _bench(tmp_path)
    res = import_financebench(src, tmp_path / "o", companies=["other"])
    assert (res.questions, res.filings) == (1, 1)
    (src / "data" / "financebench_open_source.jsonl").write_text("{not json\n")
    with pytest.raises(FinanceBenchError, match=r"financebench_open_source.jsonl:1: not valid JSON"):
        import_financebench(src, tmp_path / "p")


@pytest.mark.reliability
def test_every_problem_of_the_folder_is_named_at_once(tmp_path):
    """A bad jsonl line and a missing PDF were reported one per try (fix one, run again, meet the next)."""
    src = _bench(tmp_path)
    lines = (src / "data" / "financebench_open_source.jsonl").read_text().splitlines()
    (src / "data" / "financebench_open_source.jsonl").write_text("\n".join(["{not json", *lines]) + "\n")
    (src / "pdfs" / "ACME_2022_10K.pdf").unlink()
    with pytest.raises(FinanceBenchError) as e:
        import_financebench(src, tmp_path / "o")
    assert "financebench_open_source.jsonl:1: not valid JSON" in str(e.value)
    assert "ACME_2022_10K.pdf: missing (a question is asked about it)" in str(e.value)
    assert len(e.value.problems) == 2


def test_map_question_is_pure():
    m = map_question(QS[0], {"ACME_2018_10K": "abc"})
    assert (m.kind, m.form, m.answers, m.pools) == ("number", "number", ("1577.00",), (("abc:59",),))
    assert map_question(QS[0], {}).meta["evidence_dropped"] == 1
    assert asked_unit("in USD billions") == "USD billions" and asked_unit("ratio, two decimals") == ""


def test_number_yes_no_and_text_verdicts(tmp_path):
    assert judge_number(1_577_000_000, "1577.00", "USD millions", 2)  # the pipeline's USD value
    assert judge_number(-1577.0, "1577.00", "USD millions", 2)  # sign not judged
    assert judge_number(0.308, "30.8", "percent", 1) and judge_number(30.84, "30.8", "percent", 1)
    assert judge_number(0.0123, "0.01", "", 2)  # rounds to the gold's decimals
    assert not judge_number(1.6e9, "1577.00", "USD millions", 2) and not judge_number("N/A", "1", "", 0)
    assert judge_yes_no(False, "False") and judge_yes_no("No. It is asset light.", "False")
    assert not judge_yes_no("Maybe", "True")
    text = {"form": "text"}
    assert verdict("N/A", text, "x") == "refusal" and verdict("Pricing", text, "x") == "unjudged"
    assert verdict("Pricing", text, "x", "correct") == "correct"
    labels = tmp_path / "labels.jsonl"
    append_verdict(labels, "Q?", "Pricing", "incorrect")
    append_verdict(labels, "Q?", "Pricing", "correct")
    assert hand_verdicts(labels) == {"Q?": "correct"}
    # a verdict judges one answer: a rerun answering differently is unjudged again, never scored by it
    assert hand_verdicts(labels, {"Q?": "Pricing"}) == {"Q?": "correct"}
    assert hand_verdicts(labels, {"Q?": " Pricing\n"}) == {"Q?": "correct"}  # whitespace aside
    assert hand_verdicts(labels, {"Q?": "Volume"}) == {} and hand_verdicts(labels, {}) == {}
    # verdicts on two runs' answers to one question both stay usable: each run is scored by its own answer's
    append_verdict(labels, "Q?", "Volume", "incorrect")
    assert hand_verdicts(labels) == {"Q?": "incorrect"}
    assert hand_verdicts(labels, {"Q?": "Pricing"}) == {"Q?": "correct"}
    assert hand_verdicts(labels, {"Q?": "Volume"}) == {"Q?": "incorrect"}
    with pytest.raises(ValueError):
        append_verdict(labels, "Q?", "x", "maybe")


def test_score_run_filing_and_evidence(tmp_path):
    out = tmp_path / "ds"
    import_financebench(_bench(tmp_path), out)
    ds = load_dataset(out, check_hashes=False)
    acc = routing_accuracy(ds)
    assert (acc["right"], acc["questions"]) == (4, 4), acc["misses"]
    s18 = {r.pdf.stem: r.sha1 for r in ds.reports}["ACME_2018_10K"]
    q0 = ds.questions[0]
    rec = RetrievalRecord(qid=q0.qid, question=q0.text, kind="number",
                          routed=[RoutedReport(sha1=s18, company="Acme", why="FY2018 named")],
                          candidates={s18: [CandidatePage(sha1=s18, page=p, text="", scores={"final": 1.0 / i})
                                            for i, p in enumerate([10, 20, 60, 61], 1)]}, seconds=2.0)
    sub = {q0.text: {"value": 1_577_000_000.0}, ds.questions[1].text: {"value": True}}
    per_q, summary = score_run(ds, sub, {q0.qid: rec})
    row = per_q.set_index("financebench_id").loc["id1"]
    assert row["verdict"] == "correct" and row["right_filing"] and row["evidence_hit@5"] == 1.0 and row["evidence_hit@1"] == 0.0
    assert per_q.set_index("financebench_id").loc["id2", "verdict"] == "incorrect"
    assert summary["totals"]["correct"] == 1 and {r["form"] for r in summary["by_form"]} == {"number", "yes/no", "text"}


def test_verdict_widget_records_hand_verdicts_and_reopens_where_it_stopped(tmp_path, make_cfg, demo_dir):
    """08_label's buttons on the text answers: a click appends a verdict line (the last one counts) and moves
    on; a new widget opens at the first question without one; 07's verdict() reads them."""
    from rag.answer import submission_path
    from rag.evaluate.financebench import load_meta, text_verdicts_table
    from rag.views.widgets.verdict_widget import verdict_widget

    out = tmp_path / "ds"
    import_financebench(_bench(tmp_path, qs=QS + [{**QS[2], "financebench_id": "id5", "question": "As of Q2'2023, why did Acme's costs rise?", "answer": "Freight."}]), out)
    ds = load_dataset(out, check_hashes=False)
    cfg = make_cfg(out, run="fbw")
    texts = [q.text for q in ds.questions if q.kind == "text"]
    assert len(texts) == 2
    sub = submission_path(cfg)
    sub.parent.mkdir(parents=True)
    sub.write_text(json.dumps({"answers": [{"question_text": t, "kind": "text", "value": f"answer {i}",
                                            "references": []} for i, t in enumerate(texts)]}))
    labels = out / "labels.jsonl"
    w = verdict_widget(cfg, ds, labeller="ann")
    assert w._state["i"] == 0
    w._buttons["Incorrect"].click()
    w._buttons["Back"].click()
    w._buttons["Correct"].click()  # changed mind: the last line counts
    assert w._state["i"] == 1 and hand_verdicts(labels) == {texts[0]: "correct"}
    assert len(labels.read_text().splitlines()) == 2
    again = verdict_widget(cfg, ds)
    assert again._state["i"] == 1  # the first unjudged
    again._buttons["Refusal"].click()
    assert hand_verdicts(labels) == {texts[0]: "correct", texts[1]: "refusal"}
    table = text_verdicts_table(cfg, ds).set_index("question")
    assert table.loc[texts[1], "verdict"] == "refusal" and table.loc[texts[0], "answer"] == "answer 0"
    meta = load_meta(ds)
    assert verdict("answer 0", meta[texts[0]], "Pricing.", hand_verdicts(labels)[texts[0]]) == "correct"
    # an ERC dataset has no text verdicts to give
    assert verdict_widget(make_cfg(demo_dir, run="erc"), load_dataset(demo_dir)) is None
