"""rag.answer.computed.computed: ratios, margins, growth and averages computed in code from operand candidates."""
from __future__ import annotations

import pytest

from rag.answer.computed import computed as C
from rag.answer.common.context import CtxPage
from rag.answer.fuse import answer_pages
from rag.answer.numbers.grid_context import years_above
from rag.core.config import project_path

A = "b" * 40
COUNT = lambda t: len(t) // 4  # noqa: E731
LEX = C.load_lexicon(project_path("prompts/figures/formulas.toml"))

INCOME = """# Consolidated Statements of Income

Table: Consolidated Statements of Income — values in millions of USD (as printed: "(in millions)")
| | 2018 | 2017 | 2016 |
|---|---|---|---|
| Net sales | 1,200 | 1,000 | 800 |
| Cost of sales | 700 | 600 | 500 |
| Gross profit | 500 | 400 | 300 |
| Operating income | 150 | 120 | 90 |
| Net income | 100 | 80 | 60 |
"""
# The parser lost the grid's header row: the years stand on the lines above it.
BALANCE = """# Consolidated Balance Sheets

# December 31, 2018 December 31, 2017

Table: Assets — values in millions of USD (as printed: "(in millions)")
| | | |
|---|---|---|
| Inventories | 220 | 180 |
| Total current assets | 900 | 800 |
| Total assets | 2,100 | 1,900 |

# Liabilities

Table: Liabilities — values in millions of USD (as printed: "(in millions)")
| | | |
|---|---|---|
| Accounts payable | 130 | 110 |
| Total current liabilities | 600 | 500 |
"""
CASH = """Table: Consolidated Statements of Cash Flows — values in millions of USD
| | 2018 | 2017 |
|---|---|---|
| Depreciation and amortization | 40 | 35 |
| Net cash provided by operating activities | 210 | 190 |
| Purchases of property, plant and equipment | (60) | (50) |
| Dividends paid | (30) | (25) |
"""


def pages() -> list[CtxPage]:
    return [CtxPage(A, 40, INCOME, 0, 1.0), CtxPage(A, 42, BALANCE, 1, 0.9), CtxPage(A, 44, CASH, 2, 0.8)]


def cfg_(make_cfg, **over):
    # the offline number path (table candidates picked in code, N/A without one): no model call anywhere here
    return make_cfg(overrides={"answer.computed_figures": True, "answer.prose_candidates": False,
                               "answer.table_candidates": True, "answer.figure_pick": "code",
                               "answer.figure_fallback": "na", "answer.max_pages": 3, **over})


