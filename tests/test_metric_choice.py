"""Numbers matched by meaning (rag.answer.numbers.metric_choice): the asked metric, every figure as a candidate, the
embedder's shortlist, the reader's choice read as probabilities, the threshold, and the hook in the table
pick; a real model server answers the choice call with log-probabilities (llm mark)."""
from __future__ import annotations

import math

import pytest

from rag.answer.numbers import metric_choice as mc
from rag.answer.common.context import CtxPage
from rag.answer.numbers.figure_pick import answer_from_tables
from rag.models.base import LLMResult, Usage
from rag.models.logprobs import field_choice_probs

SHA = "c" * 40
Q_HEAD = ("What was the value of Year-end total headcount of Acme Corp at the end of the period listed in annual "
          "report? If data is not available, return 'N/A'.")
PAGE = ("Our people\n\nAt December 31, 2023 our 4,100 team members worked in 12 countries. "
        "Revenue grew to $812.4 million in 2023.\n")


def test_the_asked_metric_is_read_from_every_template():
    assert mc.metric_phrase(Q_HEAD, "Acme Corp") == "Year-end total headcount"
    q = Q_HEAD.replace("Year-end total headcount", "Number of drugs on the market (approved)")
    assert mc.metric_phrase(q, "Acme Corp") == "Number of drugs on the market (approved)"  # the company ends it
    q = ("For Acme Corp, what was the value of Branch count at year-end at the end of the period listed in annual "
         "report? If data is not available, return 'N/A'.")
    assert mc.metric_phrase(q, "Acme Corp") == "Branch count at year-end"
    assert mc.metric_phrase(q.replace("Branch count", "Number of power plants"), "Acme Corp") == \
        "Number of power plants at year-end"
    q = ("According to the annual report, what is the Total revenue (in USD) for Acme Corp  (within the last period "
         "or at the end of the last period)? If data is not available, return 'N/A'.")
    assert mc.metric_phrase(q, "Acme Corp") == "Total revenue"
    q = ("What was the Operating margin (%) for Acme Corp according to the annual report (within the last period or "
         "at the end of the last period)? If data is not available, return 'N/A'.")
    assert mc.metric_phrase(q, "Acme Corp") == "Operating margin (%)"
    assert mc.metric_phrase("How many stores does Acme Corp run? Answer briefly.", "Acme Corp") == \
        "How many stores does run?"
    # FinanceBench's instructions around the question: the sentence asking, from its "what is" on
    q = ("Assume that you are a public equities analyst. Answer the following question by primarily using information "
         "that is shown in the balance sheet: what is the year end FY2022 net PPNE for Acme Corp? Answer in USD "
         "billions.")
    assert mc.metric_phrase(q, "Acme Corp") == "year end FY2022 net PPNE"
    q = ("By drawing conclusions from the information stated only in the income statement, what is Acme Corp's FY2020 "
         "net income attributable to shareholders (in USD millions)?")
    assert mc.metric_phrase(q, "Acme Corp") == "FY2020 net income attributable to shareholders"


def _lps(p: dict[str, float]) -> list:
    return [['{"choice": ', [['{"choice": ', 0.0]]], [max(p, key=p.get), [[d, math.log(v)] for d, v in p.items()]],
            ["}", [["}", 0.0]]]]


def test_the_choice_probabilities_are_read_at_the_digit_and_the_threshold_decides():
    probs = field_choice_probs(_lps({"2": 0.6, "0": 0.3, "1": 0.1, "x": 0.5}), "choice", 3)
    assert probs == pytest.approx([0.3, 0.1, 0.6, 0.0])  # "x" is no digit; 0..3 renormalised
    assert field_choice_probs(_lps({"7": 1.0}), "choice", 3) is None  # no digit within 0..3
    assert field_choice_probs(None, "choice", 3) is None and field_choice_probs(_lps({"1": 1.0}), "other", 3) is None
    assert mc.decide([0.3, 0.1, 0.6], 0.5) == (2, 0.6)
    assert mc.decide([0.3, 0.1, 0.6], 0.7) == (0, 0.3)
    assert mc.decide(None, 0.5) == (0, 1.0)


def test_every_figure_that_passes_the_unit_rules_is_a_candidate_whatever_its_words(make_cfg):
    cfg = make_cfg()
    page = CtxPage(SHA, 3, PAGE, 0)
    words = answer_from_tables(None, cfg, Q_HEAD, [page], "USD", len, "Acme Corp")
    assert words["value"] == "N/A" and words["interpretation"]["no_candidate"]  # "team members" is no metric word
    cands = mc.relaxed_candidates(cfg, Q_HEAD, [page], "USD", "Acme Corp")
    assert sorted(c.value for c in cands) == [12, 4100]  # counts; a count question takes no money figure


class FakeLLM:
    model = "fake"

    def __init__(self, probs: dict[str, float]):
        self.probs, self.seen = probs, []

    def complete(self, messages, schema=None, **params):
        self.seen.append((messages, params))
        best = max(self.probs, key=self.probs.get)
        return LLMResult(value=schema.model_validate({"choice": int(best)}), raw=f'{{"choice": {best}}}',
                         model=self.model, usage=Usage(), logprobs=_lps(self.probs))


