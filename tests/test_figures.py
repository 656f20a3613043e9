"""rag.answer.numbers.figures: number answers from table candidates (labels, latest period, units, currency, the pick)."""
from __future__ import annotations

import pytest

from rag.answer.numbers import figure_pick as P
from rag.answer.numbers import figures as F
from rag.answer.numbers import figure_check as metric
from rag.answer.common.context import CtxPage
from rag.answer.fuse import answer_pages
from rag.models.base import FakeLLM
from rag.answer.common.prompts import NumberAnswer

A = "a" * 40
COUNT = lambda t: len(t) // 4  # noqa: E731
Q_REV = ("What was the Total revenue (in USD) for Acme Corp according to the annual report (within the last period "
         "or at the end of the last period)? If data is not available, return 'N/A'.")
Q_CFO = ("According to the annual report, what is the Cash flow from operations (in USD) for Acme Corp  (within the "
         "last period or at the end of the last period)? If data is not available, return 'N/A'.")
Q_GM = ("What was the Gross margin (%) for Acme Corp according to the annual report (within the last period or at "
        "the end of the last period)? If data is not available, return 'N/A'.")

INCOME = """# Consolidated Statements of Operations

Table: Consolidated Statements of Operations — values in thousands of USD, except per share data (as printed: "(in thousands, except per share data)")
| | Note | Year Ended December 31, 2022 | 2021 |
|---|---|---|---|
| Total revenues | 4 | $ 1,234,567 | $ 1,100,000 |
| Cost of revenues | | (600,000) | (500,000) |
| Gross profit | | 634,567 | 600,000 |
| Gross margin | | 51.4% | 54.5% |
| Net loss | | (1,234) | 4,000 |
| Net loss per share, basic | | (0.45) | 0.12 |
"""
MATURITIES = """Table: Debt maturities — values in thousands of USD
| | 2023 | 2024 | 2025 |
|---|---|---|---|
| Total revenues | 1 | 2 | 3 |
"""


def cfg_(make_cfg, **over):
    # table candidates alone: sentences (answer.prose_candidates) and the N/A threshold are tests/test_prose.py's
    return make_cfg(overrides={"answer.table_candidates": True, "answer.prose_candidates": False,
                               "answer.figure_min_score": None, **over})


def pg(text: str, n: int = 45, rank: int = 0) -> CtxPage:
    return CtxPage(A, n, text, rank, 1.0 - rank / 10)


# ---- tables and periods ------------------------------------------------------------------------
def test_parse_tables_keeps_unit_line_and_moves_period_rows_to_the_header():
    md = "Table: Balance sheet — values in millions of EUR\n| | | |\n|---|---|---|\n| | 2022 | 2021 |\n| Total assets | 5,000 | 4,000 |"
    (t,) = F.parse_tables(md)
    assert t.title.startswith("Table: Balance sheet")
    assert t.header == [["", "", ""], ["", "2022", "2021"]] and t.rows == [["Total assets", "5,000", "4,000"]]


@pytest.mark.parametrize("text,year", [("December 31, 2022", 2022), ("FY22", 2022), ("2021/22", 2022),
                                       ("2021/2022", 2022), ("2022 $", 2022), ("2022 vs 2021", None),
                                       ("Note", None), ("1999", 1999)])
def test_column_year(text, year):
    assert F.column_year(text) == year


def test_report_year_ignores_a_maturity_schedule():
    tables = F.parse_tables(INCOME) + F.parse_tables(MATURITIES)
    assert F.report_year(tables) == 2022


def test_latest_period_column_even_when_the_table_runs_oldest_first(make_cfg):
    md = ("Table: Five-year summary — values in millions of USD\n| | 2018 | 2019 | 2020 | 2021 | 2022 |\n"
          "|---|---|---|---|---|---|\n| Revenue | 10 | 11 | 12 | 13 | 14.5 |")
    (c,) = F.build_candidates(cfg_(make_cfg), Q_REV, [pg(md)], "USD", "Acme Corp")
    assert (c.printed, c.period, c.value, c.unit) == ("14.5", "2022", 14_500_000, "millions of USD")


def test_note_column_and_dollar_cells_do_not_shift_the_period(make_cfg):
    cands = F.build_candidates(cfg_(make_cfg), Q_REV, [pg(INCOME)], "USD", "Acme Corp")
    assert cands[0].label == "Total revenues" and cands[0].printed == "1,234,567"
    assert cands[0].value == 1_234_567_000 and cands[0].period == "Year Ended December 31, 2022"
    # misaligned grid: "$" signs in their own columns the header does not have
    md = ("Table: Income statement — values in thousands of USD\n| | 2022 | 2021 | | |\n|---|---|---|---|---|\n"
          "| Revenue | $ | 812 | $ | 790 |")
    (c,) = F.build_candidates(cfg_(make_cfg), Q_REV, [pg(md)], "USD", "Acme Corp")
    assert c.value == 812_000


# ---- labels --------------------------------------------------------------------------------------
def test_label_scores_prefer_the_metric_itself():
    terms = metric.metric_terms(Q_REV, "Acme Corp")
    al = F.aliases_for(Q_REV, "Acme Corp")
    assert F.label_score("Total revenues", terms, al) == 1.0
    assert F.label_score("Cost of revenues", terms, al) == pytest.approx(0.9)
    assert F.label_score("Net loss", terms, al) == 0.0
    cfo = metric.metric_terms(Q_CFO, "Acme Corp")
    assert F.label_score("Net cash provided by (used in) operating activities", cfo,
                         F.aliases_for(Q_CFO, "Acme Corp")) == F.ALIAS_SCORE
    gm = metric.metric_terms(Q_GM, "Acme Corp")
    assert F.label_score("Gross profit", gm, F.aliases_for(Q_GM, "Acme Corp")) < 0.5


