"""P(true) of a boolean from token log-probabilities: reading the value token, and 06's decision rule."""
from __future__ import annotations

import math

import pytest

from rag.answer.booleans.bool_logprob import BooleanDecision, decide, p_true_call
from rag.answer.common.context import CtxPage
from rag.answer.fuse import answer_pages
from rag.models.base import FakeLLM, LLMResult, Usage
from rag.models.logprobs import field_p_true


def _lps(value_alts, prefix=('{"', "final", "_answer", '":')):
    """Tokens of '{"final_answer": <v>}' with the value token's alternatives (natural-log probabilities)."""
    return [[t, [[t, -0.01]]] for t in prefix] + [[value_alts[0][0], value_alts]] + [["}", [["}", -0.01]]]]


def test_field_p_true_reads_the_value_token_and_normalises_over_true_and_false():
    lps = _lps([[' "', -0.1], [" true", math.log(0.3)], [" false", math.log(0.1)], ["True", math.log(0.1)]])
    assert field_p_true(lps) == pytest.approx(0.4 / 0.5)
    # after a reasoning field: the value of final_answer, not a "true" written earlier in the text
    long = [["{\"reason\": \"it is true", [["x", -1.0]]], ['",', [[",", -1.0]]]] + _lps([[" false", -0.05], [" true", -3.0]])
    assert field_p_true(long) == pytest.approx(math.exp(-3.0) / (math.exp(-3.0) + math.exp(-0.05)))
    assert field_p_true(None) is None and field_p_true([]) is None
    assert field_p_true(_lps([[" maybe", -0.1]])) is None  # neither spelling among the alternatives
    assert field_p_true(_lps([[" true", -0.1]]), field="other") is None


def test_decide_uses_p_only_when_asked(make_cfg):
    cot = make_cfg(overrides={"answer.boolean_decision": "cot"})
    lp = make_cfg(overrides={"answer.boolean_decision": "logprob", "answer.boolean_min_p_true": 0.7})
    assert decide(cot, 0.9, False) == (False, "cot")
    assert decide(lp, 0.9, False) == (True, "logprob") and decide(lp, 0.6, True) == (False, "logprob")
    assert decide(lp, None, True) == (True, "cot")  # no log-probabilities: the reasoning's answer stands


def test_both_says_true_only_when_the_reasoning_and_p_agree(make_cfg):
    both = make_cfg(overrides={"answer.boolean_decision": "both", "answer.boolean_min_p_true": 0.2})
    assert decide(both, 0.25, True) == (True, "both")
    assert decide(both, 0.15, True) == (False, "both")  # the reasoning says true, the value token does not
    assert decide(both, 0.9, False) == (False, "both")  # P alone never makes a true
    assert decide(both, None, True) == (True, "cot")  # no log-probabilities: the reasoning's answer stands


def test_with_both_a_true_reasoning_below_p_reads_on_to_the_next_page(make_cfg):
    from rag.models import count_tokens

    cfg = make_cfg(overrides={"answer.pages_per_call": {"boolean": 1}, "answer.boolean_p_true": True,
                              "answer.boolean_decision": "both", "answer.boolean_min_p_true": 0.5,
                              "answer.early_stop": True})
    llm = _LogprobFake(cot_answer=True, p_by_text={"alpha": 0.3, "beta": 0.9})
    res = answer_pages(llm, cfg, "boolean", "Did it buy back shares?", _pages(), None, lambda t: count_tokens(t, cfg))
    assert [c["value"] for c in res["calls"]] == [False, True]  # page 1: P 0.3 < 0.5, so page 2 is read
    assert res["value"] is True and res["answering_part"][0].page == 2
    res = answer_pages(_LogprobFake(True, {"alpha": 0.3, "beta": 0.4}), cfg, "boolean", "Did it buy back shares?",
                       _pages(), None, lambda t: count_tokens(t, cfg))
    assert res["value"] is False


