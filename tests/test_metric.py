"""rag.answer.numbers.figure_check: does the line printing a number answer's figure name the metric asked for?"""
from rag.answer.numbers import figure_check as metric

Q_CFO = ("According to the annual report, what is the Cash flow from operations (in USD) for Acme Widgets, "
         "Inc. (within the last period or at the end of the last period)? If data is not available, return 'N/A'.")
Q_GM = "What was the Gross margin (%) for Acme Widgets, Inc. according to the annual report? If data is not available, return 'N/A'."

CASH_FLOW_PAGE = """# Consolidated Statements of Cash Flows
Table: Year ended December 31 — values in thousands of USD
| (in thousands) | 2022 | 2021 |
| --- | --- | --- |
| Net income | 20,445 | 21,371 |
| Depreciation | 1,210 | 1,100 |
| Net cash provided by operating activities | 19,970 | 25,002 |
"""


def test_terms_drop_boilerplate_company_units_and_generic_words():
    assert metric.metric_terms(Q_CFO, "Acme Widgets, Inc.") == {"cash", "flow", "opera"}
    assert metric.metric_terms(Q_GM, "Acme Widgets, Inc.") == {"gross", "margi"}
    q = "For Acme, what was the value of Non-performing loan ratio (NPL) at year-end at the end of the period listed in annual report?"
    assert metric.metric_terms(q, "Acme") == {"nonpe", "loan", "ratio"}


def test_the_row_of_the_metric_passes_and_another_row_of_the_same_table_does_not():
    terms = metric.metric_terms(Q_CFO, "Acme Widgets, Inc.")
    assert metric.names_metric(CASH_FLOW_PAGE, "19,970", terms)
    # The statement's title says "Cash Flows", but the figure's own row is net income.
    assert not metric.names_metric(CASH_FLOW_PAGE, "20,445", terms)
    # With the title lines counted (metric_title_lines), the title would name it: that is why it is off.
    assert metric.names_metric(CASH_FLOW_PAGE, "20,445", terms, title_lines=2)


def test_one_matching_word_of_several_is_not_enough_by_default():
    q = "For Acme, what was the value of Year-end fleet average carbon emissions at the end of the period?"
    terms = metric.metric_terms(q, "Acme")
    page = "| Fleet new vehicle gross profit | 4.9 | 1.6 |\n| Fleet carbon emissions (t per vehicle) | 0.8 | 0.9 |"
    assert not metric.names_metric(page, "4.9", terms)
    assert metric.names_metric(page, "0.8", terms)
    assert metric.names_metric(page, "4.9", terms, min_share=0.0)  # at least one term still required


def test_synonym_groups_and_sentences():
    q = "What was the Net income (in USD) for Acme according to the annual report?"
    terms = metric.metric_terms(q, "Acme")
    assert metric.names_metric("Profit for the year was $12.5 million, up from $10.1 million.", "12.5", terms)
    assert not metric.names_metric("Revenue was $12.5 million.", "12.5", terms)


def test_a_figure_the_page_does_not_print_is_never_named_and_empty_terms_pass():
    assert not metric.names_metric(CASH_FLOW_PAGE, "99,999", {"cash"})
    assert metric.names_metric(CASH_FLOW_PAGE, "99,999", set())


def test_on_a_text_line_only_the_words_around_the_figure_count():
    terms = metric.metric_terms(Q_CFO, "Acme Widgets, Inc.")
    para = ("Cash Flows from Investing Activities - Net cash used in investing activities was approximately "
            "$299.7 million and $1.3 billion for 2022 and 2021, respectively. Net cash provided by operating "
            "activities was $406.1 million in 2022.")
    assert not metric.names_metric(para, "299.7", terms)
    assert metric.names_metric(para, "406.1", terms)
    # the whole line as one window would let the lead-in "Cash Flows" name the investing figure
    assert metric.names_metric(para, "299.7", terms, window=(100, 100))