# ---- recognising the formula, its years and rounding (real fb-dev wordings) ---------------------------
@pytest.mark.parametrize("question,name,year,extra", [
    ("What is Amazon's FY2017 days payable outstanding (DPO)? DPO is defined as: 365 * (average accounts payable "
     "between FY2016 and FY2017) / (FY2017 COGS + change in inventory between FY2016 and FY2017). Round your answer "
     "to two decimal places.", "days payable outstanding", 2017, {"decimals": 2}),
    ("What is Amazon's year-over-year change in revenue from FY2016 to FY2017 (in units of percents and round to "
     "one decimal place)?", "growth", 2017, {"metric": "revenue", "percent": True, "decimals": 1}),
    ("what is American Water Works's FY2021 unadjusted operating income + depreciation and amortization from the "
     "cash flow statement (unadjusted EBITDA) in USD millions?", "EBITDA", 2021, {"scale": 1e6}),
    ("what is the FY2015 - FY2017 3 year average net profit margin (as a %) for Best Buy? Answer in units of percents "
     "and round to one decimal place.", "net profit margin", 2017, {"average": 3, "percent": True, "decimals": 1}),
    ("What is the FY2017 return on assets (ROA) for Coca Cola? ROA is defined as: FY2017 net income / (average total "
     "assets between FY2016 and FY2017). Round your answer to two decimal places.", "return on assets", 2017,
     {"percent": False}),
    ("What is the FY2019 cash conversion cycle (CCC) for General Mills? CCC is defined as: DIO + DSO - DPO.",
     "cash conversion cycle", 2019, {}),
    ("what is General Mills's FY2020 working capital ratio? Define working capital ratio as total current assets "
     "divided by total current liabilities.", "current ratio", 2020, {}),
    ("What is the FY2020 free cash flow (FCF) for General Mills? FCF here is defined as: (cash from operations - "
     "capex). Answer in USD millions.", "free cash flow", 2020, {"scale": 1e6}),
    ("what is the FY2022 retention ratio (using total cash dividends paid and net income attributable to "
     "shareholders) for General Mills? Round answer to two decimal places.", "retention ratio", 2022, {"decimals": 2}),
    ("What is Kraft Heinz's FY2019 inventory turnover ratio?", "inventory turnover", 2019, {}),
    ("what is Lockheed Martin's FY2020 asset turnover ratio?", "asset turnover", 2020, {}),
    ("What is Lockheed Martin's FY2021 net working capital? Define net working capital as total current assets less "
     "total current liabilities. Answer in USD millions.", "net working capital", 2021, {}),
    ("What is Lockheed Martin's 2 year total revenue CAGR from FY2020 to FY2022 (in units of percents and round to "
     "one decimal place)?", "CAGR", 2022, {"start": 2020, "metric": "revenue"}),
    ("what is Nike's three year average of cost of goods sold as a % of revenue from FY2016 to FY2018?",
     "COGS as % of revenue", 2018, {"average": 3}),
    ("What is the FY2022 unadjusted EBITDA less capex for PepsiCo?", "EBITDA less capex", 2022, {}),
    ("What is the FY2022 unadjusted EBITDA % margin for PepsiCo?", "EBITDA margin", 2022, {"percent": True}),
    # the issue's own examples, worded as FinanceBench words its questions
    ("What is 3M's 3-year average capex as % of revenue from FY2016 to FY2018?", "capex as % of revenue", 2018,
     {"average": 3, "percent": True}),
    ("What is the FY2019 fixed asset turnover ratio for Nike?", "fixed asset turnover", 2019, {}),
    ("What is the quick ratio for FY2022 of Verizon? Round to two decimal places.", "quick ratio", 2022,
     {"decimals": 2}),
    ("What is the FY2019 - FY2021 total revenue compound annual growth rate for Amazon?", "CAGR", 2021,
     {"start": 2019, "metric": "revenue"}),
])
def test_recognise_real_wordings(question, name, year, extra):
    ask = C.recognise(question, LEX)
    assert ask is not None and ask.formula.name == name and ask.year == year
    for k, v in extra.items():
        assert getattr(ask, k) == v, k


@pytest.mark.parametrize("question,name,expr", [
    ("What is the FY2018 capital expenditure amount (in USD millions) for 3M?", "capital expenditure", "capex"),
    ("What is the year end FY2019 total amount of inventories for Best Buy? Answer in USD millions.", "inventories",
     "inventory"),
    ("what is the year end FY2018 net PPNE for 3M? Answer in USD billions.", "net PP&E", "ppe_net"),
])
def test_plain_line_items_are_read_from_the_asked_years_column(question, name, expr):
    """One line item in a named year: an identity formula (after every ratio in the file), so the figure
    comes from that year's column like an operand."""
    ask = C.recognise(question, LEX)
    assert ask.formula.name == name and ask.formula.expr == expr and ask.year is not None


def test_a_ratio_naming_a_line_item_is_still_the_ratio():
    assert C.recognise("What is the FY2019 inventory turnover ratio for Kraft Heinz?", LEX).formula.name == \
        "inventory turnover"
    assert C.recognise("What is the FY2016 capex as % of revenue?", LEX).formula.name == "capex as % of revenue"


def test_growth_or_cagr_without_a_named_metric_or_span_is_not_recognised():
    assert C.recognise("What is the FY2022 year-over-year growth?", LEX) is None  # which metric?
    assert C.recognise("What is the revenue CAGR?", LEX) is None  # over which years?


# ---- arithmetic and rounding ----------------------------------------------------------------------------
def test_evaluate_avg_prev_start_and_n_year_average():
    vals = {("x", 2018): 10.0, ("x", 2017): 6.0, ("x", 2016): 5.0, ("y", 2018): 2.0, ("y", 2017): 4.0}
    f = C.Formula("t", ("t",), "avg(x) / y + prev(x)", "ratio", C.ast.parse("avg(x) / y + prev(x)", mode="eval"))
    ask = C.Ask(f, 2018)
    assert C.evaluate(ask, lambda n, y: vals[n, y], 2018) == pytest.approx(8 / 2 + 6)
    avg = C.Ask(C.Formula("m", ("m",), "x / y", "share", C.ast.parse("x / y", mode="eval")), 2018, average=2)
    assert C.evaluate(avg, lambda n, y: vals[n, y], 2018) == pytest.approx((10 / 2 + 6 / 4) / 2)
    cagr = C.recognise("What is the 2 year revenue CAGR from FY2016 to FY2018?", LEX)
    rev = {2018: 121.0, 2016: 100.0}
    assert C.evaluate(cagr, lambda n, y: rev[y], 2018) == pytest.approx(0.1)