class _LogprobFake(FakeLLM):
    """FakeLLM whose BooleanDecision calls return log-probabilities with P(true) = p_by_page[page label]."""

    def __init__(self, cot_answer: bool, p_by_text: dict[str, float]):
        def respond(messages, schema):
            if schema is BooleanDecision:
                return {"final_answer": True}
            return {"step_by_step_analysis": "...", "reasoning_summary": "...", "relevant_pages": [1],
                    "final_answer": cot_answer}
        super().__init__(respond)
        self.p_by_text = p_by_text

    def complete(self, messages, schema=None, **params):
        r = super().complete(messages, schema, **params)
        if schema is BooleanDecision:
            assert params.get("logprobs") is True and params.get("top_logprobs")
            text = messages[-1]["content"]
            p = next(v for k, v in self.p_by_text.items() if k in text)
            r = LLMResult(value=r.value, raw=r.raw, model=r.model, usage=Usage(prompt_tokens=5, requests=1),
                          logprobs=_lps([[" true", math.log(p)], [" false", math.log(1 - p)]]))
        return r


def _pages():
    return [CtxPage(sha1="s", page=i + 1, text=f"page text {w}", rank=i) for i, w in enumerate(("alpha", "beta"))]


def test_06_records_p_true_per_page_and_decides_by_it_when_asked(make_cfg):
    from rag.models import count_tokens

    q = "Did the company announce a share buyback?"
    base = {"answer.pages_per_call": {"boolean": 1}, "answer.boolean_p_true": True,
            "answer.boolean_decision": "cot"}
    counter = lambda t: count_tokens(t, cfg)  # noqa: E731
    cfg = make_cfg(overrides=base)
    llm = _LogprobFake(cot_answer=False, p_by_text={"alpha": 0.2, "beta": 0.8})
    res = answer_pages(llm, cfg, "boolean", q, _pages(), None, counter)
    assert res["value"] is False  # "cot": the reasoning said false on both pages
    assert [c["p_true"] for c in res["calls"]] == [pytest.approx(0.2), pytest.approx(0.8)]
    assert [c["interpretation"]["decided_by"] for c in res["calls"]] == ["cot", "cot"]
    cfg = make_cfg(overrides={**base, "answer.boolean_decision": "logprob", "answer.boolean_min_p_true": 0.7})
    res = answer_pages(_LogprobFake(False, {"alpha": 0.2, "beta": 0.8}), cfg, "boolean", q, _pages(), None, counter)
    assert res["value"] is True and res["interpretation"]["decided_by"] == "logprob"  # page 2: 0.8 >= 0.7
    cfg = make_cfg(overrides={**base, "answer.boolean_decision": "logprob", "answer.boolean_min_p_true": 0.9})
    res = answer_pages(_LogprobFake(True, {"alpha": 0.2, "beta": 0.8}), cfg, "boolean", q, _pages(), None, counter)
    assert res["value"] is False  # the reasoning said true, P below the threshold on both pages


def test_p_true_call_survives_a_backend_without_log_probabilities(make_cfg):
    llm = FakeLLM(lambda m, s: {"final_answer": True})
    out = p_true_call(llm, make_cfg(), "Did it?", "context")
    assert out["p_true"] is None and "final_answer" in out["p_raw"]


def test_without_reasoning_a_page_costs_the_decision_call_alone_and_a_true_cites_its_page(make_cfg):
    from rag.models import count_tokens

    cfg = make_cfg(overrides={"answer.pages_per_call": {"boolean": 1}, "answer.boolean_decision": "logprob",
                              "answer.boolean_min_p_true": 0.5, "answer.boolean_reasoning": False})
    llm = _LogprobFake(cot_answer=False, p_by_text={"alpha": 0.3, "beta": 0.9})
    res = answer_pages(llm, cfg, "boolean", "Did it buy back shares?", _pages(), None, lambda t: count_tokens(t, cfg))
    assert [s.__name__ for _, s in llm.calls] == ["BooleanDecision", "BooleanDecision"]  # no reasoning call
    assert res["value"] is True and [c["p_true"] for c in res["calls"]] == [pytest.approx(0.3), pytest.approx(0.9)]
    assert res["answering_part"][0].page == 2 and res["calls"][1]["p_usage"]["requests"] == 1
