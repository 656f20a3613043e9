"""Routing questions to reports by company name, and comparative sub-questions."""
from __future__ import annotations

import pytest

from rag.retrieve.route import name_variants, normalize_tokens, route, split_comparative, sub_question

REPORTS = {
    "n": "Northwind Logistics Inc.",
    "a": "Aurelia Pharma AG",
    "h": "The Harrow Group plc",
    "hf": "Harrow Foods Ltd",
    "k": "Kelly Partners Group Holdings Limited",
    "kp": "Kelly Partners",
    "rb": "Ritchie Bros. Auctioneers Incorporated",
    "w": "Wheeler Real Estate Investment Trust, Inc.",
    "v": "Vopak N.V.",
    "s": "Seiko Epson Corporation",
}


def test_normalize():
    assert normalize_tokens("Ritchie Bros. Auctioneers Inc.'s") == ["ritchie", "bros", "auctioneers", "inc"]
    assert normalize_tokens("Koninklijke Vopak N.V.") == ["koninklijke", "vopak", "nv"]
    assert name_variants("The Harrow Group plc") == [("harrow", "group", "plc"), ("harrow", "group"), ("harrow",)]


def test_suffixes_case_quotes_punctuation():
    assert route("What was the revenue of NORTHWIND LOGISTICS, INC. in 2024?", REPORTS) == ["n"]
    assert route("Did \u201cAurelia Pharma\u201d announce a buyback?", REPORTS) == ["a"]
    assert route("Did Aurelia Pharma A.G. pay a dividend?", REPORTS) == ["a"]
    assert route("What did Wheeler Real Estate Investment Trust report?", REPORTS) == ["w"]
    assert route("Ritchie Bros Auctioneers' dividend per share?", REPORTS) == ["rb"]
    assert route("Is Vopak NV listed?", REPORTS) == ["v"]
    assert route("Seiko Epson Corp.'s capital expenditure?", REPORTS) == ["s"]


def test_the_and_shared_words_do_not_collide():
    assert route("What did the Harrow Group plc pay out?", REPORTS) == ["h"]
    assert route("What did Harrow Foods Ltd pay out?", REPORTS) == ["hf"]
    # Both named: both routed, in order of appearance.
    assert route("Compare Harrow Foods and The Harrow Group.", REPORTS) == ["hf", "h"]
    # The longest full name wins over a shorter company name inside it.
    assert route("Which positions changed at Kelly Partners Group Holdings Limited?", REPORTS) == ["k"]
    assert route("Which positions changed at Kelly Partners?", REPORTS) == ["kp"]


def test_none_and_common_words():
    assert route("What is the revenue of Acme Corp?", REPORTS) == []
    assert route("", REPORTS) == []
    # "harrow" as a lowercase common word is not the one-word short form of a company.
    assert route("they harrow the field", REPORTS) == []
    # A legal word alone names nobody.
    assert route("Which group had the highest revenue?", {"x": "Group Ltd"}) == []


def test_identical_names_route_all():
    assert route("Did Foo Inc. grow?", {"x": "Foo Inc.", "y": "FOO, INC"}) == ["x", "y"]


def test_comparative_split():
    q = ('Which of the companies had the highest total revenue in EUR at the end of the period listed in annual '
         'report: "Aurelia Pharma AG", "The Harrow Group plc", "Acme Corp"? If data for the company is not '
         'available, exclude it from the comparison.')
    subs = split_comparative(q, "comparative", REPORTS)
    assert list(subs) == ["a", "h"]  # Acme is unknown: not routed
    assert subs["a"].startswith("What was the total revenue in EUR of Aurelia Pharma AG at the end of the period")
    assert "Harrow" not in subs["a"] and "The Harrow Group plc" in subs["h"]
    # Sub-questions route to their own company only.
    assert all(route(t, REPORTS) == [s] for s, t in subs.items())
    # Non-comparative kinds map to the question itself.
    assert split_comparative("Did Harrow Foods Ltd buy back shares?", "boolean", REPORTS) == {
        "hf": "Did Harrow Foods Ltd buy back shares?"}


def test_sub_question_fallback_keeps_question():
    q = 'Which company had more employees at year-end, "A Inc" or "B Inc"?'
    s = sub_question(q, "A Inc")
    assert "A Inc" in s and "B Inc" not in s and "employees" in s
    q2 = 'Which of the companies had the lowest Operating margin (%) in the fiscal year 2023: "A Inc", "B Inc"?'
    assert sub_question(q2, "B Inc").startswith("What was the Operating margin (%) of B Inc in the fiscal year 2023?")


@pytest.mark.reliability
def test_casefold_and_invisible_characters():
    reports = {**REPORTS, "g": "Großhandel Straße AG"}
    assert route("What was the revenue of GROSSHANDEL STRASSE AG?", reports) == ["g"]
    assert route("Did North\u200bwind Logistics pay a dividend?", REPORTS) == ["n"]  # zero-width space
    assert route("Did Aurelia\u00ad Pharma announce a buyback?", REPORTS) == ["a"]  # soft hyphen
    assert route("\ufeffWas Vopak N.V. profitable?", REPORTS) == ["v"]  # BOM


@pytest.mark.reliability
def test_routing_status_unrouted_and_ambiguous():
    from rag.retrieve.route import routing_status

    assert routing_status("What was the revenue of Northwind Logistics?", "number", REPORTS) == "ok"
    assert routing_status("What was the revenue of Contoso?", "number", REPORTS) == "unrouted"
    assert routing_status("Did Vopak or Aurelia Pharma pay a dividend?", "boolean", REPORTS) == "ambiguous"
    twins = {"a1": "Aurelia Pharma AG", "a2": "Aurelia Pharma AG"}  # two years of one company
    assert routing_status("Did Aurelia Pharma pay a dividend?", "boolean", twins) == "ambiguous"
    q = 'Which of the companies had the highest revenue: "Vopak N.V.", "Aurelia Pharma AG"?'
    assert routing_status(q, "comparative", REPORTS) == "ok"


def test_short_forms_route_when_unique_and_written_as_names():
    reports = {**REPORTS, "d": "Downer EDI Limited", "p": "Poste Italiane S.p.A.", "fb": "First Bancorp",
               "ab": "abrdn Japan Investment Trust plc", "bi": "Bank of Ireland Group plc"}
    assert route("Did Downer announce a share buyback plan?", reports) == ["d"]
    assert route("What was the net income of Poste Italiane in 2023?", reports) == ["p"]
    assert route("What is the NAV of abrdn Japan?", reports) == ["ab"]
    # Lowercase common word, a generic first word, a part ending on a connective: no route.
    assert route("Did the downer mood persist?", reports) == []
    assert route("First, what was the revenue?", reports) == []
    assert route("Was Bank of credit mentioned?", reports) == []
    # A part shared by two companies ("Kelly Partners", "Harrow") keeps its old meaning only.
    assert route("Which positions changed at Kelly Partners?", reports) == ["kp"]
    assert route("What did Harrow pay out?", reports) == ["h"]
    # A full name still wins over a short form inside it.
    assert route("Did Downer EDI Limited grow?", reports) == ["d"]
    from rag.retrieve.route import routing_status
    assert routing_status("Did Downer or Sonic pay?", "boolean", {**reports, "s2": "Sonic Automotive, Inc."}) == "ambiguous"