def test_cost_of_revenue_ranks_below_revenue(make_cfg):
    cands = F.build_candidates(cfg_(make_cfg), Q_REV, [pg(INCOME)], "USD", "Acme Corp")
    assert [c.label for c in cands] == ["Total revenues", "Cost of revenues"]
    assert cands[1].value == -600_000_000  # "(600,000)" in thousands: sign kept, scale applied


# ---- units and scales ------------------------------------------------------------------------------
@pytest.mark.parametrize("unit_line,header,label,factor,unit", [
    ("Table: Results — values in thousands of USD", "| | 2022 | 2021 |", "Revenue", 1_000, "thousands of USD"),
    ("Table: Results", "| | 2022 $m | 2021 $m |", "Revenue", 1_000_000, "millions of USD"),
    ("Table: Results", "| | 2022 | 2021 |", "Revenue (000s)", 1_000, "thousands of USD"),
    ("Table: Results", "| | 2022 | 2021 |", "Revenue", 1, "USD, scale not stated"),
])
def test_scale_from_unit_line_column_header_or_label(make_cfg, unit_line, header, label, factor, unit):
    md = f"{unit_line}\n{header}\n|---|---|---|\n| {label} | (1,234) | 1,000 |"
    (c,) = F.build_candidates(cfg_(make_cfg), Q_REV, [pg(md)], "USD", "Acme Corp")
    assert c.value == -1_234 * factor and c.factor == factor and c.unit == unit


def test_per_share_is_never_scaled(make_cfg):
    q = "What was the Earnings per share (EPS) (in USD) for Acme Corp according to the annual report?"
    cands = F.build_candidates(cfg_(make_cfg), q, [pg(INCOME)], "USD", "Acme Corp")
    assert cands[0].label == "Net loss per share, basic" and cands[0].value == pytest.approx(-0.45)
    assert cands[0].unit == "USD per share"


# ---- currency and percentages ------------------------------------------------------------------------
def test_currency_asked_that_the_table_or_report_does_not_use_gives_no_candidate(make_cfg):
    cfg = cfg_(make_cfg)
    q_eur = Q_REV.replace("(in USD)", "(in EUR)")
    assert F.build_candidates(cfg, q_eur, [pg(INCOME)], "USD", "Acme Corp") == []
    bare = "Table: Results\n| | 2022 | 2021 |\n|---|---|---|\n| Revenue | 500 | 400 |"
    assert F.build_candidates(cfg, Q_REV, [pg(bare)], "EUR", "Acme Corp") == []  # report currency EUR
    (c,) = F.build_candidates(cfg, q_eur, [pg(bare)], "EUR", "Acme Corp")
    assert c.value == 500 and c.currency == "EUR"


def test_percent_metric_takes_the_printed_percentage_and_amounts_never_take_one(make_cfg):
    cfg = cfg_(make_cfg)
    (c,) = F.build_candidates(cfg, Q_GM, [pg(INCOME)], "USD", "Acme Corp")
    assert (c.label, c.value, c.factor, c.unit) == ("Gross margin", 51.4, 1, "%")
    q_gp = Q_REV.replace("Total revenue", "Gross profit")
    cands = F.build_candidates(cfg, q_gp, [pg(INCOME)], "USD", "Acme Corp")
    assert [c.value for c in cands] == [634_567_000]  # not the 51.4% row


def test_future_only_tables_give_no_candidate(make_cfg):
    cands = F.build_candidates(cfg_(make_cfg), Q_REV, [pg(INCOME), pg(MATURITIES, 46, 1)], "USD", "Acme Corp")
    assert all(c.page == 45 for c in cands)


# ---- the pick ------------------------------------------------------------------------------------------
def _pick(choice):
    def respond(messages, schema):
        assert schema is P.FigurePick
        assert "1. Total revenues | Year Ended December 31, 2022 | thousands of USD | 1,234,567" in messages[-1]["content"]
        return {"reason": "r", "choice": choice}
    return FakeLLM(respond)


def test_pick_converts_the_chosen_candidate_and_cites_its_page(make_cfg):
    cfg = cfg_(make_cfg)
    pages = [pg("Highlights: a good year.", 3, 0), pg(INCOME, 45, 1)]
    res = P.answer_from_tables(_pick(1), cfg, Q_REV, pages, "USD", COUNT, "Acme Corp")
    assert res["value"] == 1_234_567_000 and [p.page for p in res["cited"]] == [45]
    assert res["calls"][0]["interpretation"]["choice"] == 1
    res2 = P.answer_from_tables(_pick("Candidate 2"), cfg, Q_REV, pages, "USD", COUNT, "Acme Corp")
    assert res2["value"] == -600_000_000


@pytest.mark.parametrize("choice", [0, 7, "N/A", None])
def test_pick_none_or_out_of_range_is_na(make_cfg, choice):
    res = P.answer_from_tables(_pick(choice), cfg_(make_cfg), Q_REV, [pg(INCOME)], "USD", COUNT, "Acme Corp")
    assert res["value"] == "N/A" and res["cited"] == [] and "picked none" in res["interpretation"]["na_reason"]


def test_parse_pick():
    assert P.parse_pick({"reason": "", "choice": "3"}, 3) == 3
    assert P.parse_pick({"reason": "", "choice": 4}, 3) == 0
    assert P.parse_pick(None, 3) == 0 and P.parse_pick({"reason": "no choice"}, 3) == 0


