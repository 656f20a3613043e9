"""rag.answer.numbers.prose: figures printed in sentences as candidates (metric words, period, unit, checks) and the
one picker over table and prose candidates (rag.answer.numbers.figure_pick)."""
from __future__ import annotations

import pandas as pd

from rag.answer.numbers import figure_pick as P
from rag.answer.common import printed as nums
from rag.answer.numbers import prose
from rag.answer.common.context import CtxPage
from rag.answer.fuse import answer_pages
from rag.models.base import FakeLLM

A = "a" * 40
COUNT = lambda t: len(t) // 4  # noqa: E731
TEXT = """# Our people
As of December 31, 2022, we had 1,300 full-time employees, compared with 1,150 employees as of December 31, 2021.
We hold 153 issued patents worldwide. In 2021 we held 140 patents.
Our generation capacity reached 250 MW in 2022, up from 180 MW in 2021.
Total revenue for 2022 was $339.3 million, an increase of 12% from $302.1 million in 2021.
During the year, we reduced our workforce by approximately 120 employees, or 8% of staff.
"""
REV = ("What was the Total revenue (in USD) for Acme Corp according to the annual report (within the last period "
       "or at the end of the last period)? If data is not available, return 'N/A'.")
REV_EUR = REV.replace("(in USD)", "(in EUR)")


def custom(metric: str) -> str:
    return (f"For Acme Corp, what was the value of {metric} at the end of the period listed in annual report? "
            "If data is not available, return 'N/A'.")


def cfg_(make_cfg, **over):
    return make_cfg(overrides={"answer.table_candidates": True, "answer.prose_candidates": True, **over})


def pg(text: str = TEXT, n: int = 12, rank: int = 0) -> CtxPage:
    return CtxPage(A, n, text, rank, 1.0 - rank / 10)


def cands(cfg, q: str, pages=None):
    return prose.prose_candidates(cfg, q, pages or [pg()], "USD", "Acme Corp")


def test_counts_from_sentences_with_period_and_earlier_figures_dropped(make_cfg):
    cfg = cfg_(make_cfg)
    kept, dropped = cands(cfg, custom("End-of-year total headcount"))
    assert [c.value for c in kept] == [1300] and kept[0].unit == "count" and kept[0].source == "prose"
    why = {d["printed"]: d["reason"] for d in dropped}
    assert "earlier period" in why["1,150"] and "change" in why["120"] and "percentage" in why["8%"]
    kept, dropped = cands(cfg, custom("Number of patents at year-end"))
    assert [c.value for c in kept] == [153]
    assert any(d["printed"] == "140" and "dated 2021" in d["reason"] for d in dropped)
    kept, _ = cands(cfg, custom("Total generation capacity (MW)"))  # "generation" holds "ratio": not a percentage
    assert [c.value for c in kept] == [250] and not nums.asks_percent(custom("Total generation capacity (MW)"))


def test_amounts_take_scale_and_currency_from_the_sentence(make_cfg):
    cfg = cfg_(make_cfg)
    kept, dropped = cands(cfg, REV)
    assert [(c.value, c.unit, c.currency) for c in kept] == [(339_300_000, "millions of USD", "USD")]
    kept, dropped = cands(cfg, REV, [pg("Revenue grew from $302.1 million in 2021 to $339.3 million in 2022.")])
    assert [c.value for c in kept] == [339_300_000] and "earlier" in dropped[0]["reason"]
    kept, dropped = cands(cfg, REV_EUR)  # another currency is never converted
    assert kept == [] and any("USD, EUR is asked" in d["reason"] for d in dropped)
    kept, _ = cands(cfg, custom("Number of patents at year-end"), [pg("We spent $153 million on patents in 2022.")])
    assert kept == []  # an amount of money is not a count


def test_a_window_without_the_metric_words_gives_nothing(make_cfg):
    kept, dropped = cands(cfg_(make_cfg), custom("Number of stores"), [pg("We opened 40 offices in 2022.")])
    assert kept == [] and dropped == []


