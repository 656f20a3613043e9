"""Pages printing an asked count as 05 candidates (rag.retrieve.counts) on tiny page texts."""
from __future__ import annotations

import pytest

from rag.core.records import CandidatePage
from rag.retrieve.counts import CountsError, add_count_pages, asked_counts, count_pages, counts_hash

TEXTS = {
    3: "Item 1. Business. We operate 19 offices across Australia.",
    23: "Human Capital. As of December 31, 2022, we had 148 full-time employees, 26 of whom have Ph.D. degrees.",
    64: "Under the 2004 Employee Stock Purchase Plan employees may buy shares; 2,500 employees took part in 2022 "
        "and 1,900 employees in 2021.",
    89: "The 2008 Stock Option Plan covers employees and directors. In 2022 employees exercised options.",
    90: "Our directors and employees received grants in 2022 employees under the plan.",
}


def _page(p: int, score: float, statement: str = "") -> CandidatePage:
    return CandidatePage(sha1="a" * 40, page=p, text=TEXTS.get(p, ""), scores={"retrieval": score, "final": score},
                         statement=statement)


def test_asked_counts_by_topic(make_cfg):
    cfg = make_cfg()
    names = lambda q: [t["name"] for t in asked_counts(cfg, q)]  # noqa: E731
    assert names("For, what was the value of Number of full-time employees?") == ["employees"]
    assert names("For, what was the value of Number of offices?") == ["sites"]
    assert names("What was the Total revenue (in USD)?") == []
    assert asked_counts(make_cfg(overrides={"retrieve.count_pages": 0}), "Number of employees") == []


def test_count_pages_most_printed_counts_first_years_never(make_cfg):
    cfg = make_cfg()
    emp = asked_counts(cfg, "Number of employees")
    # page 64 prints two counts of employees, page 23 one; "2022 employees" on page 90 is a year, page 89 none
    assert count_pages(cfg, emp, TEXTS) == [("employees", 64), ("employees", 23)]
    assert count_pages(make_cfg(overrides={"retrieve.count_pages": 1}), emp, TEXTS) == [("employees", 64)]
    assert count_pages(cfg, asked_counts(cfg, "Number of offices"), TEXTS) == [("sites", 3)]


def test_add_count_pages_after_the_statement_pages_before_the_searched(make_cfg):
    cfg = make_cfg(overrides={"retrieve.top_pages": 4})
    searched = [_page(58, 1.0, "balance_sheet"), _page(90, 0.9), _page(89, 0.8), _page(64, 0.7)]
    out = add_count_pages(cfg, "Number of full-time employees", searched, TEXTS)
    assert [p.page for p in out] == [58, 23, 90, 89]  # 64 is already a candidate: it keeps its place, then the cut
    assert out[1].statement == "count:employees" and out[1].scores["final"] == 1.0 and out[1].text == TEXTS[23]
    assert add_count_pages(cfg, "Who chairs the board?", searched, TEXTS) is searched


def test_the_counts_file_is_keyed_and_checked(make_cfg, tmp_path):
    bad = tmp_path / "c.toml"
    bad.write_text('[[topic]]\nname = "x"\nwhen = ["("]\nnoun = ["y"]\n')
    with pytest.raises(CountsError, match="c.toml"):
        counts_hash(make_cfg(overrides={"retrieve.counts": str(bad)}))
    assert counts_hash(make_cfg(overrides={"retrieve.count_pages": 0})) == ""
    assert counts_hash(make_cfg()) != ""