def test_present_rounds_as_asked():
    share = C.recognise("What is the FY2018 net profit margin in percent, rounded to one decimal place?", LEX)
    assert C.present(share, 0.08333, 4) == (8.3, "%")
    ratio = C.recognise("What is the FY2018 current ratio? Round your answer to two decimal places.", LEX)
    assert C.present(ratio, 1.8, 4) == (1.8, "ratio") and C.present(ratio, 1.23456, 4)[0] == 1.23
    money = C.recognise("What is the FY2018 free cash flow? Answer in USD billions, round to one decimal place.", LEX)
    assert C.present(money, 3_215_400_000, 4) == (3_200_000_000, "money")
    plain = C.recognise("What is the FY2018 inventory turnover?", LEX)
    assert C.present(plain, 3.456789, 4) == (3.4568, "times")  # no rounding asked: answer.computed_decimals


# ---- operands from candidate pages: year columns, debug record, fallback -------------------------------------
def test_years_above_a_grid_whose_header_row_was_lost():
    assert years_above(BALANCE, 0, 3) == [(1, 2018), (2, 2017)]
    assert years_above(BALANCE, 1, 3) == []  # table rows above: the dated table above it lends its years
    assert years_above("Some sentence about 2018 and 2017 results in many words here.\n| | | |\n|---|---|---|\n"
                       "| Inventories | 1 | 2 |", 0, 3) == []


def test_dpo_from_two_year_columns_with_operands_in_the_debug_record(make_cfg):
    q = ("What is the FY2018 days payable outstanding (DPO)? DPO is defined as: 365 * (average accounts payable "
         "between FY2017 and FY2018) / (FY2018 COGS + change in inventory between FY2017 and FY2018). Round your "
         "answer to two decimal places.")
    res = C.answer_computed(cfg_(make_cfg), q, pages(), "USD", "Acme")
    assert res["value"] == round(365 * ((130e6 + 110e6) / 2) / (700e6 + 220e6 - 180e6), 2) == 59.19
    info = res["interpretation"]["computed"]
    assert info["formula"] == "days payable outstanding" and info["year"] == 2018
    ops = {(o["operand"], o["year"]): o for o in info["operands"]}
    assert set(ops) == {("payables", 2018), ("payables", 2017), ("cogs", 2018), ("inventory", 2018),
                        ("inventory", 2017)}
    assert ops["inventory", 2017]["value"] == 180e6 and ops["inventory", 2017]["page"] == 42
    assert ops["inventory", 2017]["period"] == "2017" and ops["cogs", 2018]["label"] == "Cost of sales"
    assert ops["cogs", 2018]["line"] == "| Cost of sales | 700 | 600 | 500 |"
    assert {p.page for p in res["cited"]} == {40, 42}


def test_margin_average_growth_and_cash_flow_formulas(make_cfg):
    cfg = cfg_(make_cfg)
    avg = C.answer_computed(cfg, "What is the FY2016 - FY2018 3 year average net profit margin (as a %)? Round to "
                                 "one decimal place.", pages(), "USD", "Acme")
    assert avg["value"] == round(100 * (100 / 1200 + 80 / 1000 + 60 / 800) / 3, 1)
    g = C.answer_computed(cfg, "What is the year-over-year change in revenue from FY2017 to FY2018 (in percent)?",
                          pages(), "USD", "Acme")
    assert g["value"] == pytest.approx(20.0)
    fcf = C.answer_computed(cfg, "What is the FY2018 free cash flow? Answer in USD millions.", pages(), "USD", "Acme")
    assert fcf["value"] == 150_000_000  # capex "(60)" counts without its sign
    ret = C.answer_computed(cfg, "What is the FY2018 retention ratio? Round to two decimal places.", pages(), "USD", "")
    assert ret["value"] == 0.7
    at = C.answer_computed(cfg, "What is the FY2018 asset turnover? Round to two decimal places.", pages(), "USD", "")
    assert at["value"] == round(1200 / 2000, 2)  # "Total current assets" is not total assets


