"""FinanceBench routing as analysts write questions (issue 48): aliases (tickers, the registrant's name) from
subset.csv, possessives and case, the one-company rule, 8-Ks by their date, earnings releases for adjusted
figures, and the per-filing setting (``retrieve.given_filing``: the question's own filing given). Tiny
inputs: Reports built in memory, a few-line subset.csv / questions.json, cover-page text as strings."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.core import deps
from rag.core.dataset import DatasetError, Question, Report, load_dataset
from rag.evaluate.financebench import routing_accuracy, score_run, setting_row
from rag.init_aliases import aliases_cell, company_aliases, cover_tickers, registrant_name
from rag.retrieve import given_filing
from rag.retrieve.filing import choose_filings
from rag.retrieve.periods import question_periods
from rag.retrieve.route import route, route_filings, routing_status


def _r(sha1: str, company: str, period: str = "", doc_type: str = "", aliases: tuple[str, ...] = ()) -> Report:
    return Report(sha1=sha1, company=company, currency="USD", pdf=Path(f"/nowhere/{sha1}.pdf"), period=period,
                  doc_type=doc_type, aliases=aliases)


AMZN17 = _r("a17", "Amazon", "2017", "10-K", ("AMZN", "AMAZON.COM, INC."))
AMZN19 = _r("a19", "Amazon", "2019", "10-K")  # aliases written on one row still name the company
XYLO = _r("x1", "Xylo Zenith Corp", "2022", "10-K", ("XZC",))
CVS = _r("c1", "CVS Health Corporation", "2022", "10-K")
WM = _r("w1", "Walmart", "2020", "10-K", ("WMT",))
PEP = [_r("p22", "PepsiCo", "2022", "10-K"), _r("p23q1", "PepsiCo", "2023Q1", "10-Q"),
       _r("p23r", "PepsiCo", "2023Q1", "earnings release"), _r("p0505", "PepsiCo", "2023-05-05", "8-K"),
       _r("p0530", "PepsiCo", "2023-05-30", "8-K")]


# ---- aliases: tickers, printed names, possessives, case -------------------------------------------------
def test_a_ticker_routes_to_its_company_and_its_period_picks_the_filing():
    reports = [AMZN17, AMZN19, WM]
    assert route("What was AMZN's FY2019 net income?", reports) == ["a19"]  # the alias of the 2017 row
    assert route("What was AMZN’s FY2017 revenue?", reports) == ["a17"]  # curly possessive
    r = route_filings("What was AMZN's FY2019 net income?", reports)[0]
    assert r.how == "alias" and r.reason.startswith("alias (subset.csv aliases) 'AMZN'") and "FY2019" in r.reason
    assert route("Did WMT grow its stores in FY2020?", reports) == ["w1"]


def test_a_ticker_counts_only_in_capitals():
    assert route("What was amzn's FY2019 revenue?", [AMZN17, AMZN19, WM]) == []
    assert route("What was Amzn's FY2019 revenue?", [AMZN17, AMZN19, WM]) == []
    assert route("What was the XZC FY2022 margin?", [XYLO, WM]) == ["x1"]
    assert route("What was the xzc FY2022 margin?", [XYLO, WM]) == []


def test_a_printed_registrant_name_routes_without_its_legal_suffix():
    assert route("What was Amazon.com's FY2017 operating income?", [AMZN17, AMZN19, WM]) == ["a17"]


def test_names_in_any_case_and_with_possessives():
    reports = [_r("b1", "Best Buy", "2023", "10-K"), WM]
    assert route("What was BEST BUY's FY2023 inventory?", reports) == ["b1"]
    assert route("what was best buy's FY2023 inventory?", reports) == ["b1"]
    assert route("Is Walmart’s FY2020 margin up?", reports) == ["w1"]


def test_a_short_capitals_form_routes_only_as_the_company_writes_it():
    assert route("What was CVS's FY2022 revenue?", [CVS, WM]) == ["c1"]
    assert route_filings("What was CVS's FY2022 revenue?", [CVS, WM])[0].how == "short form"
    assert route("What was Cvs's FY2022 revenue?", [CVS, WM]) == []


def test_an_alias_of_two_companies_is_ambiguous_not_a_guess():
    a, b = _r("s1", "Sun One", aliases=("SUN",)), _r("s2", "Sun Two", aliases=("SUN",))
    assert routing_status("What was SUN's revenue?", "number", [a, b]) == "ambiguous"


# ---- one company, no name --------------------------------------------------------------------------------
def test_a_question_naming_no_company_goes_to_the_one_company_of_the_dataset():
    reports = [AMZN17, AMZN19]
    routed = route_filings("What was the FY2017 capital expenditure?", reports)
    assert [r.sha1 for r in routed] == ["a17"] and routed[0].how == "one company"
    assert "the dataset holds one company" in routed[0].reason
    assert routing_status("What was the FY2017 capital expenditure?", "number", reports) == "ok"
    assert route("What was the FY2017 capital expenditure?", [AMZN17, WM]) == []  # two companies: unrouted


# ---- filing kinds: 8-Ks by date, earnings releases for adjusted figures ---------------------------------
def test_8k_dates_written_day_first_or_iso():
    assert [p.day.isoformat() for p in question_periods("the 8-K dated 30 May 2023")] == ["2023-05-30"]
    assert [p.day.isoformat() for p in question_periods("the 8-K dated 5th of May, 2023")] == ["2023-05-05"]
    assert [p.day.isoformat() for p in question_periods("the 8-K filed 2023-05-30")] == ["2023-05-30"]
    assert route("What did PepsiCo announce in the 8-K dated 30 May 2023?", PEP) == ["p0530"]
    assert route("What did PepsiCo announce in its 8-K dated 2023-05-05?", PEP) == ["p0505"]


def test_an_8k_named_by_its_month():
    reports = [p for p in PEP if p.sha1 != "p0530"] + [_r("p0601", "PepsiCo", "2023-06-01", "8-K")]
    assert route("What did PepsiCo's 8-K from May 2023 announce?", reports) == ["p0505"]
    assert route("Summarize PepsiCo's June 2023 8-K.", reports) == ["p0601"]
    assert route("Summarize PepsiCo's 8-K of May 2023.", PEP) == ["p0530"]  # two that month: the latest
    assert "month 'May 2023'" in route_filings("Summarize PepsiCo's 8-K of May 2023.", PEP)[0].reason


def test_a_named_kind_without_a_period_keeps_to_that_kind():
    assert route("Which debt did PepsiCo's 8-K describe?", PEP) == ["p0530"]  # the latest 8-K, not the 10-K
    assert route("What does PepsiCo's 10-Q say about its debt?", PEP) == ["p23q1"]


def test_adjusted_figures_go_to_the_earnings_release():
    assert route("What was PepsiCo's adjusted EPS in Q1 2023?", PEP) == ["p23r"]
    assert route("What was PepsiCo's non-GAAP operating profit in Q1 2023?", PEP) == ["p23r"]
    assert route("What was PepsiCo's EPS in Q1 2023?", PEP) == ["p23q1"]  # a GAAP figure: the 10-Q
    assert route("What was PepsiCo's core adjusted EPS growth?", PEP) == ["p23r"]  # no period: latest release
    # "unadjusted" is no adjusted figure; no period named: the latest annual filing
    assert route("What was PepsiCo's unadjusted EBITDA margin?", PEP) == ["p22"]
    choice = choose_filings("What was PepsiCo's adjusted EPS in Q1 2023?", PEP)
    assert "earnings release" in choice.why


def test_without_a_release_adjusted_figures_stay_in_the_annual_filing():
    reports = [AMZN17, AMZN19]
    assert route("What was Amazon's adjusted EBITDA in FY2019?", reports) == ["a19"]


# ---- the per-filing setting ------------------------------------------------------------------------------
def test_a_given_filing_is_routed_alone_whatever_the_question_names():
    reports = [AMZN17, AMZN19, WM]
    routed = route_filings("What was Walmart's FY2020 revenue?", reports, given="a17")
    assert [r.sha1 for r in routed] == ["a17"] and routed[0].how == "given"
    assert "given" in routed[0].reason and "retrieve.given_filing" in routed[0].reason
    assert routing_status("What was the revenue?", "number", reports, given="a19") == "ok"
    assert route("What was Walmart's FY2020 revenue?", reports, given="nope") == ["w1"]  # unknown: routes itself


def test_given_filing_reads_the_question_filing_only_when_switched_on(make_cfg):
    q = Question(qid="q000", text="What was the revenue?", kind="number", filing="a17")
    off = make_cfg()
    assert given_filing(off, q) == ""
    cfg = make_cfg(overrides={"retrieve.given_filing": True})
    assert given_filing(cfg, q) == "a17"
    # off (default) leaves every 05 key as before; on, it counts
    assert "given_filing" not in deps.config_signature(off, "05_retrieve")["retrieve"]
    assert deps.config_signature(cfg, "05_retrieve")["retrieve"]["given_filing"] is True


# ---- the dataset: questions' filings and the aliases column ---------------------------------------------
def _dataset(tmp_path: Path, questions: list[dict], aliases: str = "AMZN; Amazon.com") -> Path:
    root = tmp_path / "ds"
    (root / "pdfs").mkdir(parents=True)
    import hashlib

    rows = []
    for name, period in (("a", "2017"), ("b", "2019")):
        data = f"%PDF-1.4 {name}".encode()
        sha1 = hashlib.sha1(data).hexdigest()
        (root / "pdfs" / f"{sha1}.pdf").write_bytes(data)
        rows.append(f'{sha1},Amazon,USD,,{period},10-K,"{aliases}"')
    (root / "subset.csv").write_text("sha1,company_name,cur,major_industry,period,doc_type,aliases\n"
                                     + "\n".join(rows) + "\n")
    qs = [{**q, "filing": rows[q.pop("filing_row")].split(",")[0]} if "filing_row" in q else q for q in questions]
    (root / "questions.json").write_text(json.dumps(qs))
    return root


def test_the_loader_reads_aliases_and_question_filings(tmp_path):
    root = _dataset(tmp_path, [{"text": "What was AMZN's revenue?", "kind": "number", "filing_row": 0},
                               {"text": "What was Amazon's FY2019 revenue?", "kind": "number"}])
    ds = load_dataset(root)
    assert ds.reports[0].aliases == ("AMZN", "Amazon.com")
    assert ds.questions[0].filing == ds.reports[0].sha1 and ds.questions[1].filing == ""


def test_a_question_filing_that_is_no_report_is_one_clear_line(tmp_path):
    root = _dataset(tmp_path, [{"text": "What was AMZN's revenue?", "kind": "number", "filing": "f" * 40}])
    with pytest.raises(DatasetError) as e:
        load_dataset(root)
    assert len(e.value.problems) == 1 and "questions.json[0]: filing" in e.value.problems[0]
    assert "is not a sha1 of subset.csv" in e.value.problems[0]


# ---- aliases from the cover page -------------------------------------------------------------------------
COVER = """AMAZON.COM, INC.
(Exact name of registrant as specified in its charter)
Securities registered pursuant to Section 12(b) of the Act: Title of Each Class Trading Symbol(s) Name of Each Exchange on Which Registered
Common Stock, par value $.01 per share AMZN Nasdaq Global Select Market
0.950% Notes due 2023 AMZN23 New York Stock Exchange
Securities registered pursuant to Section 12(g) of the Act:
None"""
COVER_OLD = """Commission file number 001-6991. ________ WAL-MART STORES, INC.
(Exact name of registrant as specified in its charter)
Title of each class Name of each exchange on which registered
Common Stock, par value $0.10 per share New York Stock Exchange"""
COVER_KHC = """Title of each class Trading Symbol Name of exchange on which registered
Common stock, $0.01 par value KHC The Nasdaq Stock Market LLC
Securities registered pursuant to Section 12(g) of the Act: None."""

# The column headers printed below the row (a generated cover in the layout some 10-Ks use).
COVER_BELOW = """SECURITIES REGISTERED PURSUANT TO SECTION 12(B) OF THE ACT:
Class B Common Stock XYZ New York Stock Exchange
(Title of each class) (Trading symbol) (Name of each exchange on which registered)
SECURITIES REGISTERED PURSUANT TO SECTION 12(G) OF THE ACT:
NONE"""


def test_cover_page_tickers_and_registrant_name():
    assert cover_tickers([COVER]) == ["AMZN"]  # the notes' "AMZN23" is no ticker
    assert cover_tickers([COVER_BELOW]) == ["XYZ"]  # headers below the row
    assert cover_tickers([COVER_KHC]) == ["KHC"]
    assert cover_tickers([COVER_OLD]) == []  # covers before 2019 print no symbol column
    assert registrant_name([COVER]) == "AMAZON.COM, INC."
    assert registrant_name([COVER_OLD]) == "WAL-MART STORES, INC."


def test_company_aliases_skip_names_that_are_the_company_already():
    assert company_aliases("Amazon", [[COVER], [COVER_OLD.replace("WAL-MART STORES", "AMAZON.COM")]]) == \
        ["AMZN", "AMAZON.COM, INC."]
    assert company_aliases("Walmart", [[COVER_OLD.replace("WAL-MART STORES", "WALMART")]]) == []
    assert aliases_cell(["AMZN", "AMAZON.COM, INC."]) == "AMZN; AMAZON.COM, INC."
    # rag init names the company as its cover does: people still write "Amazon"
    assert company_aliases("Amazon.com, Inc.", [[COVER]]) == ["AMZN", "Amazon"]
    assert route("What was Amazon's FY2017 revenue?", [_r("a", "Amazon.com, Inc.", aliases=("AMZN", "Amazon")), WM]) == ["a"]


def test_import_financebench_writes_filings_and_aliases(tmp_path, monkeypatch):
    from test_financebench import _bench

    import rag.importers.financebench as fb

    monkeypatch.setattr(fb, "read_covers", lambda pdf: [COVER.replace("AMZN", "ACME").replace("AMAZON.COM", "ACME CORP")])
    out = tmp_path / "ds"
    fb.import_financebench(_bench(tmp_path), out)
    ds = load_dataset(out)
    by_name = {r.pdf.stem: r for r in ds.reports}
    assert by_name["ACME_2018_10K"].aliases == ("ACME",)  # "ACME CORP, INC." is the company's own name
    q = next(q for q in ds.questions if "FY2018 capital" in q.text)
    assert q.filing == by_name["ACME_2018_10K"].sha1
    meta = [json.loads(line) for line in (out / "financebench.jsonl").read_text().splitlines()]
    assert meta[0]["filing"] == by_name[meta[0]["doc_name"]].sha1
    # the per-filing setting routes every question to its own filing
    acc = routing_accuracy(ds, given_filing=True)
    assert acc["right"] == acc["questions"] == len(ds.questions)
    per_q, summary = score_run(ds, {}, {}, given_filing=True)
    assert summary["setting"] == setting_row(True)
    assert summary["setting"]["setting"] == "per filing" and summary["setting"]["paper_baseline_accuracy"] == 0.46
    assert score_run(ds, {}, {})[1]["setting"]["setting"] == "shared"


def test_half_of_keeps_one_half_of_the_split(tmp_path, monkeypatch):
    from test_financebench import _bench

    import rag.core.config as config
    from rag.evaluate.financebench import half_of
    from rag.importers.financebench import import_financebench

    import_financebench(_bench(tmp_path), tmp_path / "ds")
    (tmp_path / "root" / "data").mkdir(parents=True)
    (tmp_path / "root" / "data" / "splits.json").write_text(
        json.dumps({"financebench": {"tuning": ["ACME"], "report": ["Other"]}}))
    monkeypatch.setattr(config, "PROJECT_ROOT", tmp_path / "root")
    ds = load_dataset(tmp_path / "ds")
    assert len(half_of(ds, "tuning").questions) == 3 and len(half_of(ds, "report").questions) == 1
    assert half_of(ds, "report").questions[0].text.startswith("What is Other's")


def test_a_name_spelled_another_way_routes():
    """Words run together or split ("CocaCola", "JP Morgan"), initials around an "&" ("J&J"), never a common
    word in lower case."""
    reports = [_r("ko", "Coca-Cola", "2022", "10-K"), _r("jj", "Johnson & Johnson", "2022", "10-K"),
               _r("jpm", "JPMorgan", "2022", "10-K"), _r("bb", "Best Buy", "2022", "10-K")]
    assert route("What was CocaCola's FY2022 revenue?", reports) == ["ko"]
    assert route("What was J&J's FY2022 revenue?", reports) == ["jj"]
    assert route("JP Morgan's FY2022 net income?", reports) == ["jpm"]
    got = route_filings("BestBuy's FY2022 capex?", reports)
    assert [r.sha1 for r in got] == ["bb"] and got[0].how == "spelling" and "'BestBuy'" in got[0].reason
    assert route("what was j&j revenue in FY2022?", reports) == []  # initials in lower case: not a name
    assert route("Is R&D spending high at the bestbuy store?", reports) == []
