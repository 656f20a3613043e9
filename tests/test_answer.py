"""Stage 06: prompts, number rules, reference checks, comparative and long-context paths (FakeLLM),
plus one real run with the small local model on the demo corpus (marked ``llm``)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rag.answer.common import printed as nums
from rag.answer import comparison_direction, run_answer
from rag.core.artifacts import read_json, read_jsonl
from rag.core.stage import Stage
from rag.core.dataset import Dataset, Question, Report
from rag.models.base import FakeLLM, StructuredOutputError
from rag.answer.common.prompts import (PROMPTS_DIR, SCHEMAS, BooleanAnswer, NameAnswer, NamesAnswer, NumberAnswer,
                         build_messages, prompt_version)

A, B = "a" * 40, "b" * 40
COUNT = lambda t: len(t) // 4  # noqa: E731  deterministic token counter for logic tests

CASHFLOW = ("Consolidated Statements of Cash Flows\nvalues in thousands of USD\n| | 2023 | 2022 |\n"
            "| Net cash provided by operating activities | 406,100 | 350,200 |\n| Dividends per share | 0.27 | 0.25 |\n"
            "| Capital expenditures | (80,253) | (70,100) |")
PEOPLE = "Our people. We employ 1,200 staff. Joan Poe is our Chief Executive Officer."


def make_ds(questions: list[tuple[str, str]], currency: dict | None = None) -> Dataset:
    currency = currency or {}
    reports = (Report(sha1=A, company="Acme Corp", currency=currency.get(A, "USD"), pdf=Path("a.pdf")),
               Report(sha1=B, company="Beta Ltd", currency=currency.get(B, "USD"), pdf=Path("b.pdf")))
    qs = tuple(Question(qid=f"q{i:03d}", text=t, kind=k) for i, (t, k) in enumerate(questions))
    return Dataset(root=Path("."), name="unit", reports=reports, questions=qs, gold={})


def page(sha1: str, n: int, text: str, final: float) -> dict:
    return {"sha1": sha1, "page": n, "text": text, "scores": {"dense": final, "final": final}, "reason": ""}


def write_retrieval(cfg, qid: str, pages: list[dict], sha1s: list[str] | None = None, **extra) -> None:
    """A 05_retrieve record in rag.retrieve's shape (routed, candidates per report, sub_questions)."""
    sha1s = sha1s if sha1s is not None else list(dict.fromkeys(p["sha1"] for p in pages))
    names = {A: "Acme Corp", B: "Beta Ltd"}
    rec = {"qid": qid, "question": "", "kind": "", "routed": [{"sha1": s, "company": names[s]} for s in sha1s],
           "sub_questions": {}, "candidates": {s: [p for p in pages if p["sha1"] == s] for s in sha1s}, **extra}
    Stage(cfg, "05_retrieve").write_json(f"{qid}.json", rec)


def base(pages=(1,), summary="ok", step="brief") -> dict:
    return {"step_by_step_analysis": step, "reasoning_summary": summary, "relevant_pages": list(pages)}


def user_msg(messages) -> str:
    return messages[-1]["content"]


# ---- prompts ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["number", "name", "names", "boolean", "comparative"])
def test_messages_per_kind_and_version(kind, tmp_path):
    msgs = build_messages(kind, "=== Page 1 ===\nhello", "Q?")
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    kind_rules = (PROMPTS_DIR / "kinds" / f"{kind}.txt").read_text().strip()
    assert kind_rules in msgs[0]["content"] and "hello" in msgs[-1]["content"]
    SCHEMAS[kind].model_validate_json(msgs[2]["content"])  # the one-shot answer fits its schema
    v = prompt_version(kind)
    assert len(v) == 12 and v == prompt_version(kind)
    copy = tmp_path / "prompts"
    shutil.copytree(PROMPTS_DIR, copy)
    assert prompt_version(kind, copy) == v
    (copy / "kinds" / f"{kind}.txt").write_text(kind_rules + "\n- one more rule")
    assert prompt_version(kind, copy) != v


def test_prompt_versions_differ_by_kind():
    assert len({prompt_version(k) for k in SCHEMAS}) == len(SCHEMAS)


# ---- numbers ---------------------------------------------------------------------------------
@pytest.mark.parametrize("printed,value,percent", [
    ("(1,234.5)", -1234.5, False), ("12.5%", 12.5, True), ("-3,000", -3000, False),
    ("1.234,5", 1234.5, False), ("0.27", 0.27, False), ("(5)%", -5, True)])
def test_parse_printed(printed, value, percent):
    p = nums.parse_printed(printed)
    assert p.value == pytest.approx(value) and p.percent is percent


def test_parse_printed_na_and_words():
    assert nums.parse_printed("N/A") is None and nums.parse_printed("none found") is None
    p = nums.parse_printed("$1.2 billion")
    assert p.word_scale == 1_000_000_000 and p.currency == "$"