def test_a_figure_in_another_currency_than_asked_is_not_computed(make_cfg):
    cfg = cfg_(make_cfg)
    fcf = "What is the FY2018 free cash flow (in {})? Answer in millions."
    assert C.answer_computed(cfg, fcf.format("USD"), pages(), "USD", "Acme")["value"] == 150_000_000
    res = C.answer_computed(cfg, fcf.format("AUD"), pages(), "USD", "Acme")  # a USD report asked in AUD
    assert res["value"] == "N/A" and "asked AUD, figures in USD" in res["interpretation"]["computed"]["fallback"]


def test_balance_sheet_item_refuses_a_cash_flow_change_row_ranked_above_it(make_cfg):
    changes = """Table: Consolidated Statements of Cash Flows — values in millions of USD
| | 2018 | 2017 |
|---|---|---|
| Changes in operating assets and liabilities: | | |
| Inventories | (40) | (15) |
| Accounts payable | 20 | 12 |
"""
    ranked = [CtxPage(A, 30, changes, 0, 1.0), *[CtxPage(p.sha1, p.page, p.text, p.rank + 1) for p in pages()]]
    res = C.answer_computed(cfg_(make_cfg), "What is the FY2018 inventory turnover? Round to two decimal places.",
                            ranked, "USD", "Acme")
    ops = res["interpretation"]["computed"]["operands"]
    assert res["value"] == round(700 / 200, 2) and {o["page"] for o in ops if o["operand"] == "inventory"} == {42}


def test_missing_operand_falls_back_to_the_usual_path_and_says_why(make_cfg):
    cfg = cfg_(make_cfg)
    q = "What is the FY2017 days payable outstanding (DPO)? Round to two decimal places."  # 2016 balance not printed
    res = C.answer_computed(cfg, q, pages(), "USD", "Acme")
    assert res["value"] == "N/A" and res["cited"] == []
    assert "payables (2016) missing" in res["interpretation"]["computed"]["fallback"]
    out = answer_pages(None, cfg, "number", q, pages(), "USD", COUNT, "Acme")  # code pick, no model call
    assert out["interpretation"]["computed"]["fallback"].startswith("operand payables (2016)")
    assert out["value"] == "N/A"  # no table row names "days payable outstanding": nothing made up


def test_no_formula_or_flag_off_leaves_the_number_path_alone(make_cfg):
    q = "What is the FY2018 Net sales (in USD)?"
    on = answer_pages(None, cfg_(make_cfg), "number", q, pages(), "USD", COUNT, "Acme")
    off = answer_pages(None, cfg_(make_cfg, **{"answer.computed_figures": False}), "number", q, pages(), "USD", COUNT,
                       "Acme")
    assert on["value"] == off["value"] == 1_200_000_000 and "computed" not in on["interpretation"]
    dpo = "What is the FY2018 days payable outstanding (DPO)?"
    assert "computed" not in (answer_pages(None, cfg_(make_cfg, **{"answer.computed_figures": False}), "number", dpo,
                                           pages(), "USD", COUNT, "Acme")["interpretation"] or {})


def test_bad_lexicon_names_the_file_and_entry(tmp_path):
    bad = tmp_path / "f.toml"
    bad.write_text('[operands.x]\nphrase = "x"\n[[formula]]\nname = "evil"\nmatch = ["e"]\nexpr = "__import__(1)"\n'
                   'unit = "ratio"\n')
    with pytest.raises(ValueError, match=r"f\.toml: formula evil: only prev"):
        C.load_lexicon(bad)
    bad.write_text('[operands.x]\nphrase = "x"\n[[formula]]\nname = "f"\nmatch = ["e"]\nexpr = "x / y"\n'
                   'unit = "ratio"\n')
    with pytest.raises(ValueError, match="unknown operand 'y'"):
        C.load_lexicon(bad)
    bad.write_text('[operands.x]\nphrase = "x"\n[[formula]]\nname = "f"\nmatch = ["e"]\nexpr = "x"\nunit = "cubits"\n')
    with pytest.raises(ValueError, match="unit 'cubits'"):
        C.load_lexicon(bad)


