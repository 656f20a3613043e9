"""rag.answer.booleans.computed_bool: yes/no questions decided from computed figures (sign, change between two years)."""
from __future__ import annotations

import pytest

from rag.answer.computed import computed as C
from rag.answer.booleans.computed_bool import answer_computed_bool, recognise_bool
from rag.answer.common.context import CtxPage
from rag.answer.fuse import answer_pages
from rag.core.config import project_path

A = "c" * 40
LEX = C.load_lexicon(project_path("prompts/figures/formulas.toml"))

BALANCE = """# Consolidated Balance Sheets

Table: Consolidated Balance Sheets — values in millions of USD (as printed: "(in millions)")
| | 2022 | 2021 |
|---|---|---|
| Total current assets | 1,250 | 1,554 |
| Property, plant and equipment, net | 14,882 | 13,745 |
| Total assets | 20,100 | 19,900 |
| Total current liabilities | 2,811 | 1,400 |
| Current portion of long-term debt | 5,247 | 2,749 |
| Long-term debt | 41,990 | 47,032 |
"""
# The same line item on another page, its "in millions" lost: 14,882 read as 14,882 dollars.
NOTE = """Table: Property, plant and equipment
| | 2022 |
|---|---|
| Property, plant and equipment, net | 14,882 |
"""
NOTE_2021 = """Table: Property, plant and equipment — values in millions of USD
| | 2021 |
|---|---|
| Property, plant and equipment, net | 13,745 |
"""


def cfg_(make_cfg, **over):
    return make_cfg(overrides={"answer.computed_figures": True, "answer.prose_candidates": False,
                               "answer.table_candidates": True, "answer.figure_pick": "code", **over})


@pytest.mark.parametrize("question,row", [
    ("Does American Water Works have positive working capital based on FY2022 data? If working capital is not a "
     "useful or relevant metric for this company, then please state that and explain why.",
     ("sign", "positive", [2022], "net working capital")),
    ("Has Microsoft increased its debt on balance sheet between FY2023 and the FY2022 period?",
     ("change", "up", [2022, 2023], "debt")),
    ("Did Pfizer grow its PPNE between FY20 and FY21?", ("change", "up", [2020, 2021], "ppe_net")),
    ("Has Verizon increased its debt on balance sheet between 2022 and the 2021 fiscal period?",
     ("change", "up", [2021, 2022], "debt")),
    ("Did the gross margin decline between FY2021 and FY2022?", ("change", "down", [2021, 2022], "gross margin")),
    # one year and a direction: that year against the one before it
    ("Has Microsoft increased its debt on balance sheet in FY2023?", ("change", "up", [2022, 2023], "debt")),
    ("Does Acme have an improving operating margin profile as of 2022? If operating margin is not a useful metric "
     "for a company like this, then state that and explain why.", ("change", "up", [2021, 2022], "operating margin")),
    ("Did Acme's gross margin deteriorate in FY2022?", ("change", "down", [2021, 2022], "gross margin")),
    # consistent within a band: the asked (or the pages') year and the two before it, filled in when answered
    ("Are Acme's gross margins historically consistent (not fluctuating more than roughly 2% each year)? If gross "
     "margins are not a relevant metric for a company like this, then please state that and explain why.",
     ("steady", "steady", [None], "gross margin")),
])
def test_recognised_shapes(question, row):
    r = recognise_bool(question, LEX).row()
    assert (r["shape"], r["want"], r["years"], r["formula"] or r["expression"]) == row


@pytest.mark.parametrize("question", [
    "Is 3M a capital-intensive business based on FY2022 data?",  # a judgement, not a figure's sign or change
    "Was American Express able to retain card members during 2022?",
    "Has Microsoft increased its debt on balance sheet?",  # no year: no change to compare
    "Was there any change in the number of Best Buy stores between Q2 of FY2024 and FY2023?",  # no operand
    "Did the company announce a share buyback plan in 2022?",
    "Are Acme's gross margins historically consistent?",  # no band: how much is consistent is not said
])
def test_not_recognised(question):
    assert recognise_bool(question, LEX) is None