def test_units_and_currencies():
    s = nums.scale_from_text("(in thousands, except per share data)")
    assert s.factor == 1000 and "per share" in s.exceptions
    assert nums.scale_from_text("values in millions of EUR").currency == "EUR"
    assert nums.scale_from_text("Revenue grew in the year").factor is None
    assert nums.table_unit_for_value(CASHFLOW, "406,100").factor == 1000
    # the clean stage's table header line (rag.clean / rag.clean.units), a separator row, and a per-share row
    clean_md = ("# Financial statements\nSome text of 2023.\n\nTable: Consolidated Statements of Income — values in "
                "millions of EUR, except per share data (as printed: \"(in EUR millions, except per share)\")\n"
                "| | 2023 | 2022 |\n|---|---|---|\n| Revenue | 1,312.4 | 1,215.0 |\n| EPS | 1.25 | 1.10 |")
    u = nums.table_unit_for_value(clean_md, "1,312.4")
    assert (u.factor, u.currency, u.exceptions, u.where) == (1_000_000, "EUR", ("per share",), "table")
    # a unit phrase wrapped over two lines, the nearer one holding only a currency
    wrapped = ("Table: Cash flows — values in thousands of USD (as printed: \"in\nthousands; $40.42 million at year "
               "end (in\")\n|  | 2022 |\n|---|---|\n| Operating activities | $ 30,758 |")
    u = nums.table_unit_for_value(wrapped, "30,758")
    assert (u.factor, u.currency) == (1000, "USD")
    assert nums.table_unit_for_value("Revenue was $406.1 million.", "406.1").factor == 1_000_000
    assert nums.question_currency("Capital expenditures (in EUR) for X?") == "EUR"
    assert nums.question_currency("What is the number of patents?") is None
    assert nums.resolve_dollar("$", "AUD") == "AUD" and nums.resolve_dollar("$", "EUR") == "USD"


def test_scale_sanity():
    pages = {3: CASHFLOW}
    assert nums.scale_sanity(406_100_000, pages)["status"] == "ok"  # page says thousands
    assert nums.scale_sanity(406_100_000_000, pages)["status"] == "suspect"  # x1e6: no unit says so
    assert nums.scale_sanity(123.0, pages)["status"] == "no_match"


# ---- number end to end ---------------------------------------------------------------------------
def test_number_scale_applied_in_code_and_export(make_cfg):
    cfg = make_cfg(overrides={"answer.max_pages": 3, "answer.max_context_tokens": 2000})
    q = "What is the Cash flow from operations (in USD) for Acme Corp (within the last period)?"
    ds = make_ds([(q, "number")])
    write_retrieval(cfg, "q000", [page(A, 12, PEOPLE, 0.9), page(A, 40, CASHFLOW, 0.8)])

    def respond(messages, schema):
        assert schema is NumberAnswer and "=== Page 2 ===" in user_msg(messages)
        # the model copies the figure but misses the unit: code reads the table's unit line
        return {**base([2]), "value_as_printed": "406,100", "scale": "units", "currency": "USD"}

    llm = FakeLLM(respond)
    df = run_answer(cfg, ds, progress=False, llm=llm, counter=COUNT)
    assert df.loc[0, "value"] == 406_100_000 and len(llm.calls) == 1
    d = read_json(cfg.run_dir / "06_answer" / "debug" / "q000.json")
    assert d["interpretation"]["scale_source"] == "table unit" and d["sanity"]["status"] == "ok"
    assert d["prompt_version"] == {"number": prompt_version("number")}
    assert d["calls"][0]["raw"] and d["calls"][0]["repaired"] is False and d["usage"]["prompt_tokens"] > 0
    sub = json.loads((cfg.run_dir / "06_answer" / "submission.json").read_text())
    a = sub["answers"][0]
    assert a["value"] == 406_100_000.0 and a["references"] == [{"pdf_sha1": A, "page_index": 39}]
    rows = read_jsonl(cfg.run_dir / "06_answer" / "answers.jsonl")
    assert rows[0]["references"] == [{"sha1": A, "page": 40}]
    # a re-run with nothing changed makes no model call
    df2 = run_answer(cfg, ds, progress=False, llm=llm, counter=COUNT)
    assert len(llm.calls) == 1 and df2.loc[0, "status"] == "current"


def test_manifest_records_the_llama_server_logits_patch(make_cfg):
    """Issue 47: a refused logits patch is not silent: 06's manifest says what the server logged."""
    cfg = make_cfg()
    q = "What is the Cash flow from operations (in USD) for Acme Corp (within the last period)?"
    ds = make_ds([(q, "number")])
    write_retrieval(cfg, "q000", [page(A, 40, CASHFLOW, 0.8)])
    llm = FakeLLM(lambda m, s: {**base([1]), "value_as_printed": "406,100", "scale": "thousands", "currency": "USD"})
    run_answer(cfg, ds, progress=False, llm=llm, counter=COUNT)
    assert "llm_server" not in read_json(cfg.run_dir / "06_answer" / "manifest.json")  # no server, nothing said
    llm.server = type("Server", (), {"notes": {"logits_patch": "refused (version 9.9.9)"}})()
    run_answer(cfg, ds, progress=False, llm=llm, counter=COUNT)
    man = read_json(cfg.run_dir / "06_answer" / "manifest.json")
    assert man["llm_server"] == {"logits_patch": "refused (version 9.9.9)"}


