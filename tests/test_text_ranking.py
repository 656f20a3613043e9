"""Text questions asking which table row ranks first, answered in code (rag.answer.text.ranking, issue 48):
what counts as such a question, the row groups of a page (sections, totals), the group chosen by the question's
words, ranking by a figure or its change, the switch in stage 06 and N/A-free fallback to the free answer."""
from __future__ import annotations

import json

import pytest

from rag.answer.common.context import CtxPage
from rag.answer.fuse import answer_pages
from rag.answer.text.ranking import Ask, answer_ranking, ranking_ask
from rag.answer.text.row_groups import row_groups
from rag.models.base import LLMResult, Usage

SHA = "f" * 40
BALANCE = """# CONSOLIDATED BALANCE SHEETS

Table: Assets — values in USD
|  |  |  |
|---|---|---|
| Cash and cash equivalents | $ 5,510 | $ 1,292 |
| Loans | 104,217 | 85,257 |
| Total assets | $ 228,354 | $ 188,548 |

Table: Liabilities and Shareholders' Equity — values in USD
|  |  |  |
|---|---|---|
| Liabilities |  |  |
| Customer deposits | $ 110,239 | $ 84,382 |
| Accounts payable | 12,133 | 10,574 |
| Long-term debt | 42,573 | 38,675 |
| Total liabilities | $ 203,643 | $ 166,371 |
| Retained earnings | 16,279 | 13,474 |
"""
SEGMENTS = """# Segments

Table: Revenue by product category — values in millions of USD
|  | 2024 | 2023 |
|---|---|---|
| Domestic: |  |  |
| Computing | $ 3,674 | $ 3,964 |
| Appliances | 1,384 | 1,657 |
| Entertainment | 544 | 508 |
| Total Domestic revenue | $ 5,602 | $ 6,129 |
| International: |  |  |
| Computing | $ 309 | $ 327 |
| Entertainment | 50 | 51 |
"""


@pytest.fixture(autouse=True)
def _hash_embedder(monkeypatch):
    """Bag-of-words vectors instead of the embedder's weights (only ties use them here)."""
    import rag.models as models
    from rag.models.base import HashEmbedder

    monkeypatch.setattr(models, "get_embedder", lambda cfg: HashEmbedder(dim=512))


def _cfg(make_cfg, **over):
    return make_cfg(overrides={"answer.text_ranking": True, **over})


def test_a_ranking_question_is_a_superlative_outside_the_company_name():
    assert ranking_ask("What was the largest liability in Acme's balance sheet in 2024?", "Acme") is not None
    assert ranking_ask("Which category performed the best in 2024?").by_change
    assert ranking_ask("Which region had the lowest sales?").least
    # the most of a decrease is the smallest change; the most of an increase the largest
    assert ranking_ask("Which region had the biggest drop in revenue in 2024?") == Ask(least=True, by_change=True)
    assert ranking_ask("Which segment declined the most in 2024?") == Ask(least=True, by_change=True)
    assert ranking_ask("Which segment grew the most in 2024?") == Ask(least=False, by_change=True)
    assert ranking_ask("What are major acquisitions that Best Buy has done in FY2023?", "Best Buy") is None
    assert ranking_ask("What drove operating margin change in FY2022?") is None


def test_groups_split_at_section_rows_and_end_at_totals():
    groups = row_groups(CtxPage(SHA, 3, SEGMENTS, 0))
    assert [(g.section, [r[0] for r in g.rows]) for g in groups] == [
        ("Domestic", ["Computing", "Appliances", "Entertainment"]), ("International", ["Computing", "Entertainment"])]
    liab = [g for g in row_groups(CtxPage(SHA, 9, BALANCE, 0)) if g.section == "Liabilities"][0]
    assert [r[0] for r in liab.rows] == ["Customer deposits", "Accounts payable", "Long-term debt"]
    assert liab.heading == "CONSOLIDATED BALANCE SHEETS"


def test_the_group_printing_the_questions_words_is_ranked_by_its_figure(make_cfg):
    pages = [CtxPage(SHA, 9, BALANCE, 0)]
    res = answer_ranking(_cfg(make_cfg), "What was the largest liability in Acme's balance sheet in 2024?", pages,
                         "Acme")
    assert res["value"].startswith("Customer deposits: $ 110,239, the largest among Customer deposits")
    assert res["cited"] == pages and res["interpretation"]["ranking"]["taken"]