def test_one_picker_over_table_and_prose_candidates(make_cfg):
    table = ("Table: Operations — values in thousands of USD\n| | 2022 | 2021 |\n|---|---|---|\n"
             "| Total revenues | 339,300 | 302,100 |\n")
    cfg = cfg_(make_cfg, **{"answer.figure_pick": "auto"})
    got, dropped, _ = P.gather_candidates(cfg, REV, [pg(table + "\n" + TEXT)], "USD", "Acme Corp")
    assert [c.value for c in got] == [339_300_000] and got[0].support == 2  # one value, both sources
    llm = FakeLLM(lambda m, s: {"reason": "x", "choice": 0})  # a clear fit: no model call
    res = answer_pages(llm, cfg, "number", REV, [pg(table + "\n" + TEXT)], "USD", COUNT, "Acme Corp")
    assert res["value"] == 339_300_000 and res["interpretation"]["picked_by"] == "code" and llm.calls == []


def test_auto_asks_the_model_when_candidates_are_close_and_threshold_gives_na(make_cfg):
    text = "We hold 153 issued patents and 40 pending patent applications worldwide."
    cfg = cfg_(make_cfg, **{"answer.figure_pick": "auto"})
    llm = FakeLLM(lambda m, s: {"reason": "issued patents", "choice": 1})
    res = answer_pages(llm, cfg, "number", custom("Number of patents"), [pg(text)], "USD", COUNT, "Acme Corp")
    assert res["value"] == 153 and res["interpretation"]["picked_by"] == "model" and len(llm.calls) == 1
    assert "CANDIDATES:\n1." in llm.calls[0][0][-1]["content"]
    cfg = cfg_(make_cfg, **{"answer.figure_pick": "code", "answer.figure_min_score": 0.95,
                             "answer.figure_fallback": "na"})
    res = answer_pages(FakeLLM(lambda m, s: {}), cfg, "number", custom("Number of patents"), [pg(text)], "USD", COUNT, "Acme Corp")
    info = res["interpretation"]
    assert res["value"] == "N/A" and info["no_candidate"] and any("figure_min_score" in d["reason"] for d in info["dropped"])


def test_tradeoff_curve_from_the_candidates_of_a_run(tmp_path):
    import json

    from rag.evaluate.tradeoff import tradeoff
    from rag.evaluate.plots import tradeoff_png

    run = tmp_path / "run"
    (run / "06_answer" / "debug").mkdir(parents=True)
    (run / "07_evaluate").mkdir()
    recs = {"q1": ([0.9, 339_300_000], [0.5, 1]), "q2": ([0.6, 42],), "q3": ()}  # (score, value) best first
    gold = {"q1": ["339300000.0"], "q2": ["N/A"], "q3": ["7.0"]}
    for qid, cs in recs.items():
        d = {"qid": qid, "kind": "number", "interpretation": {"candidates": [{"score": s, "value": v} for s, v in cs]}}
        (run / "06_answer" / "debug" / f"{qid}.json").write_text(json.dumps(d))
    pd.DataFrame([{"qid": q, "kind": "number", "gold": repr(g)} for q, g in gold.items()]).to_csv(
        run / "07_evaluate" / "per_question.csv", index=False)
    t = tradeoff([run], [None, 0.7, 0.95]).set_index("threshold")
    assert t.loc["none", ["found", "answered_na", "na_right", "wrong_value"]].tolist() == [1, 1, 0, 1]
    assert t.loc[0.7, ["found", "answered_na", "na_right", "na_precision"]].tolist() == [1, 2, 1, 0.5]
    assert t.loc[0.95, ["found", "answered_na", "na_recall"]].tolist() == [0, 3, 1.0]
    assert tradeoff_png(t.reset_index()).startswith(b"\x89PNG")


