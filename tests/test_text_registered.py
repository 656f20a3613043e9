"""Registered securities read from a cover page's Section 12(b) table (``answer.text_registered``, issue 48): the
question, the table's debt and equity classes, the answer and its citation. Tiny inputs: cover texts as strings."""
from __future__ import annotations

from rag.answer.common.context import CtxPage
from rag.answer.text.registered import answer_registered, registered_ask, registered_securities

COVER_DEBT = """Telephone number: (651) 733-1110 Securities registered pursuant to Section 12(b) of the Act:
# Title of each class
# Trading Symbol(s)
# Name of each exchange on which registered
Common Stock, Par Value $.01 Per Share
XYZ
New York Stock Exchange
0.950% Notes due 2023
XYZ23
New York Stock Exchange
Floating Rate Notes due 2020 Chicago Stock Exchange, Inc.
Note: The common stock of the registrant is also traded on the SIX Swiss Exchange. 2.5% Notes due 2040 elsewhere
Securities registered pursuant to section 12(g) of the Act: None"""
COVER_STOCK = """Securities registered pursuant to Section 12(b) of the Act:
# Title of each class
# Trading Symbol(s)
# Common Shares (par value $0.20 per Share)
# ABC
# New York Stock Exchange
Securities registered pursuant to section 12(g) of the Act: None Indicate by check mark if the registrant is"""


def test_the_question():
    assert registered_ask("Which debt securities are registered to trade on a national securities exchange "
                          "under Acme's name as of 2022?").debt
    assert not registered_ask("What securities are registered under Section 12(b) for Acme?").debt
    assert registered_ask("Is Acme registered in Delaware?") is None
    assert registered_ask("Which exchange lists Acme's stock?") is None  # nothing "registered"


def test_the_table_debt_and_equity_classes():
    got = registered_securities(COVER_DEBT)
    assert got.debt == ("0.950% Notes due 2023", "Floating Rate Notes due 2020")  # not the note after "Note:"
    assert got.equity == ("Common Stock, Par Value $.01 Per Share",)
    assert registered_securities(COVER_STOCK).debt == ()
    assert registered_securities(COVER_STOCK).equity == ("Common Shares (par value $0.20 per Share)",)
    assert registered_securities("No such table here.") is None


def test_the_answer_cites_the_cover(make_cfg):
    cfg = make_cfg()
    q = "Which debt securities are registered to trade on a national securities exchange under Acme's name?"
    pages = [CtxPage(sha1="s", page=40, text="Exhibit 4.1 Indenture ...", rank=0),
             CtxPage(sha1="s", page=1, text=COVER_STOCK, rank=1)]
    res = answer_registered(cfg, q, pages)
    assert res["value"].startswith("There are none: the only securities registered are Common Shares")
    assert [p.page for p in res["cited"]] == [1] and res["interpretation"]["registered"]["asked"] == "debt"
    res = answer_registered(cfg, q, [CtxPage(sha1="s", page=1, text=COVER_DEBT, rank=0)])
    assert res["value"].startswith("0.950% Notes due 2023 and Floating Rate Notes due 2020 (Securities registered")
    assert answer_registered(cfg, "What drove Acme's operating margin?", pages) is None