def test_per_share_not_scaled_and_currency_mismatch(make_cfg):
    cfg = make_cfg()
    q1 = "What was the Dividend per share (in USD) for Acme Corp (within the last period)?"
    q2 = "What was the Capital expenditures (in EUR) for Acme Corp (within the last period)?"
    ds = make_ds([(q1, "number"), (q2, "number")])
    for qid in ("q000", "q001"):
        write_retrieval(cfg, qid, [page(A, 5, CASHFLOW, 0.9)])

    def respond(messages, schema):
        if "Dividend per share" in user_msg(messages):  # the question, not the page row
            return {**base([1]), "value_as_printed": "0.27", "scale": "thousands", "currency": "USD"}
        return {**base([1]), "value_as_printed": "(80,253)", "scale": "thousands", "currency": "EUR"}

    df = run_answer(cfg, ds, progress=False, llm=FakeLLM(respond), counter=COUNT)
    assert df.loc[0, "value"] == pytest.approx(0.27)
    assert df.loc[1, "value"] == "N/A" and "currency mismatch" in df.loc[1, "na_reason"]
    sub = json.loads((cfg.run_dir / "06_answer" / "submission.json").read_text())
    assert sub["answers"][1] == {"question_text": q2, "kind": "number", "value": "N/A", "references": []}


def test_percentage_kept_and_parentheses_negative(make_cfg):
    cfg = make_cfg()
    ds = make_ds([("What was the Gross margin (%) for Acme Corp?", "number"),
                  ("What was the Net income (in USD) for Acme Corp?", "number")])
    text = "values in millions of USD\n| Gross margin | 41.5% |\n| Net income | (12.3) |"
    for qid in ("q000", "q001"):
        write_retrieval(cfg, qid, [page(A, 2, text, 0.9)])

    def respond(messages, schema):
        if "margin" in user_msg(messages).split("QUESTION:")[-1]:
            return {**base([1]), "value_as_printed": "41.5%", "scale": "millions", "currency": "none"}
        return {**base([1]), "value_as_printed": "(12.3)", "scale": "millions", "currency": "USD"}

    df = run_answer(cfg, ds, progress=False, llm=FakeLLM(respond), counter=COUNT)
    assert df.loc[0, "value"] == pytest.approx(41.5) and df.loc[1, "value"] == pytest.approx(-12_300_000)


# ---- other kinds, references ---------------------------------------------------------------------
def test_name_names_boolean_prompt_selection_and_references(make_cfg):
    cfg = make_cfg(overrides={"answer.max_pages": 3, "answer.max_context_tokens": 2000,
                              "answer.pages_per_call": {"boolean": 0},  # one packed context per question
                              "answer.max_references": 1, "answer.fill_references": 1,
                              "answer.refs_for_false": True})
    ds = make_ds([("Who is the CEO of Acme Corp?", "name"),
                  ("Which leadership positions changed at Acme Corp?", "names"),
                  ("Did Acme Corp mention any mergers or acquisitions?", "boolean"),
                  ("Did Acme Corp announce a share buyback?", "boolean")])
    pages = [page(A, 7, PEOPLE, 0.9), page(A, 8, "The Chief Risk Officer resigned.", 0.5), page(A, 9, "Nothing.", 0.1)]
    for i in range(4):
        write_retrieval(cfg, f"q{i:03d}", pages)
    seen = {}

    def respond(messages, schema):
        q = user_msg(messages).split("QUESTION:")[-1]
        seen[q.strip()[:10]] = (schema, messages[0]["content"])
        if schema is NameAnswer:
            return {**base([9, 1]), "final_answer": "Joan Poe"}  # label 9 is not in the context
        if schema is NamesAnswer:
            return {**base([2, 1]), "final_answer": ["Chief Risk Officer", "Chief Risk Officer"]}
        if "mergers" in q:
            return {**base([]), "final_answer": True}  # no citation: filled from the top page
        return {**base([3]), "final_answer": False}

    df = run_answer(cfg, ds, progress=False, llm=FakeLLM(respond), counter=COUNT)
    assert seen["Who is the"][0] is NameAnswer and "one name" in seen["Who is the"][1]
    assert seen["Did Acme C"][0] is BooleanAnswer
    rows = {r["qid"]: r for r in read_jsonl(cfg.run_dir / "06_answer" / "answers.jsonl")}
    assert rows["q000"]["value"] == "Joan Poe" and rows["q000"]["references"] == [{"sha1": A, "page": 7}]
    assert rows["q001"]["value"] == ["Chief Risk Officer"]
    assert rows["q001"]["references"] == [{"sha1": A, "page": 8}]  # capped at max_references=1
    assert rows["q002"]["value"] is True and rows["q002"]["references"] == [{"sha1": A, "page": 7}]
    assert rows["q003"]["value"] is False and rows["q003"]["references"] == [{"sha1": A, "page": 9}]
    d = read_json(cfg.run_dir / "06_answer" / "debug" / "q000.json")
    assert d["calls"][0]["dropped_labels"] == [9]
    assert list(df["kind"]) == ["name", "names", "boolean", "boolean"]