def test_change_and_sign_decided_from_one_balance_sheet(make_cfg):
    cfg, pages = cfg_(make_cfg), [CtxPage(A, 60, BALANCE, 0, 1.0)]
    debt = answer_computed_bool(cfg, "Has Acme increased its debt on balance sheet between FY2022 and the FY2021 "
                                "period?", pages, "USD", "Acme")
    assert debt["value"] is False and [p.page for p in debt["cited"]] == [60]
    info = debt["interpretation"]["computed"]
    assert info["figures"] == [47_032e6, 41_990e6]  # long-term debt, not the current portion's row
    assert {o["label"] for o in info["operands"]} == {"Long-term debt"}
    grew = answer_computed_bool(cfg, "Did Acme grow its PP&E between FY21 and FY22?", pages, "USD", "Acme")
    assert grew["value"] is True
    wc = answer_computed_bool(cfg, "Does Acme have positive working capital based on FY2022 data?", pages, "USD", "Acme")
    assert wc["value"] is False and wc["interpretation"]["computed"]["figures"] == [(1_250 - 2_811) * 1e6]
    neg = answer_computed_bool(cfg, "Was Acme's working capital negative in FY2021?", pages, "USD", "Acme")
    assert neg["value"] is False  # 1,554 - 1,400 > 0
    one = answer_computed_bool(cfg, "Has Acme improved its PP&E in FY2022?", pages, "USD", "Acme")
    assert one["value"] is True and one["interpretation"]["computed"]["years"] == [2021, 2022]  # the year before


def test_both_years_from_one_page_first_and_a_lost_scale_taken_from_the_report(make_cfg):
    """fb-dev's Pfizer PP&E: 2020 read in millions on one page, 2021 as plain dollars on another page whose
    scale was lost -> "did not grow". One page holding both years wins; without one, a figure whose scale nothing
    states takes the scale of the report's other tables (millions here), so the years compare."""
    cfg = cfg_(make_cfg)
    q = "Did Acme grow its PPNE between FY21 and FY22?"
    both = [CtxPage(A, 59, NOTE, 0, 1.0), CtxPage(A, 60, BALANCE, 1, 0.9)]
    res = answer_computed_bool(cfg, q, both, "USD", "Acme")
    assert res["value"] is True and [p.page for p in res["cited"]] == [60]
    split = [CtxPage(A, 59, NOTE, 0, 1.0), CtxPage(A, 88, NOTE_2021, 1, 0.9)]
    res = answer_computed_bool(cfg, q, split, "USD", "Acme")
    assert res["value"] is True and res["interpretation"]["computed"]["figures"] == [13_745e6, 14_882e6]  # 2021, 2022


def test_missing_figure_says_why_and_06_asks_the_model_as_before(make_cfg):
    cfg = cfg_(make_cfg)
    q = "Does Acme have positive working capital based on FY2022 data?"
    liabilities_only = BALANCE.replace("| Total current assets | 1,250 | 1,554 |\n", "")
    res = answer_computed_bool(cfg, q, [CtxPage(A, 60, liabilities_only, 0, 1.0)], "USD", "Acme")
    assert res["value"] == "N/A" and "current_assets (2022) missing" in res["interpretation"]["computed"]["fallback"]

    class Model:  # the boolean path's model call, recorded
        calls = 0

        def complete(self, messages, schema=None, **kw):
            Model.calls += 1
            raise RuntimeError("the model was asked")

    # with the figures there, 06 answers without any model call
    out = answer_pages(Model(), cfg, "boolean", q, [CtxPage(A, 60, BALANCE, 0, 1.0)], "USD", lambda t: len(t) // 4,
                       "Acme")
    assert out["value"] is False and out["calls"] == [] and Model.calls == 0
    off = cfg_(make_cfg, **{"answer.computed_figures": False})
    assert answer_computed_bool(off, q, [CtxPage(A, 60, BALANCE, 0, 1.0)], "USD", "Acme")["value"] is False  # direct
    with pytest.raises(RuntimeError, match="the model was asked"):  # flag off: 06 asks the model
        answer_pages(Model(), off, "boolean", q, [CtxPage(A, 60, BALANCE, 0, 1.0)], "USD", lambda t: len(t) // 4,
                     "Acme")


INCOME = """# Consolidated Statement of Income

Table: Consolidated Statement of Income — values in millions of USD
| | 2022 | 2021 | 2020 |
|---|---|---|---|
| Net sales | 34,229 | 35,355 | 32,184 |
| Cost of sales | (19,232) | (18,795) | (16,605) |
| Operating income | 6,539 | 7,369 | 7,161 |
"""


@pytest.mark.parametrize("band,value", [(2, False), (3.5, True)])
def test_margins_consistent_within_a_band_over_three_years(make_cfg, band, value):
    q = f"Are Acme's gross margins historically consistent (not fluctuating more than roughly {band}% each year)?"
    res = answer_computed_bool(cfg_(make_cfg), q, [CtxPage(A, 48, INCOME, 0, 1.0)], "USD", "Acme")
    info = res["interpretation"]["computed"]
    assert info["years"] == [2020, 2021, 2022]
    # cost of sales counts without its parentheses: 48.4%, 46.8%, 43.8%; it moved 1.6 then 3.0 points
    assert [round(m, 1) for m in info["moves"]] == [1.6, 3.0]
    assert res["value"] is value