# ---- the hook in rag.fuse ----------------------------------------------------------------------------------
def test_answer_pages_uses_tables_when_switched_on_and_reads_pages_otherwise(make_cfg):
    seen = []

    def respond(messages, schema):
        seen.append(schema)
        if schema is P.FigurePick:
            return {"reason": "r", "choice": 1}
        return {"step_by_step_analysis": "", "reasoning_summary": "", "relevant_pages": [1],
                "value_as_printed": "1,234,567", "scale": "thousands", "currency": "USD"}

    on = answer_pages(FakeLLM(respond), cfg_(make_cfg), "number", Q_REV, [pg(INCOME)], "USD", COUNT, "Acme Corp")
    assert on["value"] == 1_234_567_000 and seen == [P.FigurePick]
    off = answer_pages(FakeLLM(respond), make_cfg(), "number", Q_REV, [pg(INCOME)], "USD", COUNT, "Acme Corp")
    assert off["value"] == 1_234_567_000 and seen[-1] is NumberAnswer
    # switched on, but no table candidate (the metric is in prose only): the pages are read
    prose = pg("Our revenue was $1,234,567 thousand in 2022.")
    seen.clear()
    res = answer_pages(FakeLLM(respond), cfg_(make_cfg), "number", Q_REV, [prose], "USD", COUNT, "Acme Corp")
    assert seen == [NumberAnswer] and res["calls"][0]["kind"] == "number"
    # ...or, with figure_fallback = "na", N/A at once without a model call
    seen.clear()
    na_cfg = cfg_(make_cfg, **{"answer.figure_fallback": "na"})
    res = answer_pages(FakeLLM(respond), na_cfg, "number", Q_REV, [prose], "USD", COUNT, "Acme Corp")
    assert seen == [] and res["value"] == "N/A" and res["calls"] == [] and "names the metric" in res["interpretation"]["na_reason"]


def test_dot_leaders_split_label_and_value(make_cfg):
    q = ("For Acme Corp, what was the value of Total assets on balance sheet at year-end at the end of the period "
         "listed in annual report? If data is not available, return 'N/A'.")
    md = ("Table: Balance sheets — values in thousands of USD\n| | 2022 | 2021 |\n|---|---|---|\n"
          "| Total assets . . . ........... $51,057,683 | $56,107,311 | |")
    (c,) = F.build_candidates(cfg_(make_cfg), q, [pg(md)], "USD", "Acme Corp")
    assert (c.label, c.value) == ("Total assets", 51_057_683_000)


def test_a_table_without_currency_takes_the_pages_currency_before_the_datasets(make_cfg):
    bare = "Table: Highlights\n| | 2022 | 2021 |\n|---|---|---|\n| Revenue | 500 | 400 |"
    eur = "Table: Income statement — values in millions of EUR\n| | 2022 | 2021 |\n|---|---|---|\n| Cost of sales | 90 | 80 |"
    # the dataset says USD, but the report's tables are in EUR: a USD question gets no candidate
    assert F.build_candidates(cfg_(make_cfg), Q_REV, [pg(bare), pg(eur, 46, 1)], "USD", "Acme Corp") == []
    cands = F.build_candidates(cfg_(make_cfg), Q_REV.replace("USD", "EUR"), [pg(bare), pg(eur, 46, 1)], "USD", "Acme Corp")
    assert [(c.label, c.value, c.currency) for c in cands] == [("Revenue", 500, "EUR"), ("Cost of sales", 90_000_000, "EUR")]


def test_na_pick_reads_the_pages_only_with_figure_na_fallback(make_cfg):
    seen = []

    def respond(messages, schema):
        seen.append(schema)
        if schema is P.FigurePick:
            return {"reason": "none is revenue", "choice": 0}
        return {"step_by_step_analysis": "", "reasoning_summary": "", "relevant_pages": [1],
                "value_as_printed": "1,234,567", "scale": "thousands", "currency": "USD"}

    res = answer_pages(FakeLLM(respond), cfg_(make_cfg), "number", Q_REV, [pg(INCOME)], "USD", COUNT, "Acme Corp")
    assert res["value"] == "N/A" and seen == [P.FigurePick]
    seen.clear()
    cfg = cfg_(make_cfg, **{"answer.figure_na_fallback": True})
    res = answer_pages(FakeLLM(respond), cfg, "number", Q_REV, [pg(INCOME)], "USD", COUNT, "Acme Corp")
    assert res["value"] == 1_234_567_000 and seen == [P.FigurePick, NumberAnswer]
    assert [c["kind"] for c in res["calls"]] == ["figure_pick", "number"] and [p.page for p in res["cited"]] == [45]


def test_a_section_row_names_the_metric_of_the_rows_below_it(make_cfg):
    q = ("What was the EPS (earnings per share) (in USD) for Acme Corp according to the annual report (within the "
         "last period or at the end of the last period)? If data is not available, return 'N/A'.")
    md = ("Table: Statements of operations — values in thousands of USD, except per share data\n| | 2022 | 2021 |\n"
          "|---|---|---|\n| Weighted average shares outstanding: | | |\n| Basic and Diluted | 9,727,000 | 9,700,000 |\n"
          "| Loss per share: | | |\n| Basic and Diluted | $ (2.20) | $ (1.36) |")
    (c,) = F.build_candidates(cfg_(make_cfg), q, [pg(md)], "USD", "Acme Corp")
    assert (c.label, c.value, c.factor) == ("Loss per share: Basic and Diluted", pytest.approx(-2.2), 1)