def test_a_performance_is_ranked_by_the_change_from_the_column_to_its_right(make_cfg):
    q = "Which product category performed the best in the domestic market in 2024?"
    res = answer_ranking(_cfg(make_cfg), q, [CtxPage(SHA, 3, SEGMENTS, 0)], "Acme")
    assert res["value"].startswith("Entertainment: 544 against 508 (+7.1%), the largest change")
    least = answer_ranking(_cfg(make_cfg), q.replace("the best", "the worst"), [CtxPage(SHA, 3, SEGMENTS, 0)])
    assert least["value"].startswith("Appliances: 1,384 against 1,657 (-16.5%), the smallest change")


def test_too_few_of_the_questions_words_leaves_the_free_answer(make_cfg):
    res = answer_ranking(_cfg(make_cfg), "Which subsidiary is the largest?", [CtxPage(SHA, 9, BALANCE, 0)])
    assert res["value"] is None and not res["interpretation"]["ranking"]["taken"]


class FreeLLM:
    model = "fake"

    def __init__(self):
        self.calls = 0

    def complete(self, messages, schema=None, **params):
        self.calls += 1
        body = {"step_by_step_analysis": "", "reasoning_summary": "", "relevant_pages": [1],
                "final_answer": "Long-term debt."}
        return LLMResult(value=schema.model_validate(body), raw=json.dumps(body), model=self.model, usage=Usage())


@pytest.mark.parametrize("on", [True, False])
def test_stage_06_answers_a_ranking_in_code_only_when_switched_on(make_cfg, on):
    cfg = make_cfg(overrides={"answer.text_ranking": on})
    llm = FreeLLM()
    res = answer_pages(llm, cfg, "text", "What was the largest liability in Acme's balance sheet in 2024?",
                       [CtxPage(SHA, 9, BALANCE, 0)], "USD", len, "Acme")
    assert (res["value"].startswith("Customer deposits"), llm.calls) == ((True, 0) if on else (False, 1))


CASH = """# Liquidity

Table: Cash flows were as follows — values in millions of USD
|  | 2024 | 2023 |
|---|---|---|
| Total cash provided by (used in): |  |  |
| Operating activities | $ 1,824 | $ 3,252 |
| Investing activities | (962) | (1,372) |
| Financing activities | (1,806) | (4,297) |
| Cash at the beginning of the year | 3,205 | 5,625 |
"""


def test_rows_the_question_names_are_the_only_ones_ranked(make_cfg):
    q = "Among operations, investing, and financing activities, which brought in the most cash flow in FY2024?"
    res = answer_ranking(_cfg(make_cfg), q, [CtxPage(SHA, 5, CASH, 0)], "Acme")
    assert res["value"].startswith("Operating activities: $ 1,824, the largest among Operating activities, "
                                   "Investing activities, Financing activities (")
    q_all = "Which line of the cash flows was the largest in FY2024?"
    assert answer_ranking(_cfg(make_cfg), q_all, [CtxPage(SHA, 5, CASH, 0)], "Acme")["value"].startswith(
        "Cash at the beginning of the year: 3,205")


def test_rag_ask_says_which_rows_were_ranked(make_cfg):
    from rag.ask import _reason

    res = answer_ranking(_cfg(make_cfg), "What was the largest liability in Acme's balance sheet in 2024?",
                         [CtxPage(SHA, 9, BALANCE, 0)], "Acme")
    why = _reason({"kind": "text", "calls": res["calls"], "interpretation": res["interpretation"]})
    assert why.startswith("ranked in code, each row by its figure: page 9's rows \"CONSOLIDATED BALANCE SHEETS > "
                          "Liabilities and Shareholders' Equity > Liabilities: Customer deposits;")
    assert why.endswith("print most of the question's words (score 3.0)")


def test_the_reasoning_viewer_shows_the_groups_ranked(make_cfg):
    from rag.views.widgets.reasoning_viewer import render_debug_html

    res = answer_ranking(_cfg(make_cfg), "What was the largest liability in Acme's balance sheet in 2024?",
                         [CtxPage(SHA, 9, BALANCE, 0)], "Acme")
    d = {"qid": "q000", "kind": "text", "question_text": "...", "value": res["value"], "retrieved": [],
         "references": [], "calls": res["calls"], "interpretation": res["interpretation"]}
    html = render_debug_html(d)
    assert "ranked in code: by the figure" in html and "<td>3.0</td>" in html and "Customer deposits;" in html


