"""rag.answer.text.drivers: what drove a figure's change, answered with both years' figures and the filing's own
sentences stating the cause (``answer.text_drivers``)."""
from __future__ import annotations

import pytest

from rag.answer.common.context import CtxPage
from rag.answer.fuse import answer_pages
from rag.answer.text.change import ChangeAsk
from rag.answer.text.drivers import answer_drivers, drivers_ask
from rag.models.base import FakeLLM

SHA = "d" * 40
STATEMENT = """# Consolidated Statements of Operations

Table: Consolidated Statements of Operations — values in millions of USD
| | 2022 | 2021 |
|---|---|---|
| Net sales | 19,000 | 18,000 |
| Operating profit | 3,476 | 3,130 |
"""
MDNA = """# Consolidated Results of Operations

Operating profit increased 11 percent to $3,476 million primarily driven by favorable net price realization and mix, partially offset by higher input costs.
Segment operating profit increased 26 percent to $256 million in fiscal 2022, primarily driven by favorable net price realization.
For fiscal 2021, operating profit decreased 2 percent primarily due to higher freight costs.
Changes in volume refer to increases or decreases in operating profit resulting from production levels.

Net sales increased 5 percent primarily due to higher prices.
"""
ANAPHOR = """# Results

Operating income increased 130.1% to $3.1 billion in 2022 compared to a loss of $10.2 billion in 2021. This increase was primarily driven by lower impairment losses in the current year.
"""


@pytest.mark.parametrize("question,ask", [
    ("What drove operating margin change as of FY2022 for Acme? If operating margin is not a useful metric for a "
     "company like this, then please state that and explain why.", ChangeAsk("operating margin", (2021, 2022))),
    ("What were the main drivers of Acme's gross margin change between FY2020 and FY2022?",
     ChangeAsk("gross margin", (2020, 2022))),
    ("Why did Acme's operating margin decline in 2023?", ChangeAsk("operating margin", (2022, 2023))),
    ("How much has the effective tax rate of Acme changed between FY2021 and FY2022?", None),  # a change's size
    ("What drove operating margin change for Acme?", None),  # no year
])
def test_a_cause_question_its_figure_and_years(question, ask):
    assert drivers_ask(question, "Acme") == ask


def _ask(make_cfg, pages, question="What drove operating margin change as of FY2022 for Acme?"):
    cfg = make_cfg(overrides={"answer.computed_figures": True, "answer.text_drivers": True})
    return answer_drivers(cfg, question, pages, "USD", "Acme")


def test_the_change_is_computed_and_the_company_s_own_cause_sentence_comes_first(make_cfg):
    res = _ask(make_cfg, [CtxPage(SHA, 40, STATEMENT, 0), CtxPage(SHA, 18, MDNA, 1)])
    # 3,130 / 18,000 = 17.4%, 3,476 / 19,000 = 18.3%
    assert res["value"].startswith("The operating margin rose from 17.4% in FY2021 to 18.3% in FY2022, an increase of "
                                   "0.9 percentage points. Operating profit increased 11 percent")
    quoted = [s["text"] for s in res["interpretation"]["drivers"]["sentences"]]
    assert len(quoted) == 2 and quoted[1].startswith("Segment operating profit")  # the company's figure first
    # another year's change, a definition stating no change, and the sales the margin is a share of: not quoted
    assert not any("fiscal 2021" in s or "refer to" in s or s.startswith("Net sales") for s in quoted)
    assert [p.page for p in res["cited"]] == [40, 18]


def test_a_this_sentence_carries_the_sentence_it_points_back_to(make_cfg):
    res = _ask(make_cfg, [CtxPage(SHA, 40, STATEMENT, 0), CtxPage(SHA, 28, ANAPHOR, 1)])
    assert res["interpretation"]["drivers"]["sentences"][0]["text"] == (
        "Operating income increased 130.1% to $3.1 billion in 2022 compared to a loss of $10.2 billion in 2021. This "
        "increase was primarily driven by lower impairment losses in the current year.")


def test_no_figure_or_no_cause_sentence_leaves_the_reader_and_says_why(make_cfg):
    res = _ask(make_cfg, [CtxPage(SHA, 18, MDNA, 0)])  # no statement: no margin to state
    assert res["value"] is None and "computed" in res["interpretation"]["drivers"]
    res = _ask(make_cfg, [CtxPage(SHA, 40, STATEMENT, 0)])  # figures, but no sentence gives a cause
    assert res["value"] is None and "no sentence" in res["interpretation"]["drivers"]["sentences"]


@pytest.mark.parametrize("on", [True, False])
def test_stage_06_answers_drivers_in_code_only_when_switched_on(make_cfg, on):
    llm = FakeLLM(lambda messages, schema: {"step_by_step_analysis": "", "reasoning_summary": "",
                                            "relevant_pages": [1], "final_answer": "It is not a useful metric."})
    cfg = make_cfg(overrides={"answer.computed_figures": True, "answer.text_drivers": on})
    res = answer_pages(llm, cfg, "text", "What drove operating margin change as of FY2022 for Acme?",
                       [CtxPage(SHA, 40, STATEMENT, 0), CtxPage(SHA, 18, MDNA, 1)], "USD", len, "Acme")
    assert (res["value"].startswith("The operating margin rose"), len(llm.calls)) == ((True, 0) if on else (False, 1))