def test_unit_in_a_body_row_above_the_amounts_and_a_header_without_label_column(make_cfg):
    q = ("What was the value of Total deposits at year-end of Acme Corp at the end of the period listed in annual "
         "report? If data is not available, return 'N/A'.")
    md = ("Table: Deposits — values in USD\n| | December 31, 2022 | | December 31, 2021 | |\n|---|---|---|---|---|\n"
          "| (dollars in thousands) | Amount Percent | | Amount Percent | |\n"
          "| Time Deposits . . . . | 272,253 | 8.0 | 293,474 | 10.0 |\n"
          "| Total Deposits . . . . | $ 3,416,543 | 100.0 % | $ 2,946,237 | 100.0 % |")
    cands = F.build_candidates(cfg_(make_cfg), q, [pg(md)], "USD", "Acme Corp")
    assert (cands[0].label, cands[0].value) == ("Total Deposits", 3_416_543_000)
    # a header row without the label column: its years name the value columns
    md2 = "Table: Highlights — values in thousands of USD\n| 2022 | 2021 |\n|---|---|\n| Total assets | $51,057,683 | $56,107,311 |"
    q2 = q.replace("Total deposits", "Total assets")
    (c,) = F.build_candidates(cfg_(make_cfg), q2, [pg(md2)], "USD", "Acme Corp")
    assert (c.period, c.value) == ("2022", 51_057_683_000)


def test_parent_company_only_statement_ranks_below_the_consolidated_one(make_cfg):
    parent = ("Table: Condensed Statements of Cash Flows — values in thousands of USD\n| | 2022 | 2021 |\n|---|---|---|\n"
              "| Net cash provided by operating activities | 14,341 | 12,000 |")
    consolidated = parent.replace("Condensed Statements", "Consolidated Statements").replace("14,341", "19,970")
    cands = F.build_candidates(cfg_(make_cfg), Q_CFO, [pg(parent, 117, 0), pg(consolidated, 71, 1)], "USD", "Acme Corp")
    assert [c.value for c in cands] == [19_970_000, 14_341_000] and cands[1].notes == ["parent company only"]


def test_a_component_row_under_a_section_naming_the_metric_is_not_the_metric(make_cfg):
    md = ("Table: Consolidated statements of cash flows — values in millions of USD\n| | 2022 | 2021 |\n|---|---|---|\n"
          "| CASH FLOWS FROM OPERATING ACTIVITIES: | | |\n| Net income (loss) | 88.5 | 70.1 |\n"
          "| Net cash provided by operating activities | 406.1 | 350.2 |")
    cands = F.build_candidates(cfg_(make_cfg), Q_CFO, [pg(md)], "USD", "Acme Corp")
    assert [(c.label, c.value) for c in cands] == [("Net cash provided by operating activities", 406_100_000)]


def test_a_bare_dollar_gives_way_to_the_dollar_the_report_says_it_uses(make_cfg):
    q = Q_REV.replace("Total revenue", "Operating income")
    md = ('Table: Results — values in thousands of USD (as printed: "(In $000s)")\n| | 2022 | 2021 |\n|---|---|---|\n'
          "| Operating income | 2,792 | 2,100 |")
    note = pg("All financial information is presented in Canadian dollars unless otherwise noted.", 3, 1)
    assert F.build_candidates(cfg_(make_cfg), q, [pg(md)], "USD", "Acme Corp", context_pages=[pg(md), note]) == []
    (c,) = F.build_candidates(cfg_(make_cfg), q.replace("USD", "CAD"), [pg(md)], "USD", "Acme Corp",
                              context_pages=[pg(md), note])
    assert (c.currency, c.value) == ("CAD", 2_792_000)
    # an explicit currency in the printed phrase wins over the clean stage's "USD"
    md2 = md.replace("(In $000s)", "(Tabular amounts are in thousands of Canadian dollars)")
    assert F.build_candidates(cfg_(make_cfg), q, [pg(md2)], "USD", "Acme Corp") == []
    assert F.stated_dollar(["Figures are in Australian dollars.", "presented in Australian dollars"]) == "AUD"


def test_a_metric_with_report_wordings_needs_a_close_label(make_cfg):
    q = Q_REV.replace("Total revenue", "Net income")
    md = ("Table: Income statement — values in thousands of USD\n| | 2022 | 2021 |\n|---|---|---|\n"
          "| Income tax benefit | 7,054 | 1,000 |\n| Loss for the year | (89,234) | (20,000) |")
    cands = F.build_candidates(cfg_(make_cfg), q, [pg(md)], "USD", "Acme Corp")
    assert [(c.label, c.value) for c in cands] == [("Loss for the year", -89_234_000)]


def test_run_answer_end_to_end_with_table_candidates(make_cfg):
    import json
    from pathlib import Path

    from rag.answer import run_answer
    from rag.core.artifacts import read_json
    from rag.core.stage import Stage
    from rag.core.dataset import Dataset, Question, Report

    cfg = cfg_(make_cfg)
    ds = Dataset(root=Path("."), name="unit", reports=(Report(sha1=A, company="Acme Corp", currency="USD", pdf=Path("a.pdf")),),
                 questions=(Question(qid="q000", text=Q_REV, kind="number"),), gold={})
    rec = {"qid": "q000", "question": Q_REV, "kind": "number", "routed": [{"sha1": A, "company": "Acme Corp"}],
           "sub_questions": {},
           "candidates": {A: [{"sha1": A, "page": 45, "text": INCOME, "scores": {"final": 1.0}, "reason": ""}]}}
    Stage(cfg, "05_retrieve").write_json("q000.json", rec)
    llm = _pick(1)
    df = run_answer(cfg, ds, progress=False, llm=llm, counter=COUNT)
    assert df.loc[0, "value"] == 1_234_567_000 and df.loc[0, "pages"] == "45"
    d = read_json(cfg.run_dir / "06_answer" / "debug" / "q000.json")
    assert d["interpretation"]["source"] == "tables" and d["sanity"]["status"] == "ok" and d["n_calls"] == 1
    sub = json.loads((cfg.run_dir / "06_answer" / "submission.json").read_text())
    assert sub["answers"][0]["references"] == [{"pdf_sha1": A, "page_index": 44}]
    run_answer(cfg, ds, progress=False, llm=llm, counter=COUNT)  # nothing changed: no new call
    assert len(llm.calls) == 1