# A cash-flow statement split by the parser: the operating total in the dated grid, investing and financing in a
# headerless grid below it (same width), each section opened by a heading row; years oldest first.
STATEMENT = """# CONSOLIDATED STATEMENTS OF CASH FLOWS

Table: values in millions of USD
|  | 2022 | 2023 | 2024 |
|---|---|---|---|
| OPERATING ACTIVITIES: |  |  |  |
| Net income | 3,033 | 10,073 | 11,588 |
| Net cash provided by (used in) operating activities | 18,365 | 30,723 | 38,514 |

Adjustments printed between the grids

|  |  |  |  |
|---|---|---|---|
| INVESTING ACTIVITIES: |  |  |  |
| Purchases of investments | (1,000) | (2,000) | (42,000) |
| Net cash provided by (used in) investing activities | (27,084) | (12,369) | (24,281) |
| FINANCING ACTIVITIES: |  |  |  |
| Proceeds from long-term debt | 16,228 | 182 | 40,871 |
| Net cash provided by (used in) financing activities | 9,928 | (7,686) | (10,066) |
"""


def test_listed_candidates_are_read_from_the_question():
    from rag.answer.text.row_groups import Listed, listed_candidates

    q = "Among operations, investing, and financing activities, which brought in the most (or lost the least) cash?"
    assert listed_candidates(q) == Listed((("operat",), ("invest",), ("financ",)), "activities")
    assert listed_candidates("Which had the most sales among North America, International and AWS?") == Listed(
        (("north", "americ"), ("intern",), ("aws",)), "")
    assert listed_candidates("Which product category performed the best in Q2?") is None
    assert listed_candidates("Which was the largest among its segments?") is None  # one item is no list


def test_a_listed_ranking_reads_one_row_per_candidate_across_a_split_statement(make_cfg):
    from rag.answer.text.row_groups import listed_candidates, listed_groups

    q = "Among operations, investing, and financing activities, which brought in the most cash flow in FY2024?"
    page = CtxPage(SHA, 37, STATEMENT, 0)
    (group,) = listed_groups(page, listed_candidates(q))
    assert [label for label, _ in group.rows] == [
        "Net cash provided by (used in) operating activities", "Net cash provided by (used in) investing activities",
        "Net cash provided by (used in) financing activities"]
    res = answer_ranking(_cfg(make_cfg), q, [page], "Acme")
    # the 2024 column (the question's year, the third here), the section totals only (not "Proceeds from ... debt")
    assert res["value"].startswith("Net cash provided by (used in) operating activities: 38,514, the largest among ")
    assert res["interpretation"]["ranking"]["rows"] == [label for label, _ in group.rows]


def test_a_list_no_table_prints_whole_falls_back_to_the_groups(make_cfg):
    from rag.answer.text.row_groups import listed_candidates, listed_groups

    q = "Among operations, investing, and dividends, which brought in the most cash flow in FY2024?"
    assert listed_groups(CtxPage(SHA, 37, STATEMENT, 0), listed_candidates(q)) == []


# A balance sheet whose liabilities a subtotal splits, the non-current part in a table of its own without year headers
# (the parser split the statement there), and a note's table naming liabilities too.
SPLIT_BALANCE = """# December 31,

Table: Liabilities and equity — values in millions of USD
|  | 2022 | 2021 |
|---|---|---|
| Current liabilities |  |  |
| Accounts payable | $ 2,117 | $ 780 |
| Contract liabilities | 8,488 | 8,107 |
| Total current liabilities | 15,887 | 13,997 |

Table: values in millions of USD
|  |  |  |
|---|---|---|
| Long-term debt, net | 15,429 | 11,670 |
| Accrued pension liabilities | 5,472 | 8,319 |
"""
NOTE = """# NOTE 7. Supplemental Balance Sheet Information

Table: Other liabilities — values in millions of USD
|  | 2022 | 2021 |
|---|---|---|
| Employee benefits | 2,179 | 1,500 |
| Deferred income taxes | 800 | 900 |
| Total other liabilities | 2,979 | 2,400 |
"""


def test_a_class_goes_on_past_its_subtotal_and_into_a_table_split_from_it():
    from rag.answer.text.row_groups import class_groups

    (group,) = class_groups(CtxPage(SHA, 65, SPLIT_BALANCE, 0, statement="balance_sheet"))
    assert group.section == "Liabilities" and group.columns == ["2022", "2021"]  # the dated table's years
    assert [label for label, _ in group.rows] == ["Accounts payable", "Contract liabilities", "Long-term debt, net",
                                                 "Accrued pension liabilities"]
    assert class_groups(CtxPage(SHA, 98, BALANCE, 0)) == []  # no subtotal: the row groups are the classes


def test_the_largest_liability_is_ranked_over_the_class_on_the_statement_the_question_names(make_cfg):
    pages = [CtxPage(SHA, 68, NOTE, 0), CtxPage(SHA, 65, SPLIT_BALANCE, 1, statement="balance_sheet")]
    res = answer_ranking(_cfg(make_cfg), "What was the largest liability in Acme's Balance Sheet in 2022?", pages,
                         "Acme")
    assert res["value"].startswith("Long-term debt, net: 15,429, the largest among Accounts payable")
    assert res["interpretation"]["ranking"]["page"] == 65  # not the note's "Other liabilities"