def test_no_report_and_no_pages_skip_the_model(make_cfg):
    cfg = make_cfg()
    ds = make_ds([("What is the revenue of Unknown Co?", "number"), ("Did Unknown Co buy back shares?", "boolean")])
    write_retrieval(cfg, "q000", [], sha1s=[])
    write_retrieval(cfg, "q001", [], sha1s=[])
    llm = FakeLLM(lambda m, s: pytest.fail("no model call expected"))
    df = run_answer(cfg, ds, progress=False, llm=llm, counter=COUNT)
    assert list(df["na_reason"]) == ["no report routed"] * 2 and not llm.calls
    sub = json.loads((cfg.run_dir / "06_answer" / "submission.json").read_text())
    assert [a["value"] for a in sub["answers"]] == ["N/A", False]


def test_structured_output_error_becomes_na(make_cfg):
    cfg = make_cfg()
    ds = make_ds([("Who is the CEO of Acme Corp?", "name")])
    write_retrieval(cfg, "q000", [page(A, 1, PEOPLE, 1.0)])

    def respond(messages, schema):
        raise StructuredOutputError("bad json", raw="{not json")

    df = run_answer(cfg, ds, progress=False, llm=FakeLLM(respond), counter=COUNT)
    d = read_json(cfg.run_dir / "06_answer" / "debug" / "q000.json")
    assert df.loc[0, "value"] == "N/A" and d["calls"][0]["raw"] == "{not json" and d["repaired"]


# ---- long context --------------------------------------------------------------------------------
def test_long_context_parts_fused_in_rank_order(make_cfg):
    filler = " ".join(["word"] * 1200)  # ~1,500 tokens by the test counter: one page per part
    cfg = make_cfg(overrides={"answer.max_pages": 3, "answer.max_context_tokens": 1600})
    ds = make_ds([("What was the Net income (in USD) for Acme Corp?", "number"),
                  ("Which leadership positions changed at Acme Corp?", "names")])
    pages = [page(A, 1, "Nothing here. " + filler, 0.9), page(A, 2, "values in millions of USD\n| Net income | 7.5 |\n"
             "Tom Low became General Counsel. " + filler, 0.8), page(A, 3, "Ann Lee became CFO. " + filler, 0.7)]
    write_retrieval(cfg, "q000", pages)
    write_retrieval(cfg, "q001", pages)

    def respond(messages, schema):
        ctx = user_msg(messages)
        if schema is NamesAnswer:
            title = "General Counsel" if "Tom Low" in ctx else "CFO" if "Ann Lee" in ctx else None
            return {**base([1] if title else []), "final_answer": [title] if title else "N/A"}
        if "Net income |" in ctx:
            return {**base([1]), "value_as_printed": "7.5", "scale": "millions", "currency": "USD"}
        return {**base([]), "value_as_printed": "N/A", "scale": "units", "currency": "none"}

    llm = FakeLLM(respond)
    run_answer(cfg, ds, progress=False, llm=llm, counter=COUNT)
    num = read_json(cfg.run_dir / "06_answer" / "debug" / "q000.json")
    assert len(num["calls"]) == 2  # part 1 said N/A, part 2 answered, part 3 never asked (early stop)
    assert num["value"] == 7_500_000 and num["references"] == [{"sha1": A, "page": 2}]
    assert all(c["context_tokens"] <= 1600 for c in num["calls"])
    names = read_json(cfg.run_dir / "06_answer" / "debug" / "q001.json")
    assert len(names["calls"]) == 3 and names["value"] == ["General Counsel", "CFO"]
    assert names["references"] == [{"sha1": A, "page": 2}, {"sha1": A, "page": 3}]


# ---- comparative ---------------------------------------------------------------------------------
CMP_Q = 'Which of the companies had the highest total assets (in USD): "Acme Corp", "Beta Ltd"?'


def _cmp_llm(values: dict[str, str]):
    def respond(messages, schema):
        ctx = user_msg(messages)
        if schema is NumberAnswer:
            company = "Acme" if "Acme" in ctx else "Beta"
            return {**base([1]), "value_as_printed": values[company], "scale": "units", "currency": "USD"}
        return {**base([]), "final_answer": "Beta Ltd"}
    return FakeLLM(respond)