def test_code_pick_takes_the_best_candidate_without_a_call(make_cfg):
    llm = FakeLLM(lambda m, s: pytest.fail("no model call expected"))
    res = P.answer_from_tables(llm, cfg_(make_cfg, **{"answer.figure_pick": "code"}), Q_REV, [pg(INCOME)], "USD",
                               COUNT, "Acme Corp")
    assert res["value"] == 1_234_567_000 and llm.calls == [] and res["calls"][0]["model"] == "code"


def test_total_assets_is_not_total_current_assets(make_cfg):
    """"current" is ERC boilerplate in a question ("current period") but a qualifier on a row label."""
    q = ("What was the value of Total assets (in USD) of Acme Corp at the end of the period listed in annual "
         "report? If data is not available, return 'N/A'.")
    md = ("Table: Balance sheet — values in thousands of USD\n| | 2022 | 2021 |\n|---|---|---|\n"
          "| Total current assets | 741,170 | 700,000 |\n| Property, net | 1,000 | 900 |\n"
          "| Total assets | 1,959,150 | 1,800,000 |")
    cands = F.build_candidates(cfg_(make_cfg), q, [pg(md)], "USD", "Acme Corp")
    assert cands[0].value == 1_959_150_000
    asked = q.replace("Total assets", "Total current assets")
    assert F.build_candidates(cfg_(make_cfg), asked, [pg(md)], "USD", "Acme Corp")[0].value == 741_170_000


def test_period_and_notes_header_left_above_the_grid(make_cfg):
    """The parser left "Note / 2022 / 2021" above the grid: the columns are dated from those lines (the
    2022 column, not the notes one); an undated grid whose widest rows start with a note number skips it."""
    q = Q_REV.replace("Total revenue (in USD)", "Total assets (in AUD)")
    md = ("# Consolidated Statement of Financial Position\n\n# Note\n\n2022 $'m\n\n2021 $'m\n\n"
          "Table: ASSETS — values in millions of AUD (as printed: \"Note $'m $'m\")\n| | | | |\n|---|---|---|---|\n"
          "| Cash | C1 | 738.5 | 811.4 |\n| Total assets | | 7,461.0 | 8,072.1 |")
    cands = F.build_candidates(cfg_(make_cfg), q, [pg(md)], "AUD", "Acme Corp")
    assert (cands[0].value, cands[0].period, cands[0].notes) == (7_461_000_000, "2022", [])
    q2 = Q_REV.replace("(in USD)", "(in HKD)")
    md2 = ("Table: values in thousands of HKD\n| | | | |\n|---|---|---|---|\n| Revenue | 5 | 45,102 | 24,496 |\n"
           "| Sales of electricity | | 6,536 | 652 |\n| Finance costs | 11 | (1,246) | (101) |")
    assert F.build_candidates(cfg_(make_cfg), q2, [pg(md2)], "HKD", "Acme Corp")[0].value == 45_102_000


def test_a_count_question_takes_no_money_row(make_cfg):
    q = ("For Acme Corp, what was the value of Number of employees at the end of the period listed in annual "
         "report? If data is not available, return 'N/A'.")
    md = ("Table: Staff — values in thousands of AUD\n| | 2022 | 2021 |\n|---|---|---|\n"
          "| Total employment expenses | (66,618) | (60,000) |\n| Employer contributions | 836 | 800 |")
    assert F.build_candidates(cfg_(make_cfg), q, [pg(md)], "AUD", "Acme Corp") == []


def test_an_initialism_of_the_metric_names_it():
    from rag.answer.numbers import figure_check as FC

    q = ("What was the value of Net asset value per Ordinary share (pence) of Acme plc at the end of the period "
         "listed in annual report? If data is not available, return 'N/A'.")
    acr = FC.acronyms(q, "Acme plc")
    terms = FC.metric_terms(q, "Acme plc")
    assert acr["NAV"] == "Net asset value"
    assert F.label_score(FC.expand_acronyms("NAV per Ordinary share (p)", acr), terms) >= 0.8
    assert F.label_score("NAV per Ordinary share (p)", terms) < 0.8
    assert FC.expand_acronyms("the NAV and the CEO", acr) == "the NAV Net asset value and the CEO"


def test_a_programmes_row_not_the_companys_total(make_cfg):
    """The question names a code ("VP-102"): its row under a sentence saying what the grid holds is the
    figure; the company's total R&D row is not."""
    q = ("For Acme Corp, what was the value of Research and development expense for VP-102 (in USD) at the end "
         "of the period listed in annual report? If data is not available, return 'N/A'.")
    md = ("Table: Results — values in thousands of USD\n| | 2022 | 2021 |\n|---|---|---|\n"
          "| Research and development | 12,198 | 15,929 |\n\n"
          "The following table summarizes our research and development expense by product candidate.\n\n"
          "Table: For the Year Ended — values in thousands of USD\n| | 2022 | 2021 |\n|---|---|---|\n"
          "| VP-102 | $ 3,474 | $ 6,174 |\n| VP-315 | 2,955 | 3,825 |")
    cands = F.build_candidates(cfg_(make_cfg), q, [pg(md)], "USD", "Acme Corp")
    assert [c.value for c in cands] == [3_474_000]
    from rag.answer.numbers import figure_check as FC

    assert FC.named_words(q, "Acme Corp") == ["vp-102"]  # "Research" starts the metric: not a name