# Segment sales with the older year on the left (as Amazon prints them), a share of the total beside each year.
OLDER_FIRST = """# Segment Information

Table: Net sales by segment — values in millions of USD
|  | 2018 Net sales | 2018 % of total | 2019 Net sales | 2019 % of total |
|---|---|---|---|---|
| North America | 141,366 | 61 % | 170,773 | 61 % |
| International | 65,866 | 28 % | 74,723 | 27 % |
| AWS | 25,655 | 11 % | 35,026 | 12 % |
"""


def test_a_change_is_read_between_the_years_the_headers_name_with_the_same_words(make_cfg):
    res = answer_ranking(_cfg(make_cfg), "Which Acme segment had the largest net sales growth in FY2019?",
                         [CtxPage(SHA, 24, OLDER_FIRST, 0)], "Acme")
    assert res["interpretation"]["ranking"]["cells"] == ["35,026", "25,655"]  # 2019 net sales against 2018's
    assert res["value"].startswith("AWS: 35,026 against 25,655 (+36.5%)")


SEGMENT_SALES = """# Fiscal Year

Table: Net Sales — values in millions of USD
|  | 2022 | 2021 |
|---|---|---|
| North America Retail | 18,992 | 18,127 |
| Pet | 2,259 | 1,732 |
| Foodservice (a) | 1,000 | 900 |
"""
BY_ROWS = """# Fiscal Year

Table: Segment Operating Profit — values in millions of USD
|  | 2022 | 2021 |
|---|---|---|
| North America Retail | 4,000 | 4,100 |
| Pet | 300 | 400 |
| Foodservice | 100 | 90 |
"""
BY_SECTIONS = """# Year Ended December 31

Table: Information on reportable segments — values in millions of USD
|  | 2022 | 2021 |
|---|---|---|
| North America Retail: |  |  |
| Operating expenses | 14,992 | 14,027 |
| Operating income | 4,000 | 4,100 |
| Pet: |  |  |
| Operating expenses | 1,959 | 1,332 |
| Operating income | 300 | 400 |
"""


@pytest.mark.parametrize("lender", [BY_ROWS, BY_SECTIONS])
def test_rows_are_what_another_table_of_the_same_names_calls_them(make_cfg, lender):
    """"by top line" is revenue (the search lexicon); the net sales table does not say its rows are segments, the
    operating profit table printing the same names does (as rows, or as sections over line items)."""
    q = "Which Acme segment performed the best (by top line) in FY2022?"
    res = answer_ranking(_cfg(make_cfg), q, [CtxPage(SHA, 21, SEGMENT_SALES, 0), CtxPage(SHA, 22, lender, 1)],
                         "Acme")
    assert res["value"].startswith("Pet: 2,259 against 1,732 (+30.4%), the largest change")
    assert res["interpretation"]["ranking"]["page"] == 21
    alone = answer_ranking(_cfg(make_cfg), q, [CtxPage(SHA, 21, SEGMENT_SALES, 0)], "Acme")
    assert alone["value"] is None  # only "top line" (revenue) is printed where the rows are
    other = answer_ranking(_cfg(make_cfg), q, [CtxPage(SHA, 21, SEGMENT_SALES, 0), CtxPage("e" * 40, 22, lender, 1)],
                           "Acme")
    assert other["value"] is None  # another filing's table says nothing of this one's rows


def test_only_the_words_saying_what_the_rows_are_are_borrowed():
    from rag.answer.text.ranking_score import asked_row_words

    terms = ("produ", "categ", "perfo", "best", "domes", "segme")
    q = "Which Acme product category performed the best (by top line) in the domestic (USA) market?"
    assert asked_row_words(q, "Acme", terms) == {"produ", "categ", "perfo"}  # not "domestic": a filter, not the rows


def test_a_lexicon_topic_counts_once_however_many_of_its_words_a_group_prints(make_cfg):
    from rag.answer.text.ranking_score import terms_printed, topic_keys

    cfg = _cfg(make_cfg)
    q = "Which segment had the highest revenue in 2022?"
    topics = topic_keys(cfg, q, "")
    terms = ("segme", "highe", "reven", "revenue", "net sales", "sales")
    assert terms_printed("Net sales by segment", terms, topics) == {"revenue", "segme"}
    assert terms_printed("Segment revenues", terms, topics) == {"revenue", "segme"}