def test_comparative_from_retrieval_record_picks_in_code(make_cfg):
    cfg = make_cfg()
    ds = make_ds([(CMP_Q, "comparative")])
    tbl = "values in thousands of USD\n| Total assets | {} |"
    pages = [page(A, 3, "Acme " + tbl.format("900"), 0.9), page(B, 4, "Beta " + tbl.format("1,000"), 0.8)]
    write_retrieval(cfg, "q000", pages, sub_questions={A: "Total assets (in USD) of Acme Corp?",
                                                       B: "Total assets (in USD) of Beta Ltd?"})
    llm = _cmp_llm({"Acme": "900", "Beta": "1,000"})
    run_answer(cfg, ds, progress=False, llm=llm, counter=COUNT)
    d = read_json(cfg.run_dir / "06_answer" / "debug" / "q000.json")
    assert d["value"] == "Beta Ltd" and d["direction"] == "max" and d["pick_call"] is None
    assert [s["value"] for s in d["sub_answers"]] == [900_000, 1_000_000]
    assert all(s is NumberAnswer for _, s in llm.calls)
    assert d["references"] == [{"sha1": A, "page": 3}, {"sha1": B, "page": 4}]
    sub = json.loads((cfg.run_dir / "06_answer" / "submission.json").read_text())
    assert sub["answers"][0]["value"] == "Beta Ltd" and sub["answers"][0]["kind"] == "comparative"


def test_comparative_excludes_na_and_currency(make_cfg):
    cfg = make_cfg()
    ds = make_ds([(CMP_Q.replace("highest", "lowest"), "comparative")], currency={B: "EUR"})
    pages = [page(A, 2, "Acme total assets 500", 1.0), page(B, 2, "Beta total assets 400", 1.0)]
    write_retrieval(cfg, "q000", pages, sub_questions={A: "Total assets (in USD) of Acme Corp?",
                                                       B: "Total assets (in USD) of Beta Ltd?"})
    llm = _cmp_llm({"Acme": "500", "Beta": "400"})
    run_answer(cfg, ds, progress=False, llm=llm, counter=COUNT)
    d = read_json(cfg.run_dir / "06_answer" / "debug" / "q000.json")
    # Beta's figure is in EUR (report currency): N/A, excluded, so the lowest is Acme at 500
    assert [s["value"] for s in d["sub_answers"]] == [500, "N/A"] and d["value"] == "Acme Corp"
    assert d["references"] == [{"sha1": A, "page": 2}]


def test_comparative_without_sub_questions_says_rerun_05_and_never_searches(make_cfg, monkeypatch):
    """06 stays in its lane: a 05 record without sub-questions is an error naming 05, not a live search."""
    import rag.retrieve
    import rag.retrieve.search

    cfg = make_cfg()
    ds = make_ds([(CMP_Q, "comparative")])
    write_retrieval(cfg, "q000", [], sha1s=[A, B])
    searched = []
    for mod in (rag.retrieve, rag.retrieve.search):  # any search at all is a failure of this test
        monkeypatch.setattr(mod, "retrieve_pages", lambda *a, **k: searched.append(a) or [])
    monkeypatch.setattr(rag.retrieve.search, "search_chunks", lambda *a, **k: searched.append(a) or {})
    df = run_answer(cfg, ds, progress=False, llm=_cmp_llm({"Acme": "1", "Beta": "2"}), counter=COUNT)
    assert searched == []
    row = df.set_index("qid").loc["q000"]
    assert row["status"] == "failed" and row["value"] == "N/A" and "re-run stage 05_retrieve" in row["na_reason"]
    man = read_json(cfg.run_dir / "06_answer" / "manifest.json")
    assert man["counts"]["failed"] == 1 and "re-run stage 05_retrieve" in man["failures"]["q000"]


def test_comparative_prompt_when_direction_unclear(make_cfg):
    cfg = make_cfg(overrides={"answer.comparative_pick": "prompt"})
    ds = make_ds([(CMP_Q, "comparative")])
    pages = [page(A, 3, "Acme total assets 900", 0.9), page(B, 4, "Beta total assets 1,000", 0.8)]
    write_retrieval(cfg, "q000", pages, sub_questions={A: "Acme assets?", B: "Beta assets?"})
    llm = _cmp_llm({"Acme": "900", "Beta": "1,000"})
    run_answer(cfg, ds, progress=False, llm=llm, counter=COUNT)
    d = read_json(cfg.run_dir / "06_answer" / "debug" / "q000.json")
    assert d["value"] == "Beta Ltd" and d["pick_call"]["kind"] == "comparative"
    assert '"Acme Corp": 900' in user_msg(llm.calls[-1][0])


def test_comparison_direction():
    assert comparison_direction("Which company had the highest revenue?") == "max"
    assert comparison_direction("Which of the companies had the lowest debt?") == "min"
    assert comparison_direction("Which company is based in Paris?") is None