def test_the_statement_page_05_added_wins_a_tie(make_cfg):
    md = "Table: T — values in thousands of USD\n| | 2022 | 2021 |\n|---|---|---|\n| Total revenues | {} | 9 |"
    summary, statement = pg(md.format("11,383"), n=73, rank=0), pg(md.format("42,984"), n=49, rank=1)
    assert F.build_candidates(cfg_(make_cfg), Q_REV, [summary, statement], "USD", "Acme Corp")[0].value == 11_383_000
    statement.statement = "income_statement"
    assert F.build_candidates(cfg_(make_cfg), Q_REV, [summary, statement], "USD", "Acme Corp")[0].value == 42_984_000
    statement.statement = "count:employees"  # a count page is no statement
    assert F.build_candidates(cfg_(make_cfg), Q_REV, [summary, statement], "USD", "Acme Corp")[0].value == 11_383_000


def test_per_share_and_net_qualifiers_on_labels(make_cfg):
    q = ("What was the value of Net asset value per Ordinary share (pence) of Acme plc at the end of the period "
         "listed in annual report? If data is not available, return 'N/A'.")
    from rag.answer.common import printed as nums

    assert nums.asks_per_share(q) and not nums.asks_per_share(Q_REV)
    md = ("Table: T — values in thousands of GBP\n| | 2022 | 2021 |\n|---|---|---|\n"
          "| Purchase of Ordinary shares to be held in treasury | (4,923) | (100) |\n"
          "| NAV per Ordinary share (p) | 713.43 | 700.00 |")
    assert [c.value for c in F.build_candidates(cfg_(make_cfg), q, [pg(md)], "GBP", "Acme plc")] == [713.43]
    ta = Q_REV.replace("Total revenue", "Total assets")
    md2 = ("Table: T — values in thousands of USD\n| | 2022 | 2021 |\n|---|---|---|\n"
           "| Net assets | 189,286 | 1 |\n| Total assets | 223,060 | 2 |")
    assert F.build_candidates(cfg_(make_cfg), ta, [pg(md2)], "USD", "Acme Corp")[0].value == 223_060_000


Q_TA = ("What was the value of Total assets (in AUD) of Acme Corp at the end of the period listed in annual report? "
        "If data is not available, return 'N/A'.")


def test_a_total_row_the_parser_printed_as_headings_is_a_candidate_of_the_bold_column(make_cfg):
    """docling turns a statement's bold total row into headings ("# TOTAL ASSETS" / "# 12,778,147"); the bold
    figure is the current column, dated by the page's latest year heading. Two other tables printing the
    current assets' value do not lift "Total Current Assets" over it ("current" names a part)."""
    md = ("# CONSOLIDATED STATEMENT OF FINANCIAL POSITION\n\n# Notes\n\n# 2022\n\n# 2021\n\n# $\n\n"
          "Table: ASSETS — values in AUD (as printed: \"$ $\")\n| | | | |\n|---|---|---|---|\n"
          "| Cash and cash equivalents | 18(b) | 3,480,120 | 12,689,470 |\n| Total Current Assets | | 3,678,285 | 13,197,445 |\n\n"
          "# TOTAL ASSETS\n\n# 12,778,147\n\n# Loss for the year\n\n13\n\n# (46,746)\n\n(31,626)\n")
    (*_, heads) = F.parse_tables(md)
    assert heads.header == [["", "2022"]] and heads.rows == [["TOTAL ASSETS", "12,778,147"], ["Loss for the year", "(46,746)"]]
    summary = ("Table: Summary — values in AUD\n| | 2022 | 2021 |\n|---|---|---|\n| Total current assets | 3,678,285 | 1 |")
    pages = [pg(md, 33, 0), pg(summary, 5, 1), pg(summary, 6, 2)]
    cands = F.build_candidates(cfg_(make_cfg), Q_TA, pages, "AUD", "Acme Corp")
    assert (cands[0].label, cands[0].value, cands[0].period) == ("TOTAL ASSETS", 12_778_147, "2022")
    assert F.parse_tables("# Unit\n\n# 2022\n\n# Note 12\n\n# 4,000\n") == []  # a year is no value; "Note 12" no label


def test_the_parent_entity_note_and_a_statement_footer_between_header_and_grid(make_cfg):
    """An ASX "Parent entity information" note under a heading ranks below the consolidated statement, whose
    period header sits above its "should be read in conjunction with the notes" footer."""
    consolidated = ("# Consolidated\n\n# Note\n\n# 2022\n\n# 2021\n\n# $'000\n\n# $'000\n\n"
                    "The above statement of financial position should be read in conjunction with the accompanying notes\n\n"
                    "Table: Current assets — values in thousands of AUD (as printed: \"$'000\")\n| | | | |\n|---|---|---|---|\n"
                    "| Cash | 8 | 87,550 | 120,608 |\n| Total assets | | 223,060 | 230,296 |")
    parent = ("# Note 28. Parent entity information (continued)\n\nStatement of financial position\n\n# Parent\n\n"
              "Table: Parent — values in AUD\n| | 2022 | 2021 |\n|---|---|---|\n| | $'000 | $'000 |\n"
              "| Total assets | 94,005 | 93,258 |")
    cands = F.build_candidates(cfg_(make_cfg), Q_TA, [pg(parent, 67, 0), pg(consolidated, 30, 2)], "AUD", "Acme Corp")
    assert (cands[0].value, cands[0].period) == (223_060_000, "2022")
    assert "parent company only" in cands[1].notes
    para = parent.replace("# Note 28. Parent entity information (continued)", "Since the IPO the parent entity has "
                          "continued to invest in the central services team, as shown in the table below and in "
                          "the notes to the financial statements").replace("# Parent\n\n", "").replace("Parent —", "—")
    assert "parent company only" not in F.build_candidates(cfg_(make_cfg), Q_TA, [pg(para)], "AUD", "Acme Corp")[0].notes