def test_stage_07_draws_the_threshold_curve_of_a_run(make_cfg, tmp_path):
    import json

    from rag.core.dataset import Dataset, Gold, Question
    from rag.evaluate import run_evaluate

    cfg = make_cfg(overrides={"answer.table_candidates": True}, run="r")
    qs = (Question(qid="q000", text="num?", kind="number"), Question(qid="q001", text="na?", kind="number"))
    gold = {"num?": Gold(kind="number", answers=("250",), pools=()), "na?": Gold(kind="number", answers=("N/A",), pools=())}
    ds = Dataset(root=tmp_path, name="tiny", reports=(), questions=qs, gold=gold)
    debug = cfg.run_dir / "06_answer" / "debug"
    debug.mkdir(parents=True)
    for qid, cands in (("q000", [(0.9, 250)]), ("q001", [(0.6, 7)])):
        (debug / f"{qid}.json").write_text(json.dumps({"qid": qid, "kind": "number", "interpretation": {
            "candidates": [{"score": s, "value": v} for s, v in cands]}}))
    (cfg.run_dir / "06_answer" / "submission.json").write_text(json.dumps({
        "team_email": "t@x", "submission_name": "t", "answers": [
            {"question_text": "num?", "kind": "number", "value": 250, "references": []},
            {"question_text": "na?", "kind": "number", "value": 7, "references": []}]}))
    run_evaluate(cfg, ds, progress=False, gold_source="answers")
    out = cfg.run_dir / "07_evaluate"
    curve = pd.read_csv(out / "na_tradeoff.csv").set_index("threshold")
    assert curve.loc["none", "found"] == 1 and curve.loc["0.8", "na_right"] == 1 and curve.loc["0.8", "found"] == 1
    assert (out / "na_tradeoff.png").read_bytes()[:4] == b"\x89PNG"


def test_figures_that_are_names_ranges_shares_changes_or_earlier_are_dropped(make_cfg):
    cfg = cfg_(make_cfg)
    text = ("In 2022, Microsoft 365 Consumer subscribers grew to 59.7 million.\n"
            "The Group leases its offices under agreements of between 2 to 10 years and has 19 offices.\n"
            "As of December 31, 2022, we reserved 2.9 million shares under the employee stock purchase plan, "
            "and we employed 5,700 employees.\n"
            "In 2022, total flowcells sold reached 15,375, an increase of 23% from the 12,518 flowcells sold in 2021.\n"
            "In July 2022, we implemented a reduction of our workforce by approximately 67%, or 12 employees.\n")
    ms = custom("Number of Microsoft 365 Consumer subscribers")
    assert [c.value for c in cands(cfg, ms, [pg(text)])[0]] == [59_700_000]
    kept, dropped = cands(cfg, custom("Number of offices"), [pg(text)])
    assert [c.value for c in kept] == [19] and any(d["printed"] == "2" and "years" in d["reason"] for d in dropped)
    kept, dropped = cands(cfg, custom("Number of employees"), [pg(text)])
    assert [c.value for c in kept] == [5700]
    why = {d["printed"]: d["reason"] for d in dropped}
    assert "shares" in why["2.9 million"] and "change" in why["12"]
    kept, dropped = cands(cfg, custom("Number of flowcells sold"), [pg(text)])
    assert [c.value for c in kept] == [15375] and "earlier" in {d["printed"]: d["reason"] for d in dropped}["12,518"]
    laid = ("How many employees were laid off by Acme Corp during the period covered by the annual report? "
            "If data is not available, return 'N/A'.")
    assert [c.value for c in cands(cfg, laid, [pg(text)])[0]] == [12]


def test_the_report_year_is_the_most_named_period_end(make_cfg):
    from rag.answer.numbers.prose_period import page_year

    text = ("As of December 31, 2022, we had 18 employees. For the year ended December 31, 2022, revenue grew. "
            "Our bonds mature as of December 31, 2035.")
    assert page_year([pg(text)]) == 2022


def test_spelled_counts_and_assets_under_management(make_cfg):
    cfg = cfg_(make_cfg)
    text = ("We currently have in our portfolio eleven (11) issued patents and forty-seven (47) pending applications.\n"
            "At December 31, 2022, we managed $2.1 billion of assets, including $1.5 billion of loans.\n")
    assert [c.value for c in cands(cfg, custom("Number of issued patents"), [pg(text)])[0]][:1] == [11]
    aum = custom("Assets under management (AUM) (in USD)")
    assert [c.value for c in cands(cfg, aum, [pg(text)])[0]][:1] == [2_100_000_000]