def test_missing_retrieval_is_a_clear_error(make_cfg):
    cfg = make_cfg()
    ds = make_ds([("Who is the CEO of Acme Corp?", "name")])
    Stage(cfg, "05_retrieve")
    with pytest.raises(FileNotFoundError, match="q000.json.*05_retrieve"):
        run_answer(cfg, ds, progress=False, llm=FakeLLM(lambda m, s: {}), counter=COUNT)


# ---- real small model on the demo corpus ------------------------------------------------------------
@pytest.mark.llm
def test_answer_real_small_model_on_demo(demo_dir, make_cfg):
    """Stages 01-05 for real on the demo corpus (no LLM reranking), then 06 with the 0.5B model on one
    number question; checks the export and the debug record, not the model's accuracy."""
    from rag.core.dataset import load_dataset
    from rag.models import ModelUnavailable, get_llm

    stages = [pytest.importorskip(f"rag.{m}") for m in ("parse", "clean", "chunk", "index", "retrieve")]
    full = load_dataset(demo_dir)
    picks = [next(q for q in full.questions if q.kind == "number")]
    ds = full.model_copy(update={"questions": tuple(picks)})
    cfg = make_cfg(demo_dir, overrides={"rerank.mode": "none"})
    for mod in stages:
        getattr(mod, "run_" + mod.__name__.split(".")[-1])(cfg, ds, progress=False)
    try:
        llm = get_llm(cfg)
    except ModelUnavailable as e:  # pragma: no cover - weights absent on this machine
        pytest.skip(str(e))
    df = run_answer(cfg, ds, progress=False, llm=llm)
    assert len(df) == 1 and set(df["status"]) == {"answered"}
    sub = json.loads((cfg.run_dir / "06_answer" / "submission.json").read_text())
    shas = {r.sha1 for r in ds.reports}
    for a, q in zip(sub["answers"], picks):
        assert a["question_text"] == q.text and a["kind"] == q.kind
        assert all(r["pdf_sha1"] in shas and r["page_index"] >= 0 for r in a["references"])
    for q in picks:
        d = read_json(cfg.run_dir / "06_answer" / "debug" / f"{q.qid}.json")
        assert d["calls"] and d["calls"][0]["raw"] and d["usage"]["completion_tokens"] > 0
        assert d["calls"][0]["context_tokens"] <= cfg.answer.max_context_tokens
        assert d["prompt_version"] == {"number": prompt_version("number")}
        if d["value"] != "N/A":  # a number the model found went through the code's scale logic
            assert d["interpretation"]["scale_source"] and d["sanity"]["status"] in {"ok", "suspect", "no_match"}


def test_reasoning_viewer_renders_debug_records(make_cfg):
    from rag.views.widgets.reasoning_viewer import reasoning_viewer, render_debug_html

    cfg = make_cfg()
    ds = make_ds([("Who is the CEO of Acme Corp?", "name")])
    write_retrieval(cfg, "q000", [page(A, 4, PEOPLE, 1.0)])
    run_answer(cfg, ds, progress=False, counter=COUNT,
               llm=FakeLLM(lambda m, s: {**base([1], step="CEO <signs> the letter"), "final_answer": "Joan Poe"}))
    d = read_json(cfg.run_dir / "06_answer" / "debug" / "q000.json")
    html = render_debug_html(d)
    assert "Joan Poe" in html and "CEO &lt;signs&gt; the letter" in html and "&#10003;" in html
    widget = reasoning_viewer(cfg, ds)
    assert "Joan Poe" in widget.children[1].value
    # a yes/no page read without reasoning shows the P(true) that decided it
    d["calls"][0].update(parsed=None, p_true=0.3124, value=True)
    assert "(P(true) 0.312)</summary>" in render_debug_html(d)


@pytest.mark.parametrize("require,expected", [(True, "N/A"), (False, 999_999_000)])
def test_made_up_figure_is_na_unless_allowed(make_cfg, require, expected):
    cfg = make_cfg(overrides={"answer.require_printed_in_context": require})
    ds = make_ds([("What was the Revenue (in USD) for Acme Corp?", "number")])
    write_retrieval(cfg, "q000", [page(A, 5, CASHFLOW, 0.9)])
    llm = FakeLLM(lambda m, s: {**base([1]), "value_as_printed": "999,999", "scale": "thousands", "currency": "USD"})
    df = run_answer(cfg, ds, progress=False, llm=llm, counter=COUNT)
    assert df.loc[0, "value"] == expected
    d = read_json(cfg.run_dir / "06_answer" / "debug" / "q000.json")
    assert d["calls"][0]["interpretation"]["found_in_context"] is False