def test_header_text_rows_above_a_period_row_and_the_unit_phrase_before_a_stray_title(make_cfg):
    """"Year ended" / "March 31," / "Notes | 2021 | 2022" at the body's top are the header (the 2022 column,
    not the notes one); "Thousands of" left over in the title does not override the unit phrase."""
    md = ("Table: Thousands of — values in millions of JPY (as printed: \"Millions of yen\")\n"
          "| | | Millions of yen | | U.S. dollars |\n|---|---|---|---|---|\n| | | Year ended | | Year ended |\n"
          "| | | March 31, | | March 31, |\n| | Notes | 2021 | 2022 | 2022 |\n"
          "| Revenue | 7, 26 | 995,940 | 1,128,914 | 9,231,449 |\n| Cost of sales | 10 | (643,563) | (710,462) | (5,809,649) |")
    q = Q_REV.replace("(in USD)", "(in JPY)")
    cands = F.build_candidates(cfg_(make_cfg), q, [pg(md)], "JPY", "Acme Corp")
    assert (cands[0].value, cands[0].unit) == (1_128_914_000_000, "millions of JPY")


def test_the_whole_over_its_parts_for_a_total_only_in_the_same_dated_period(make_cfg):
    """A segment's "Total revenue" (better retrieved, printed twice) gives way to the consolidated one of the
    same year; not when the larger one's column is undated (it may be the prior year's)."""
    seg = ("Table: Auctions and marketplaces — values in thousands of USD\n| | 2022 | 2021 |\n|---|---|---|\n"
           "| Total revenue | 1,535,220 | 1,300,000 |")
    cons = ("Table: Consolidated income statement — values in thousands of USD\n| | 2022 | 2021 |\n|---|---|---|\n"
            "| Total revenue | 1,733,808 | 1,400,000 |")
    pages = [pg(seg, 51, 0), pg(seg, 52, 1), pg(cons, 76, 5)]
    cands, _, _ = P.gather_candidates(cfg_(make_cfg), Q_REV, pages, "USD", "Acme Corp")
    assert cands[0].value == 1_733_808_000 and "the whole over its parts" in cands[0].notes
    undated = cons.replace("| | 2022 | 2021 |", "| | | |")
    cands, _, _ = P.gather_candidates(cfg_(make_cfg), Q_REV, [pg(seg, 51, 0), pg(seg, 52, 1), pg(undated, 76, 5)],
                                      "USD", "Acme Corp")
    assert cands[0].value == 1_535_220_000
    q = Q_REV.replace("Total revenue", "Revenue")  # no total asked: no reordering
    assert P.gather_candidates(cfg_(make_cfg), q, pages, "USD", "Acme Corp")[0][0].value == 1_535_220_000


def test_bullet_column_pence_cells_plain_heading_rows_and_real_estate_capex(make_cfg):
    """A grid whose first column holds list bullets is labelled by its second; "11.3 p" is a per-share amount; a
    heading label followed by two plain amount lines is a row dated by the page's year headings in print
    order; "Additions to real estate" is a REIT's capital expenditure."""
    kpi = ("Table: Key performance indicators — values in GBP\n| | | 30 September | 30 September | Change |\n"
           "|---|---|---|---|---|\n| | | 2022 | 2021 | % |\n| • | Company net asset value | £6.6 m | £14.1 m | -53.2% |\n"
           "| • | Net asset value per share | 11.3 p | 24.4 p | -53.7% |")
    q = custom_q("Net asset value per share (pence)")
    assert F.build_candidates(cfg_(make_cfg), q, [pg(kpi)], "GBP", "Acme Corp")[0].value == 11.3
    md = ("Statement of financial position As at 30 June 2022\n\n# Note\n\n# 2022\n\n# 2021\n\n"
          "Table: values in AUD (as printed: \"$ $\")\n| | | | |\n|---|---|---|---|\n| Cash | 8 | 1,334,877 | 2,010,840 |\n\n"
          "# Total assets\n\n7,710,615\n\n8,818,186\n")
    cands = F.build_candidates(cfg_(make_cfg), Q_TA, [pg(md)], "AUD", "Acme Corp")
    assert (cands[0].value, cands[0].period) == (7_710_615, "2022")
    cf = ("Table: Cash flows — values in thousands of USD\n| | 2022 | 2021 |\n|---|---|---|\n"
          "| CASH FLOWS FROM INVESTING ACTIVITIES: | | |\n| Additions to real estate | (93) | (140) |")
    capex = Q_REV.replace("Total revenue", "Capital expenditures")
    assert abs(F.build_candidates(cfg_(make_cfg), capex, [pg(cf)], "USD", "Acme Corp")[0].value) == 93_000


def custom_q(metric: str) -> str:
    return (f"For Acme Corp, what was the value of {metric} at the end of the period listed in annual report? "
            "If data is not available, return 'N/A'.")


