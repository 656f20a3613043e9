"""Filing type and period read from a filing's first pages (rag.init_filing)."""
from __future__ import annotations

from datetime import date

from rag.init_filing import assign_quarters, detect_filing, fiscal_quarter


def test_10k_cover():
    g = detect_filing(["UNITED STATES SECURITIES AND EXCHANGE COMMISSION\nFORM 10-K\nANNUAL REPORT PURSUANT TO "
                       "SECTION 13\nFor the fiscal year ended\nJanuary 28, 2017\nBest Buy Co., Inc."])
    assert (g.doc_type, g.period, g.period_end) == ("10-K", "2017", date(2017, 1, 28))


def test_10q_quarter_from_the_companys_year_end():
    q = detect_filing(["FORM 10-Q\nQUARTERLY REPORT\nFor the quarterly period ended July 29, 2023"])
    k = detect_filing(["FORM 10-K\nFor the fiscal year ended January 28, 2023"])
    assert q.doc_type == "10-Q" and q.period == ""
    assert [g.period for g in assign_quarters([k, q])] == ["2023", "2024Q2"]  # Best Buy's "Q2 of FY2024"
    assert assign_quarters([q])[0].period == "2023Q2"  # no 10-K: calendar fiscal year assumed
    assert fiscal_quarter(date(2023, 7, 2), (12, 31)) == "2023Q2"


def test_8k_event_date_and_release():
    g = detect_filing(["FORM 8-K\nCURRENT REPORT\nDate of Report (Date of earliest event reported): May 3, 2023"])
    assert (g.doc_type, g.period) == ("8-K", "2023-05-03")
    r = detect_filing(["PepsiCo Reports First-Quarter 2023 Results; Raises Full-Year Guidance ... our Form 10-Q"])
    assert (r.doc_type, r.period) == ("earnings release", "2023Q1")


def test_nothing_found():
    assert detect_filing(["Chairman's letter\nWe had a good year."]).period == ""
    assert detect_filing([]).doc_type == ""
