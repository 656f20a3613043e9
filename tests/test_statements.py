"""Primary financial statement pages as 05 candidates (rag.retrieve.statements) on tiny page texts."""
from __future__ import annotations

import pytest

from rag.core.records import CandidatePage
from rag.retrieve.statements import (StatementsError, add_statement_pages, asked_statements, statement_pages,
                                     statements_hash)

FIGS = " | ".join(f"{n},{n:03d}" for n in range(1, 31))  # 30 figures with a thousands separator
TEXTS = {
    2: "Index to Financial Statements\nConsolidated Balance Sheets 58\nConsolidated Statement of Income 56\n"
       "Consolidated Statement of Cash Flows 60",  # a contents page: names every statement, prints no figures
    30: "Management's discussion. Our balance sheet remains strong; property, plant and equipment rose. " + FIGS[:40],
    56: "3M Company and Subsidiaries Consolidated Statement of Incom e\n(Millions) 2018 2017\n" + FIGS,
    58: "3M Company and Subsidiaries Consolidated Balance Shee t At December 31\n(Dollars in millions)\n" + FIGS,
    60: "Consolidated Statements of Cash Flows\nYears ended December 31\n" + FIGS,
}


def _page(p: int, score: float) -> CandidatePage:
    return CandidatePage(sha1="a" * 40, page=p, text=TEXTS.get(p, ""), scores={"retrieval": score, "final": score})


def test_asked_statements_from_the_statement_named_or_its_line_items(make_cfg):
    cfg = make_cfg()
    ask = lambda q: asked_statements(cfg, q)  # noqa: E731
    assert ask("using information shown in the balance sheet: what is the FY2018 net PPNE?") == ["balance_sheet"]
    assert ask("What is the FY2021 capital expenditure amount? ... the statement of cash flows.") == ["cash_flow_statement"]
    assert ask("FY2019 inventory turnover ratio ... the balance sheet and the P&L statement") == \
        ["balance_sheet", "income_statement"]
    assert ask("Did the company announce a share buyback plan in 2022?") == []  # an event, found by search
    assert ask("Who is the Chief Executive Officer?") == []
    assert asked_statements(make_cfg(overrides={"retrieve.statement_pages": 0}), "net PPNE in the balance sheet") == []


def test_statement_pages_need_the_title_up_top_and_figures(make_cfg):
    cfg = make_cfg()
    # split words in the title ("Balance Shee t") still match; the contents page (no figures) and the MD&A page
    # (the words, not the title) do not
    assert statement_pages(cfg, ["balance_sheet"], TEXTS) == [("balance_sheet", 58)]
    assert statement_pages(cfg, ["income_statement", "cash_flow_statement"], TEXTS) == \
        [("income_statement", 56), ("cash_flow_statement", 60)]
    few = make_cfg(overrides={"retrieve.statement_min_figures": 31})
    assert statement_pages(few, ["balance_sheet"], TEXTS) == []


def test_a_balance_sheet_without_its_title_is_found_by_its_totals_and_ranks_before_a_note_quoting_the_title(make_cfg):
    cfg = make_cfg(overrides={"retrieve.statement_pages": 2})
    texts = {
        # a note page quoting the title up top, with figures but no balance-sheet totals
        40: "Joint venture related balance sheet activity is as follows:\n" + FIGS,
        # General Mills: the text layer lost the title; the page starts at its ASSETS table
        50: "Table: ASSETS (In Millions)\nTotal current assets 4,000\nTotal assets 30,000\n"
            "Total current liabilities 7,000\nTotal liabilities 22,000\nTotal stockholders\u2019 equity 8,000\n" + FIGS,
        # an MD&A page naming two totals only
        70: "Total assets rose; total liabilities fell.\n" + FIGS,
    }
    assert statement_pages(cfg, ["balance_sheet"], texts) == [("balance_sheet", 50), ("balance_sheet", 40)]
    # with title AND totals (the statement itself) first, ahead of the untitled page
    both = {**texts, 58: TEXTS[58].replace(FIGS, "Total assets 1,000 Total liabilities 800 Total equity 200 " + FIGS)}
    assert statement_pages(cfg, ["balance_sheet"], both) == [("balance_sheet", 58), ("balance_sheet", 50)]