def test_finalize_references_rules(make_cfg):
    from rag.answer import CtxPage, finalize_references

    cfg = make_cfg(overrides={"answer.max_references": 2, "answer.fill_references": 1})
    retrieved = [CtxPage(A, p, "", i, 1.0 - i / 10) for i, p in enumerate((10, 11, 12))]
    stray = CtxPage(A, 99, "", 9)  # never retrieved
    assert finalize_references(cfg, "name", "X", [stray], retrieved, None) == [{"sha1": A, "page": 10}]
    cited = [retrieved[2], retrieved[2], retrieved[1], retrieved[0]]
    assert finalize_references(cfg, "name", "X", cited, retrieved, None) == [{"sha1": A, "page": 12},
                                                                             {"sha1": A, "page": 11}]
    assert finalize_references(cfg, "number", "N/A", cited, retrieved, None) == []
    assert finalize_references(cfg, "boolean", False, cited, retrieved, None) == []  # refs_for_false off
    assert finalize_references(cfg, "boolean", True, [], retrieved, retrieved[1:]) == [{"sha1": A, "page": 11}]


def test_missing_or_malformed_prompt_file_named(tmp_path):
    from rag.answer.common.prompts import PromptError

    copy = tmp_path / "prompts"
    shutil.copytree(PROMPTS_DIR, copy)
    (copy / "examples" / "name.txt").write_text("--- context\nx\n--- question\ny\n")
    with pytest.raises(PromptError, match=r"examples/name.txt.*answer"):
        build_messages("name", "c", "q", copy)
    (copy / "kinds" / "boolean.txt").unlink()
    with pytest.raises(PromptError, match=r"kinds/boolean.txt is missing"):
        prompt_version("boolean", copy)
    with pytest.raises(PromptError, match="no prompt for answer kind 'date'"):
        prompt_version("date", copy)


def test_number_citation_follows_the_printed_figure(make_cfg):
    cfg = make_cfg(overrides={"answer.max_pages": 3, "answer.max_context_tokens": 2000})
    ds = make_ds([("What is the Cash flow from operations (in USD) for Acme Corp?", "number")])
    write_retrieval(cfg, "q000", [page(A, 40, CASHFLOW, 0.9), page(A, 12, PEOPLE, 0.8)])
    # the model cites label 2 (PEOPLE) although the figure is printed on label 1 (page 40)
    llm = FakeLLM(lambda m, s: {**base([2]), "value_as_printed": "406,100", "scale": "thousands", "currency": "USD"})
    run_answer(cfg, ds, progress=False, llm=llm, counter=COUNT)
    d = read_json(cfg.run_dir / "06_answer" / "debug" / "q000.json")
    assert d["references"] == [{"sha1": A, "page": 40}] and d["calls"][0]["interpretation"]["citation_fixed"]


def test_a_figure_from_another_row_is_na_unless_the_check_is_off(make_cfg):
    q = "What was the Gross margin (%) for Acme Corp according to the annual report?"
    ds = make_ds([(q, "number")])

    def respond(messages, schema):  # the model takes the dividend row for the gross margin
        return {**base([1]), "value_as_printed": "0.27", "scale": "units", "currency": "none"}

    for check, expected in ((True, "N/A"), (False, 0.27)):
        cfg = make_cfg(run=f"metric-{check}", overrides={"answer.require_metric_on_line": check})
        write_retrieval(cfg, "q000", [page(A, 5, CASHFLOW, 0.9)])
        df = run_answer(cfg, ds, progress=False, llm=FakeLLM(respond), counter=COUNT)
        assert df.loc[0, "value"] == expected
        if check:
            assert "names the metric" in df.loc[0, "na_reason"]


def test_boolean_asked_page_by_page_finds_evidence_past_the_first_page(make_cfg):
    """``answer.pages_per_call = {boolean: 1}``: three short pages that fit one call are asked one at a
    time; the fake model (like the small real one) misses evidence that is not alone in its context."""
    ds = make_ds([("Did Acme Corp mention any mergers or acquisitions?", "boolean")])
    pages = [page(A, 1, "Our fleet grew to 420 trucks.", 0.9), page(A, 2, "Revenue rose 4%.", 0.8),
             page(A, 3, "In March we completed the acquisition of Beta Ltd.", 0.7)]

    def respond(messages, schema):
        ctx = user_msg(messages)
        found = ctx.count("=== Page") == 1 and "acquisition of" in ctx
        return {**base([1] if found else []), "final_answer": found}

    packed = make_cfg(run="packed", overrides={"answer.max_pages": 3, "answer.pages_per_call": {"boolean": 0}})
    by_page = make_cfg(run="by-page", overrides={"answer.max_pages": 3, "answer.pages_per_call": {"boolean": 1}})
    for cfg in (packed, by_page):
        write_retrieval(cfg, "q000", pages)
        run_answer(cfg, ds, progress=False, llm=FakeLLM(respond), counter=COUNT)
    one = read_json(packed.run_dir / "06_answer" / "debug" / "q000.json")
    assert len(one["calls"]) == 1 and one["value"] is False
    each = read_json(by_page.run_dir / "06_answer" / "debug" / "q000.json")
    assert [c["pages"][0]["page"] for c in each["calls"]] == [1, 2, 3] and all(len(c["pages"]) == 1 for c in each["calls"])
    assert each["value"] is True and each["references"] == [{"sha1": A, "page": 3}]