def test_a_period_header_printed_below_its_grid(make_cfg):
    """The parser printed "Year Ended December 31, 2022 December 31, 2021 ..." after the grid: it dates the
    columns (a programme's row is then no undated guess)."""
    md = ("The following table indicates the amount incurred for each of our significant research programs.\n\n"
          "Table: Year Ended — values in thousands of USD (as printed: \"(In thousands)\")\n| | | | |\n|---|---|---|---|\n"
          "| Barzolvolimab/Anti-KIT Program | $ 51,220 | $ 24,395 | $ 8,444 |\n| Total R&D Expense | $ 82,258 | $ 53,311 | $ 42,534 |\n\n"
          "Year Ended December 31, 2022 December 31, 2021 December 31, 2020 (In thousands)\n")
    assert F.years_below(md, 0, 4) == [(1, 2022), (2, 2021), (3, 2020)]
    assert F.years_below(md.replace("(In thousands)", "compared with our peers"), 0, 4) == []
    q = Q_REV.replace("Total revenue", "Total R&D Expense")
    cands = F.build_candidates(cfg_(make_cfg), q, [pg(md)], "USD", "Acme Corp")
    assert (cands[0].value, cands[0].period, cands[0].notes) == (82_258_000, "2022", [])


def test_the_total_row_of_a_breakdown_whose_column_names_the_metric(make_cfg):
    """"| Total | 77,642 |" under "Number of employees (Persons)" (rows are segments) is the count, dated by "As
    of March 31, 2022" printed below the grid; a segment's row is not."""
    md = ("5. Employees (1) Information about group\n\nTable: (1) Information about group\n"
          "| Segment name | Number of employees (Persons) |\n|---|---|\n| Printing Solutions | 52,842 |\n"
          "| Others | 399 |\n| Total | 77,642 |\n\nAs of March 31, 2022\n")
    cands = F.build_candidates(cfg_(make_cfg), custom_q("Number of employees"), [pg(md)], "JPY", "Acme Corp")
    assert [(c.label, c.value, c.period) for c in cands] == [("Total", 77_642, "2022")]


def test_the_reports_wordings_of_capex_and_eps():
    capex = Q_CFO.replace("Cash flow from operations", "Capital expenditures")
    eps = Q_CFO.replace("Cash flow from operations", "EPS (earnings per share)")
    for q, labels in ((capex, ("Purchases of premises and equipment", "Net purchases of fixed assets",
                               "Additions to premises and equipment", "Net payments on premises and equipment")),
                      (eps, ("Basic and diluted earnings per share", "Diluted earnings per share"))):
        terms, al = metric.metric_terms(q, "Acme Corp"), F.aliases_for(q, "Acme Corp")
        for label in labels:
            assert F.label_score(label, terms, al) >= F.ALIAS_SCORE, label
    terms, al = metric.metric_terms(capex, "Acme Corp"), F.aliases_for(capex, "Acme Corp")
    assert F.label_score("Proceeds from sale of premises and equipment", terms, al) < F.ALIAS_SCORE


def test_a_grid_split_off_a_scaled_statement_keeps_its_scale(make_cfg):
    deposits = Q_REV.replace("What was the Total revenue (in USD) for Acme Corp", "For Acme Corp, what was the "
                             "value of Total deposits at year-end").replace("according to the annual report ", "")
    md = ("Table: Statements of Financial Condition — values in thousands of USD\n| | 2022 | 2021 |\n|---|---|---|\n"
          "| Total Assets | $ 3,546,193 | $ 2,967,528 |\n\n# LIABILITIES AND STOCKHOLDERS' EQUITY\n\n"
          "Table: LIABILITIES AND STOCKHOLDERS' EQUITY — values in USD\n| | | |\n|---|---|---|\n"
          "| Total deposits | 2,811,607 | 2,561,402 |")
    (c,) = F.build_candidates(cfg_(make_cfg), deposits, [pg(md)], "USD", "Acme Corp")
    assert c.value == 2_811_607_000 and c.factor == 1000
    alone = md[md.index("# LIABILITIES"):]  # no scaled grid above it on its page: the scale stays unstated
    (c,) = F.build_candidates(cfg_(make_cfg), deposits, [pg(alone)], "USD", "Acme Corp")
    assert c.value == 2_811_607 and "scale not stated" in c.unit


def test_a_grid_split_from_its_dated_statement_by_a_text_line_keeps_the_statements_periods(make_cfg):
    """The parser split a cash-flow statement at a wrapped label ("Adjustments to reconcile ..."): the second grid
    has no header row. Of the same width on the same page, it continues the dated grid above it, also for a
    question that names no period (it is no undated guess); a grid of another width does not."""
    md = ("Acme Corp Consolidated Statements of Cash Flows (In thousands)\n\nYear Ended November 30,\n\n"
          "Table: values in thousands of USD (as printed: \"(In thousands)\")\n| | 2022 | 2021 | 2020 |\n|---|---|---|---|\n"
          "| Net earnings | $ 781,710 | $ 1,677,376 | $ 768,410 |\n\n"
          "Adjustments to reconcile net earnings to net cash provided by\n\n"
          "Table: Adjustments to reconcile net earnings to net cash provided by — values in thousands of USD\n"
          "| | | | |\n|---|---|---|---|\n| Depreciation and amortization | 189,343 | 144,255 | 136,475 |\n"
          "| Net cash provided by operating activities | 1,804,849 | 1,582,290 | 2,055,439 |\n")
    cands = F.build_candidates(cfg_(make_cfg), Q_CFO, [pg(md)], "USD", "Acme Corp")
    assert (cands[0].value, cands[0].period, cands[0].notes) == (1_804_849_000, "2022", [])
    wider = md.replace("| | | | |\n|---|---|---|---|", "| | | | | |\n|---|---|---|---|---|").replace(
        "| 1,804,849 |", "| 1,804,849 | 7 |")
    cands = F.build_candidates(cfg_(make_cfg), Q_CFO, [pg(wider)], "USD", "Acme Corp")
    assert "undated" in cands[0].notes