def test_add_statement_pages_puts_them_first_and_keeps_the_rest(make_cfg):
    cfg = make_cfg(overrides={"retrieve.top_pages": 3})
    searched = [_page(30, 1.0), _page(2, 0.8), _page(58, 0.5), _page(7, 0.4)]
    out = add_statement_pages(cfg, "what is the year end FY2018 net PPNE shown in the balance sheet?", searched, TEXTS)
    assert [p.page for p in out] == [58, 30, 2]  # the searched page 58 moved up, cut to top_pages
    assert out[0].statement == "balance_sheet" and out[0].scores["final"] == 1.0 and out[1].statement == ""
    new = add_statement_pages(cfg, "capital expenditure in the statement of cash flows", searched[:2], TEXTS)
    assert [p.page for p in new] == [60, 30, 2] and new[0].text == TEXTS[60] and new[0].chunk_ids == []
    assert add_statement_pages(cfg, "Who chairs the board?", searched, TEXTS) is searched


def test_the_statements_file_is_keyed_and_checked(make_cfg, tmp_path):
    bad = tmp_path / "s.toml"
    bad.write_text('[[topic]]\nname = "x"\nwhen = ["("]\ntitle = ["y"]\n')
    cfg = make_cfg(overrides={"retrieve.statements": str(bad)})
    with pytest.raises(StatementsError, match="s.toml"):
        statements_hash(cfg)
    good = tmp_path / "g.toml"
    good.write_text('[[topic]]\nname = "x"\nwhen = ["a"]\ntitle = ["y"]\n')
    h1 = statements_hash(make_cfg(overrides={"retrieve.statements": str(good)}))
    good.write_text('[[topic]]\nname = "x"\nwhen = ["b"]\ntitle = ["y"]\n')
    assert statements_hash(make_cfg(overrides={"retrieve.statements": str(good)})) != h1
    assert statements_hash(make_cfg(overrides={"retrieve.statement_pages": 0})) == ""


def test_the_formal_title_ranks_before_a_summary_naming_income_statement_data(make_cfg):
    cfg = make_cfg(overrides={"retrieve.statement_pages": 1})
    texts = {44: "TABLE 1: SUMMARY OF FINANCIAL PERFORMANCE\nSelected Income Statement Data\n" + FIGS,  # American Express
             96: "CONSOLIDATED STATEMENTS OF INCOME\nYear Ended December 31 (Millions)\n" + FIGS}
    assert statement_pages(cfg, ["income_statement"], texts) == [("income_statement", 96)]
    assert asked_statements(cfg, "Are Best Buy's gross margins historically consistent?") == ["income_statement"]
    assert asked_statements(cfg, "Is 3M a capital-intensive business based on FY2022 data?") == \
        ["balance_sheet", "cash_flow_statement"]


def test_a_common_size_summary_and_the_exhibit_index_are_no_statement_pages(make_cfg):
    """A page naming the statement whose figures are percentages ("40.9 %": shares of total revenues) or exhibit
    numbers opening their lines ("3.1 Amended ...") is not the statement; the statement page itself is."""
    cfg = make_cfg()
    pct = " | ".join(f"{n}.{n % 10} %" for n in range(10, 50))
    exhibits = "\n".join(f"{n}.{k} Agreement and Plan of Merger, dated 2021" for n in range(2, 12) for k in range(1, 4))
    texts = {36: "Results of operations reflected in our consolidated statements of operations\n" + pct,
             79: "Part IV. Consolidated statements of operations for the years ended 2022, 2021\n" + exhibits,
             89: "Consolidated Statements of Operations\n(In millions)\n" + FIGS}
    assert statement_pages(cfg, ["income_statement"], texts) == [("income_statement", 89)]