def test_focused_reading_shows_the_fact_buried_in_a_long_page_and_reads_more_pages(make_cfg):
    """``answer.focus_tokens = {boolean: N}`` cuts each page to its lines on the question's topic and
    ``max_pages_by_kind`` reads past ``max_pages``; the fake model (like the 1.5B one) misses a fact that
    is buried in a long context."""
    ds = make_ds([("Did Acme Corp mention any mergers or acquisitions?", "boolean")])
    filler = "\n".join(f"Line {i}: the fleet of trucks was serviced on schedule during the year." for i in range(60))
    buried = filler + "\nIn March we completed the acquisition of Beta Ltd.\n" + filler
    pages = [page(A, n, f"Revenue rose {n}%.", 1 - n / 10) for n in range(1, 4)] + [page(A, 4, buried, 0.5)]

    def respond(messages, schema):
        ctx = user_msg(messages)
        found = COUNT(ctx) < 400 and "acquisition of" in ctx
        return {**base([1] if found else []), "final_answer": found}

    whole = make_cfg(run="whole", overrides={"answer.max_pages": 3, "answer.pages_per_call": {"boolean": 1},
                                             "answer.max_pages_by_kind": {"boolean": 4}})
    focused = make_cfg(run="focused", overrides={"answer.max_pages": 3, "answer.pages_per_call": {"boolean": 1},
                                                 "answer.max_pages_by_kind": {"boolean": 4},
                                                 "answer.focus_tokens": {"boolean": 120}})
    for cfg in (whole, focused):
        write_retrieval(cfg, "q000", pages)
        run_answer(cfg, ds, progress=False, llm=FakeLLM(respond), counter=COUNT)
    before = read_json(whole.run_dir / "06_answer" / "debug" / "q000.json")
    assert [c["pages"][0]["page"] for c in before["calls"]] == [1, 2, 3, 4] and before["value"] is False
    after = read_json(focused.run_dir / "06_answer" / "debug" / "q000.json")
    assert after["value"] is True and after["references"] == [{"sha1": A, "page": 4}]
    assert after["calls"][-1]["context_tokens"] < 120 + 10


def test_concurrent_questions_give_the_same_answers_and_submission(make_cfg, tmp_path):
    """llm.concurrency = 4: 06 answers questions in parallel; answers, debug records (timings aside) and the
    submission are what concurrency 1 writes, in question order."""
    topics = ["dividend", "buyback", "acquisition", "layoffs", "dividend policy", "bond issue", "merger", "rebrand"]
    ds = make_ds([(f"Did Acme Corp announce a {t}?", "boolean") for t in topics])

    def respond(messages, schema):  # True exactly for the dividend questions, read back from the prompt
        return {**base([1]), "final_answer": "dividend" in user_msg(messages).lower()}

    out = {}
    for n in (1, 4):
        cfg = make_cfg(overrides={"llm.concurrency": n, "run": f"c{n}", "answer.pages_per_call": {"boolean": 0}})
        for q in ds.questions:
            write_retrieval(cfg, q.qid, [page(A, 3, PEOPLE, 0.9)])
        df = run_answer(cfg, ds, progress=False, llm=FakeLLM(respond), counter=COUNT)
        debug = {p.name: {k: v for k, v in read_json(p).items() if k not in ("seconds", "usage", "calls")}
                 for p in sorted((cfg.run_dir / "06_answer" / "debug").glob("*.json"))}
        out[n] = (list(df.value), debug, (cfg.run_dir / "06_answer" / "submission.json").read_bytes(), cfg.run_dir)
    assert out[1][0] == [True, False, False, False, True, False, False, False]
    assert out[1][3] != out[4][3] and out[1][:3] == out[4][:3]


def test_a_short_name_becomes_the_full_name_the_pages_give():
    from rag.answer.names.name_check import full_name

    pages = ['On May 2, 2022 we acquired Surgical Innovation Associates, Inc. ("SIA"), a company making meshes.',
             "SIA's products are sold in the US.", "The merger with IAA, Inc. closed in March 2023. IAA brings ...",
             "We completed the merger with Cedar Realty Trust, Inc. (Cedar). Cedar Realty Trust, Inc. is now ours."]
    assert full_name("SIA", pages) == "Surgical Innovation Associates, Inc."
    assert full_name("IAA", pages) == "IAA, Inc."
    assert full_name("Cedar", pages) == "Cedar Realty Trust, Inc."
    assert full_name("Firma", pages) == "Firma"  # printed nowhere in full: as it is
    assert full_name("N/A", pages) == "N/A"