def test_the_06_debug_record_carries_formula_operands_and_references(make_cfg):
    """answer_question (stage 06, one question): value, references on the operands' pages, the computed record."""
    from types import SimpleNamespace

    from rag.answer import answer_question
    from rag.core.dataset import Question
    from rag.core.records import CandidatePage, RetrievalRecord, RoutedReport

    q = Question(qid="q0", text="What is the FY2018 current ratio for Acme? Round to two decimal places.",
                 kind="number")
    cands = [CandidatePage(sha1=p.sha1, page=p.page, text=p.text, scores={"final": p.score}) for p in pages()]
    rec = RetrievalRecord(qid="q0", question=q.text, kind="number", routed=[RoutedReport(sha1=A, company="Acme")],
                          candidates={A: cands})
    ds = SimpleNamespace(report=lambda sha1: SimpleNamespace(currency="USD", company="Acme"))
    out = answer_question(None, cfg_(make_cfg), ds, q, rec, COUNT)
    assert out["value"] == 1.5 and out["na_reason"] is None
    assert out["references"] == [{"sha1": A, "page": 42}]  # the page both operands were read from (1-based)
    comp = out["interpretation"]["computed"]
    assert comp["formula"] == "current ratio" and comp["value"] == 1.5
    assert [(o["operand"], o["value"], o["page"]) for o in comp["operands"]] == [
        ("current_assets", 900e6, 42), ("current_liabilities", 600e6, 42)]


def test_computed_reason_names_formula_operands_pages_and_result():
    from rag.answer.computed.computed import computed_reason
    from rag.ask import _reason

    comp = {"formula": "net working capital", "operands": [
        {"operand": "current_assets", "year": 2022, "printed": "3,000", "unit": "millions of USD",
         "label": "Total current assets", "page": 82},
        {"operand": "current_liabilities", "year": 2022, "printed": "4,000", "unit": "millions of USD",
         "label": "Total current liabilities", "page": 82}]}
    text = computed_reason(comp, False)
    assert text.startswith("Computed in code: net working capital from current_assets 2022 = 3,000 millions of USD")
    assert "(Total current liabilities, page 82)" in text and text.endswith("-> no.")
    assert computed_reason({"formula": "x"}, 1.0) == ""  # nothing computed: nothing said
    # `rag ask` says it for any kind answered in code, the model's summary otherwise
    assert _reason({"kind": "number", "value": -1000.0,
                    "interpretation": {"source": "computed", "computed": comp}}).endswith("-> -1000.0.")
    assert _reason({"kind": "boolean", "calls": [{"parsed": {"reasoning_summary": "Page 5 says so."}}]}) == "Page 5 says so."
    # a yes/no read without reasoning (answer.boolean_reasoning false): P(true) of each page read
    assert _reason({"kind": "boolean", "calls": [
        {"parsed": None, "p_true": 0.05, "pages": [{"sha1": "s", "page": 3}]},
        {"parsed": None, "p_true": 0.312, "pages": [{"sha1": "s", "page": 12}]}]}) == \
        "page 3: P(true) 0.05; page 12: P(true) 0.31"


# The MD&A's free cash flow tables print capex net of proceeds, three times (as Amazon's 2019 MD&A does: each
# printing supports the others); the statement 05 added prints the gross purchases, once.
_FCF_TABLE = """Table: Free cash flow — values in millions of USD
| | 2019 | 2018 |
|---|---|---|
| Net cash provided by operating activities | 38,514 | 30,723 |
| Purchases of property and equipment, net of proceeds from sales and incentives | (12,689) | (11,323) |
"""
MDNA_FCF = "\n".join([_FCF_TABLE] * 3)
CASH_STATEMENT = """Table: Consolidated Statements of Cash Flows — values in millions of USD
| | 2019 | 2018 |
|---|---|---|
| Net cash provided by operating activities | 38,514 | 30,723 |
| Purchases of property and equipment | (16,861) | (13,427) |
"""


def test_an_operand_is_read_on_the_statement_the_question_names(make_cfg):
    q = ("What is the FY2019 capital expenditure amount (in USD millions) for Acme? Give a response to the question by "
         "relying on the details shown in the cash flow statement.")
    pages = [CtxPage(A, 29, MDNA_FCF, 0, 1.0), CtxPage(A, 37, CASH_STATEMENT, 2, 1.0, "cash_flow_statement")]
    res = C.answer_computed(cfg_(make_cfg), q, pages, "USD", "Acme")
    assert res["value"] == 16_861e6 and [p.page for p in res["cited"]] == [37]