def test_the_noun_after_a_count_names_what_the_question_counts(make_cfg):
    """"a fleet of 19 Suezmax tankers" answers "Fleet size (vessels)", "16 full-service branch offices" answers
    "Branch count" (the count topics' nouns of retrieve.counts); another topic's noun counts nothing asked."""
    cfg = cfg_(make_cfg)
    text = ("Nordic American Tankers is an international tanker company that has a fleet of 19 Suezmax tankers as of "
            "December 31, 2022.\nAs of December 31, 2022 the Bank operated 16 full-service branch offices within "
            "its primary market area.\nOur research team grew to 73 employees during 2022.\n")
    fleet = custom("Fleet size (vessels) at year-end")
    assert [c.value for c in cands(cfg, fleet, [pg(text)])[0]][:1] == [19]
    assert [c.value for c in cands(cfg, custom("Branch count at year-end"), [pg(text)])[0]][:1] == [16]
    assert [c.value for c in cands(cfg, fleet, [pg(text)])[0]] == [19]  # offices and employees count no vessels


def test_noun_fit_takes_the_noun_only_with_the_metrics_other_words():
    import re

    from rag.answer.numbers.prose_counts import noun_fit
    counted = (re.compile(r"\s+(?:[\w-]+\s+){0,3}?\b(?:tankers\b)", re.I), {"crude"})
    assert noun_fit((0.5, 3), counted, " Suezmax tankers", lambda rest: None) == (0.5, 3)  # "crude" not named
    assert noun_fit((0.5, 3), counted, " Suezmax tankers", lambda rest: (1.0, 1)) == (1.0, 1)
    assert noun_fit((0.5, 3), counted, " years ago", lambda rest: (1.0, 1)) == (0.5, 3)  # no noun after it
    assert noun_fit((0.5, 3), (counted[0], set()), " tankers", lambda rest: None) == (1.0, 0)


def test_a_quantity_in_a_measure_is_neither_money_nor_a_count(make_cfg):
    """"(barrels)" in the question: "81,300 barrels" needs no currency, though the metric says "Assets"."""
    text = "The Group's Canadian Oil Assets produced approximately 81,300 barrels (\"bbl\") of crude oil in 2022.\n"
    q = custom("Crude oil produced by the Canadian Oil Assets (barrels)")
    assert [c.value for c in cands(cfg_(make_cfg), q, [pg(text)])[0]][:1] == [81_300]
    assert prose._kinds(q, "Acme Corp") == (False, False, False)


def test_a_shares_par_value_is_no_amount_of_the_metric(make_cfg):
    cfg = cfg_(make_cfg)
    eq = REV.replace("Total revenue", "Shareholders' equity")
    text = ("# Balance sheet\nAs of December 31, 2022: Stockholders' equity: Common stock, $0.01 par value; "
            "600,000 shares authorized.\nThe Series I Preferred Stock has a par value of $0.01 per share.\n")
    kept, dropped = cands(cfg, eq, [pg(text)])
    assert not kept
    assert [d["reason"] for d in dropped if d["printed"] == "$0.01"] == ["a share's par value, not an amount of the metric"] * 2
    par = REV.replace("Total revenue", "Par value per common share")  # asked for: kept
    assert "par value" not in " ".join(d["reason"] for d in cands(cfg, par, [pg(text)])[1])


def test_a_number_joined_to_a_word_by_a_hyphen_is_part_of_a_name(make_cfg):
    cfg = cfg_(make_cfg)
    text = ("# Our people\nAs of December 31, 2022, we supported our employees through the COVID- 19 pandemic "
            "and the COVID-19 lockdowns; we employed approximately 1,300 employees.\n")
    kept, dropped = cands(cfg, custom("End-of-year total headcount"), [pg(text)])
    assert [c.value for c in kept] == [1300]
    assert {d["reason"] for d in dropped if d["printed"] == "19"} == {"part of a name or code ('COVID-19', '10-K')"}


def test_a_return_on_something_is_a_percentage(make_cfg):
    roe = custom("Return on equity (ROE) at year-end")
    assert nums.asks_percent(roe) and not nums.asks_percent(custom("Total deposits at year-end"))
    text = "# Results\nFor the year ended December 31, 2022, our return on average equity was 16.99 percent.\n"
    kept, _ = cands(cfg_(make_cfg), roe, [pg(text)])
    assert [c.value for c in kept] == [16.99] and kept[0].unit == "%"