def test_the_reader_chooses_by_meaning_when_no_words_name_the_metric(make_cfg):
    cfg = make_cfg(overrides={"answer.metric_choice": True, "answer.metric_choice_min_p": 0.6})
    page = CtxPage(SHA, 3, PAGE, 0)
    llm = FakeLLM({"1": 0.9, "0": 0.1})
    out = answer_from_tables(llm, cfg, Q_HEAD, [page], "USD", len, "Acme Corp")
    info = out["interpretation"]
    assert out["value"] == 4100.0 and info["picked_by"] == "meaning" and info["value_pages"] == [3]
    assert info["meaning"]["probs"] == pytest.approx([0.1, 0.9, 0.0]) and info["meaning"]["choice"] == 1
    assert "no candidate" in info["words_na_reason"] and out["cited"] == [page]
    user = llm.seen[0][0][-1]["content"]
    assert "team members" in user and "0. none of these lines states it" in user
    assert llm.seen[0][1]["logprobs"] is True
    low = answer_from_tables(FakeLLM({"1": 0.55, "0": 0.45}), cfg, Q_HEAD, [page], "USD", len, "Acme Corp")
    assert low["value"] == "N/A" and "best P 0.55 < 0.6" in low["interpretation"]["na_reason"]


def test_off_by_default_and_its_knobs_stay_out_of_keys_while_off(make_cfg):
    from rag.core import deps

    base, on = make_cfg(), make_cfg(overrides={"answer.metric_choice": True})
    assert base.answer.metric_choice is False
    moved = make_cfg(overrides={"answer.metric_choice_min_p": 0.9})
    assert deps.config_signature(base, "06_answer") == deps.config_signature(moved, "06_answer")
    assert deps.config_signature(base, "06_answer") != deps.config_signature(on, "06_answer")


@pytest.mark.llm
def test_a_real_server_answers_the_choice_with_probabilities(make_cfg):
    from rag.models import get_llm

    cfg = make_cfg()
    page = CtxPage(SHA, 3, PAGE + "\nWe opened 3 new offices in 2023.\n", 0)
    cands = mc.relaxed_candidates(cfg, Q_HEAD, [page], "USD", "Acme Corp")
    call = mc.choose(get_llm(cfg), cfg, Q_HEAD, cands)
    assert call["error"] is None and len(call["probs"]) == len(cands) + 1
    assert sum(call["probs"]) == pytest.approx(1.0, abs=1e-6)
    n, p = mc.decide(call["probs"], 0.0)
    assert 1 <= n <= len(cands) and p == max(call["probs"][1:])


class LineFakeLLM:
    """Answers each one-line yes/no call with P(true) by the line's figure."""
    model = "fake"

    def __init__(self, p_by_figure: dict[str, float]):
        self.p, self.seen = p_by_figure, []

    def complete(self, messages, schema=None, **params):
        self.seen.append((messages, params))
        printed = messages[-1]["content"].split("\n")[1].rsplit("|", 1)[1].split("[")[0].strip()
        p = self.p[printed]
        lps = [['{"final_answer":', [['{"final_answer":', 0.0]]],
               [" true", [[" true", math.log(p)], [" false", math.log(1 - p)]]], ["}", [["}", 0.0]]]]
        return LLMResult(value=schema.model_validate({"final_answer": p >= 0.5}), raw="", model=self.model,
                         usage=Usage(prompt_tokens=10, requests=1), logprobs=lps)


def test_line_by_line_each_line_is_judged_alone_and_the_best_p_true_stands(make_cfg):
    cfg = make_cfg(overrides={"answer.metric_choice": True, "answer.metric_choice_by": "lines",
                              "answer.metric_choice_min_p": 0.5})
    page = CtxPage(SHA, 3, PAGE, 0)
    llm = LineFakeLLM({"4,100": 0.8, "12": 0.3})
    out = answer_from_tables(llm, cfg, Q_HEAD, [page], "USD", len, "Acme Corp")
    info = out["interpretation"]
    assert len(llm.seen) == 2 and all(m[-1]["content"].startswith("LINE:\n") for m, _ in llm.seen)
    assert all("1." not in m[-1]["content"].split("\n")[1][:3] for m, _ in llm.seen)  # no list number
    assert out["value"] == 4100.0 and info["picked_by"] == "meaning"
    assert sorted(info["meaning"]["probs"][1:]) == pytest.approx([0.3, 0.8])
    assert info["meaning"]["probs"][0] == pytest.approx(0.2) and out["calls"][0]["usage"]["requests"] == 2
    low = answer_from_tables(LineFakeLLM({"4,100": 0.4, "12": 0.3}), cfg, Q_HEAD, [page], "USD", len, "Acme Corp")
    assert low["value"] == "N/A" and "best P 0.40 < 0.5" in low["interpretation"]["na_reason"]


def test_the_metric_words_are_the_asking_parts_not_the_instructions():
    from rag.answer.numbers.figure_check import metric_terms

    q = ("By drawing conclusions from the information stated only in the income statement, what is Acme Corp's FY2020 "
         "net income attributable to shareholders (in USD millions)?")
    assert metric_terms(q, "Acme Corp") == {"attri", "incom", "share"}  # not "drawing", "conclusions", "statement"
    erc = ("For Acme Corp, what was the value of Total deposits at year-end at the end of the period listed in annual "
           "report?")
    assert metric_terms(erc, "Acme Corp") == {"depos"}  # ("total", "year-end": generic words)
