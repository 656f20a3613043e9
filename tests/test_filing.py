"""Filing choice by period and document type (rag.retrieve.filing) and its use in routing."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from rag.retrieve.filing import choose_filings
from rag.retrieve.periods import question_doc_type, question_periods
from rag.retrieve.route import route, route_filings, routing_status


@dataclass(frozen=True)
class F:
    sha1: str
    company: str
    period: str = ""
    doc_type: str = ""


THREE_M = [F("m18", "3M Company", "2018", "10-K"), F("m22", "3M Company", "2022", "10-K")]
BBY = [F("b17", "Best Buy", "2017", "10-K"), F("b19", "Best Buy", "2019", "10-K"),
       F("b23", "Best Buy", "2023", "10-K"), F("bq", "Best Buy", "2024Q2", "10-Q")]
PEP = [F("p21", "PepsiCo", "2021", "10-K"), F("p22", "PepsiCo", "2022", "10-K"),
       F("pe", "PepsiCo", "2023Q1", "earnings release"), F("p8a", "PepsiCo", "2023-05-05", "8-K"),
       F("p8b", "PepsiCo", "2023-05-30", "8-K")]
PFE = [F("f21", "Pfizer", "2021", "10-K"), F("fq", "Pfizer", "2023Q2", "10-Q")]


@pytest.mark.parametrize("text,labels", [
    ("What is the FY2018 capex for 3M?", ["FY2018"]),
    ("Was there a drop between FY 2023 and Q2 of FY2024?", ["FY2023", "2024Q2"]),
    ("As of Q2'2023, is Pfizer spinning off", ["2023Q2"]),
    ("which region dropped most in Q22023 year over year", ["2023Q2"]),
    ("As of FY2023Q1, why did Pepsico raise guidance for FY2023?", ["2023Q1", "FY2023"]),
    ("At the AGM held on May 3, 2023, what", ["2023-05-03"]),
    ("Did Pfizer grow its PPNE between FY20 and FY21?", ["FY2020", "FY2021"]),
    ("in fiscal 2019 and in the second quarter of fiscal 2020", ["FY2019", "2020Q2"]),
    ("revenue of $2019 million and 2,021 units", []),
])
def test_question_periods(text, labels):
    assert [p.label for p in question_periods(text)] == labels


def test_bare_years_are_weak():
    ps = question_periods("Any events that increased net income in 2019?")
    assert [(p.year, p.strong) for p in ps] == [(2019, False)]


def test_doc_type():
    assert question_doc_type("companies mentioned in this 10K report?") == "10-K"
    assert question_doc_type("in its latest quarterly report") == "10-Q"
    assert question_doc_type("What was revenue?") is None


@pytest.mark.parametrize("filings,text,expected", [
    (THREE_M, "What is the FY2018 capital expenditure amount for 3M?", ("m18",)),
    (THREE_M, "Is 3M a capital-intensive business based on FY2022 data?", ("m22",)),
    (THREE_M, "What was 3M's revenue?", ("m22",)),  # no period: latest annual
    (BBY, "3 year average net profit margin FY2015 - FY2017 for Best Buy", ("b17",)),  # comparative years
    (BBY, "drop in Cash between FY 2023 and Q2 of FY2024 at Best Buy?", ("bq",)),
    (BBY, "Best Buy's inventories at year end FY2019?", ("b19",)),
    (BBY, "Best Buy's revenue FY2019 versus FY2023?", ("b23", "b19")),  # 2019 not printed in the 2023 10-K
    (PEP, "As of FY2023Q1, why did Pepsico raise full year guidance for FY2023?", ("pe",)),
    (PEP, "At the Pepsico AGM held on May 3, 2023, what was the outcome", ("p8a",)),
    (PEP, "By how much did Pepsico increase its credit agreement on May 26, 2023?", ("p8b",)),
    (PEP, "Has Pepsico reported legal battles from FY2022 and FY2021?", ("p22",)),
    (PFE, "Events that increased Pfizer's net income in 2019?", ("f21",)),  # a comparative year of 2021
    (PFE, "As of Q2'2023, is Pfizer spinning off any segments?", ("fq",)),
    (PFE, "What are three companies acquired by Pfizer mentioned in this 10K report?", ("f21",)),
    ([F("v21", "Verizon", "2021", "10-K"), F("v22", "Verizon", "2022", "10-K")],
     "As of FY 2021, how much did Verizon expect to pay for its retirees in 2024?", ("v21",)),  # 2024: future
    ([F("v21", "Verizon", "2021", "10-K"), F("v22", "Verizon", "2022", "10-K")],
     "Has Verizon increased its debt between 2022 and the 2021 fiscal period?", ("v22",)),
])
def test_choose_filings(filings, text, expected):
    c = choose_filings(text, filings)
    assert c.sha1s == expected, c.why
    assert c.why


def test_no_period_on_filings_keeps_all():
    fs = [F("a", "X Corp"), F("b", "X Corp")]
    assert choose_filings("X Corp revenue in FY2018?", fs).sha1s == ("a", "b")


def test_route_picks_filing_and_records_why():
    reports = THREE_M + [F("n", "Nike, Inc.", "2019", "10-K")]
    q = "What is the FY2018 capital expenditure amount (in USD millions) for 3M?"  # short form "3M"
    r = route_filings(q, reports)
    assert [x.sha1 for x in r] == ["m18"] and "FY2018" in r[0].why
    assert routing_status(q, "number", reports) == "ok"
    # no period: identical names without periods stay ambiguous (all searched), as before
    plain = [F("a", "3M Company"), F("b", "3M Company")]
    assert route(q, plain) == ["a", "b"] and routing_status(q, "number", plain) == "ambiguous"


def test_acronym_routes_only_without_a_name():
    reports = [F("ax", "American Express"), F("aw", "American Water Works")]
    assert route("Does AMEX have an improving operating margin?", reports) == ["ax"]
    assert route("Does AWW pay dividends?", reports) == ["aw"]
    assert route("Does the SEC regulate them?", reports) == []


def test_no_company_named_routes_to_the_one_filing_of_the_quarter_named():
    reports = THREE_M + BBY + PEP + PFE
    q = "Was there any drop in Cash & Cash equivalents between FY 2023 and Q2 of FY2024?"
    r = route_filings(q, reports)
    assert [x.sha1 for x in r] == ["bq"] and "2024Q2" in r[0].why and "no company named" in r[0].why
    assert routing_status(q, "boolean", reports) == "ok"
    # a fiscal year alone names every company's annual filing: nothing to route by
    assert route("Was revenue higher in FY2022 than in FY2021?", reports) == []
    # two filings of that quarter (another company's 10-Q of Q2 2024): nothing tells them apart
    assert route(q, reports + [F("zq", "Zeta Corp", "2024Q2", "10-Q")]) == []
    # a named company still routes by name first, unchanged
    assert route("Did Pfizer's cash drop in Q2 2023?", reports) == ["fq"]
    # ERC-style datasets carry no periods: an unnamed question stays unrouted
    assert route("Did cash drop in Q2 of FY2024?", [F("a", "X Corp"), F("b", "Y plc")]) == []
