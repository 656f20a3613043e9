"""rag.answer.text.events: which events of a kind the asked years saw, answered with the filing's own sentences
(``answer.text_events``)."""
from __future__ import annotations

import pytest

from rag.answer.common.context import CtxPage
from rag.answer.fuse import answer_pages
from rag.answer.text.events import EventsAsk, answer_events, events_ask
from rag.models.base import FakeLLM

SHA = "a" * 40
NOTE = """# Note 5 - ACQUISITIONS

# 2017 Acquisition Activity

On August 28, 2017, we acquired Whole Foods Market, a grocery store chain, for approximately $13.2 billion, net of cash acquired. During 2017, we also acquired certain other companies for an aggregate purchase price of $204 million.

# 2019 Acquisition Activity

During 2019, we acquired certain companies for an aggregate purchase price of $315 million.

Amortization expense for acquired intangible assets was $475 million in 2019.
"""
NONE = """# NOTE 3. Acquisitions and Divestitures

2022 acquisitions:

There were no acquisitions that closed during the year ended December 31, 2022.
"""


@pytest.mark.parametrize("question,ask", [
    ("What are major acquisitions that Acme has done in FY2019, FY2018 and FY2017?",
     EventsAsk("acqui", (2017, 2018, 2019), True)),
    ("What were the divestitures of Acme in 2022?", EventsAsk("dives", (2022,), False)),
    ("What are the geographies that Acme primarily operates in as of 2022?", None),  # no action noun
    ("What are major acquisitions that Acme has done?", None),  # no year
])
def test_a_list_of_events_its_kind_and_years(question, ask):
    assert events_ask(question) == ask


def test_the_filers_own_sentences_the_largest_first_in_the_filings_order(make_cfg):
    cfg = make_cfg(overrides={"answer.text_events": True})
    res = answer_events(cfg, "What are major acquisitions that Acme has done in FY2019, FY2018 and FY2017?",
                        [CtxPage(SHA, 54, NOTE, 0)])
    quoted = [s["text"] for s in res["interpretation"]["events"]["sentences"]]
    # three sentences at most: Whole Foods ($13.2 billion), 2019's $315 million, 2017's $204 million; not the
    # amortization of "acquired intangible assets" (no acquisition by the filer)
    assert quoted == ["On August 28, 2017, we acquired Whole Foods Market, a grocery store chain, for approximately "
                      "$13.2 billion, net of cash acquired.",
                      "During 2017, we also acquired certain other companies for an aggregate purchase price of $204 "
                      "million.",
                      "During 2019, we acquired certain companies for an aggregate purchase price of $315 million."]
    assert res["value"].endswith("(page 54)")


def test_a_year_without_any_is_quoted_as_the_filing_says_it_and_a_heading_is_no_sentence(make_cfg):
    res = answer_events(make_cfg(), "What are major acquisitions that Acme has done in FY2022?",
                        [CtxPage(SHA, 61, NONE, 0)])
    assert res["value"] == "There were no acquisitions that closed during the year ended December 31, 2022. (page 61)"


@pytest.mark.parametrize("on", [True, False])
def test_stage_06_answers_events_in_code_only_when_switched_on(make_cfg, on):
    llm = FakeLLM(lambda messages, schema: {"step_by_step_analysis": "", "reasoning_summary": "",
                                            "relevant_pages": [1], "final_answer": "Acme divested a business."})
    res = answer_pages(llm, make_cfg(overrides={"answer.text_events": on}), "text",
                       "What are major acquisitions that Acme has done in FY2022?", [CtxPage(SHA, 61, NONE, 0)],
                       "USD", len, "Acme")
    assert (res["value"].startswith("There were no acquisitions"), len(llm.calls)) == ((True, 0) if on else (False, 1))
