"""rag.answer.text.change: how much a figure changed between two years, answered in code from both years' table
figures (``answer.text_change``)."""
from __future__ import annotations

import pytest

from rag.answer.common.context import CtxPage
from rag.answer.fuse import answer_pages
from rag.answer.text.change import ChangeAsk, answer_change, change_ask
from rag.models.base import FakeLLM

SHA = "e" * 40
# The income-tax note's reconciliation: the effective rate beside the statutory one, years newest first.
TAXES = """# Income Taxes

Table: Reconciliation of effective income tax rate — values in %
|  | 2022 | 2021 | 2020 |
|---|---|---|---|
| Statutory U.S. tax rate | 21.0 % | 21.0 % | 21.0 % |
| State income taxes, net of federal benefit | 0.9 | 1.1 | 0.9 |
| Effective tax rate | 9.6 % | 17.8 % | 19.7 % |
"""
SALES = """# Results of Operations

Table: Net sales — values in millions of USD
|  | 2022 | 2021 |
|---|---|---|
| Net sales | $ 34,229 | $ 35,355 |
| Operating income | 6,539 | 7,369 |
"""


@pytest.mark.parametrize("question,company,ask", [
    ("How much has the effective tax rate of Acme changed between FY2021 and FY2022?", "Acme",
     ChangeAsk("effective tax rate", (2021, 2022))),
    ("What was the change in Acme's gross margin from FY2019 to FY2020?", "Acme", ChangeAsk("gross margin", (2019, 2020))),
    ("How much did Acme's net sales grow between 2021 and 2022?", "Acme", ChangeAsk("net sales", (2021, 2022))),
    ("How much has the effective tax rate of Acme changed in FY2022?", "Acme", None),  # one year
    ("What was Acme's effective tax rate in FY2021 and FY2022?", "Acme", None),  # no change asked
    ("Which segment grew the most between 2021 and 2022?", "", None),  # a ranking
    ("What drove the change in Acme's operating margin between FY2021 and FY2022?", "Acme", None),  # a cause
    # the template's closing sentence is no cause question
    ("What is the change in Acme's operating margin between FY2021 and FY2022? If operating margin is not a useful "
     "metric for a company like this, then state that and explain why.", "Acme",
     ChangeAsk("operating margin", (2021, 2022))),
])
def test_a_change_between_two_years_and_its_metric(question, company, ask):
    assert change_ask(question, company) == ask


def test_a_rate_changes_in_percentage_points_and_an_amount_in_its_units_and_percent(make_cfg):
    cfg = make_cfg()
    res = answer_change(cfg, "How much has the effective tax rate of Acme changed between FY2021 and FY2022?",
                        [CtxPage(SHA, 73, TAXES, 0)], "USD", "Acme")
    assert res["value"] == ("The effective tax rate fell from 17.8% in FY2021 to 9.6% in FY2022, a decrease of 8.2 "
                            "percentage points.")  # the effective rate's row, not the statutory rate's
    assert [p.page for p in res["cited"]] == [73]
    res = answer_change(cfg, "How much did Acme's net sales change between FY2021 and FY2022?",
                        [CtxPage(SHA, 48, SALES, 0)], "USD", "Acme")
    assert res["value"] == ("The net sales fell from 35,355 in FY2021 to 34,229 in FY2022 (in millions of USD), a "
                            "decrease of 1,126 (3.2%).")


def test_a_missing_year_leaves_the_reader_and_says_why(make_cfg):
    res = answer_change(make_cfg(), "How much has the effective tax rate of Acme changed between FY2019 and FY2020?",
                        [CtxPage(SHA, 73, TAXES, 0)], "USD", "Acme")
    assert res["value"] is None and "2019" in res["interpretation"]["change"]["missing"]


def _free_llm() -> FakeLLM:
    """The reader's free answer (what runs when the change is not answered in code)."""
    return FakeLLM(lambda messages, schema: {"step_by_step_analysis": "", "reasoning_summary": "",
                                             "relevant_pages": [1], "final_answer": "The statutory rate was 21%."})


@pytest.mark.parametrize("on", [True, False])
def test_stage_06_answers_a_change_in_code_only_when_switched_on(make_cfg, on):
    llm = _free_llm()
    res = answer_pages(llm, make_cfg(overrides={"answer.text_change": on}), "text",
                       "How much has the effective tax rate of Acme changed between FY2021 and FY2022?",
                       [CtxPage(SHA, 73, TAXES, 0)], "USD", len, "Acme")
    assert (res["value"].startswith("The effective tax rate fell"), len(llm.calls)) == ((True, 0) if on else (False, 1))


AMOUNTS = """# Consolidated Statements of Operations

Table: Consolidated Statements of Operations — values in millions of USD
| | 2017 | 2018 | 2019 |
|---|---|---|---|
| Total net sales | 177,866 | 232,887 | 280,522 |
| Income before income taxes | 3,806 | 11,261 | 13,976 |
| Provision for income taxes | (769) | (1,197) | (2,374) |
| Net income | 3,033 | 10,073 | 11,588 |
"""


@pytest.mark.parametrize("computed", [True, False])
def test_a_rate_the_filing_does_not_print_is_computed_from_its_operands(make_cfg, computed):
    cfg = make_cfg(overrides={"answer.computed_figures": computed})
    res = answer_change(cfg, "How much has the effective tax rate of Acme changed between FY2018 and FY2019?",
                        [CtxPage(SHA, 38, AMOUNTS, 0)], "USD", "Acme")
    if not computed:  # no printed rate and no computing: the reader answers
        assert res["value"] is None and "missing" in res["interpretation"]["change"]
        return
    # provision / income before taxes: 1,197 / 11,261 and 2,374 / 13,976
    assert res["value"] == ("The effective tax rate rose from 10.6% in FY2018 to 17.0% in FY2019, an increase of 6.4 "
                            "percentage points.")
    assert res["interpretation"]["change"]["computed"]["formula"] == "effective tax rate"
    assert [p.page for p in res["cited"]] == [38]