KH_INCOME = """# Consolidated Statements of Income

Table: Consolidated Statements of Income — values in millions of USD (as printed: "(in millions)")
| | 2019 | 2018 | 2017 |
|---|---|---|---|
| Net sales | 24,977 | 26,268 | 26,076 |
| Cost of products sold | 16,830 | 17,347 | 17,043 |
| Net income/(loss) | 1,933 | (10,254) | 10,932 |
| Net income/(loss) attributable to noncontrolling interest | (2) | (62) | (9) |
| Net income/(loss) attributable to common shareholders | 1,935 | (10,192) | 10,941 |
"""
KH_BALANCE = """# Consolidated Balance Sheets

Table: Consolidated Balance Sheets — values in millions of USD (as printed: "(in millions)")
| | December 28, 2019 | December 29, 2018 |
|---|---|---|
| Inventories | 2,721 | 2,667 |
| Trade payables | 4,003 | 4,153 |
| Total current liabilities | 7,875 | 7,503 |
"""


def test_net_income_attributable_to_shareholders_and_trade_payables(make_cfg):
    """Kraft Heinz (fb-gen): "Net income/(loss)" scores as much as the line attributable to its shareholders, which
    the lexicon prefers, in every year; "Trade payables" is its accounts payable."""
    cfg = cfg_(make_cfg)
    pages = [CtxPage(A, 50, KH_INCOME, 0, 1.0), CtxPage(A, 52, KH_BALANCE, 1, 0.9)]
    npm = C.answer_computed(cfg, "What is the FY2017 - FY2019 3 year average net profit margin (as a %)? Answer in "
                                 "units of percents and round to one decimal place.", pages, "USD", "Acme")
    assert npm["value"] == round(100 * (1935 / 24977 - 10192 / 26268 + 10941 / 26076) / 3, 1) == 3.6
    dpo = C.answer_computed(cfg, "What is the FY2019 days payable outstanding (DPO)? DPO is defined as: 365 * (average "
                                 "accounts payable between FY2018 and FY2019) / (FY2019 COGS + change in inventory "
                                 "between FY2018 and FY2019). Round your answer to two decimal places.",
                            pages, "USD", "Acme")
    assert dpo["value"] == round(365 * (4003 + 4153) / 2 / (16830 + 2721 - 2667), 2)


GM_BALANCE = """# Consolidated Balance Sheets

Table: ASSETS — values in millions of USD (as printed: "(in millions)")
| | May 29, 2022 | May 30, 2021 |
|---|---|---|
| Land, buildings, and equipment | 3,393.8 | 3,606.8 |
| Total assets | 31,090.1 | 31,841.9 |

Table: Joint venture related balance sheet activity — values in millions of USD
| | 2022 | 2021 | 2020 |
|---|---|---|---|
| Total net sales | 2,134.3 | 2,189.2 | 2,045.6 |
"""
GM_INCOME = """# Consolidated Statements of Earnings

Table: Consolidated Statements of Earnings — values in millions of USD (as printed: "(in millions)")
| | 2022 | 2021 | 2020 |
|---|---|---|---|
| Net sales | 18,992.8 | 18,127.0 | 17,626.6 |
"""


def test_each_operand_is_read_on_the_named_statement_that_prints_it(make_cfg):
    """General Mills (fb-gen): of "the balance sheet and the P&L statement", revenue is read on the income statement,
    not from a joint venture's "Total net sales" on a page 05 took for a balance sheet; its PP&E line is "Land,
    buildings, and equipment"."""
    cfg = cfg_(make_cfg)
    pages = [CtxPage(A, 47, GM_BALANCE, 0, 1.0, "balance_sheet"), CtxPage(A, 45, GM_INCOME, 1, 1.0, "income_statement")]
    q = ("Basing your judgment by information plainly provided in the balance sheet and the P&L statement, what is "
         "Acme's FY2022 asset turnover ratio? Asset turnover ratio is defined as: FY2022 revenue / (average total "
         "assets between FY2021 and FY2022). Round your answer to two decimal places.")
    res = C.answer_computed(cfg, q, pages, "USD", "Acme")
    assert res["value"] == round(18992.8 / ((31090.1 + 31841.9) / 2), 2) == 0.6
    ppe = C.answer_computed(cfg, "Answer the following question by primarily using information that is shown in "
                                 "the balance sheet: what is the year end FY2022 net PPNE for Acme? Answer in USD "
                                 "billions.", pages, "USD", "Acme")
    assert ppe["value"] == 3_393_800_000  # money in units; 07 reads the gold's "$3.39" (billions) at its scale
