"""A yes/no page's "true" checked against the reader's own note on it (rag.answer.booleans.claim_check,
answer.boolean_claim_check)."""
from __future__ import annotations

import math

import pytest

from rag.answer.booleans.claim_check import claim_call, claim_note
from rag.answer.common.calls import BooleanDecision
from rag.answer.common.context import CtxPage
from rag.answer.fuse import answer_pages
from rag.models.base import FakeLLM, LLMResult, Usage

Q = "Did Acme Corp announce any changes to its executive team? If there is no mention, return False."
NOTES = {"alpha": "Page 1 shows the signatures of the executive team.",
         "beta": "Page 1 says Jane Roe succeeded John Doe as Chief Financial Officer in May."}


def _lps(p: float) -> list:
    return [['{"final_answer":', [['{"final_answer":', 0.0]]],
            [" true", [[" true", math.log(p)], [" false", math.log(1 - p)]]], ["}", [["}", 0.0]]]]


class NoteFake(FakeLLM):
    """The reasoning says true on every page, with a note naming what the page shows; P(true) of a page 0.6;
    P(true) of a note check by the note (signatures 0.1, a named successor 0.9)."""

    def __init__(self):
        def respond(messages, schema):
            if schema is BooleanDecision:
                return {"final_answer": True}
            word = next(w for w in NOTES if w in messages[-1]["content"])
            return {"step_by_step_analysis": NOTES[word], "reasoning_summary": "A change is shown.",
                    "relevant_pages": [1], "final_answer": True}
        super().__init__(respond)
        self.notes_checked = []

    def complete(self, messages, schema=None, **params):
        r = super().complete(messages, schema, **params)
        if schema is BooleanDecision:
            text = messages[-1]["content"]
            if text.startswith("NOTE:\n"):
                self.notes_checked.append(text.split("\n")[1])
                p = 0.1 if "signatures" in text else 0.9
            else:
                p = 0.6
            r = LLMResult(value=r.value, raw=r.raw, model=r.model, usage=Usage(prompt_tokens=5, requests=1),
                          logprobs=_lps(p))
        return r


def _pages():
    return [CtxPage(sha1="s", page=i + 1, text=f"page text {w}", rank=i) for i, w in enumerate(NOTES)]


def _cfg(make_cfg, **extra):
    return make_cfg(overrides={"answer.pages_per_call": {"boolean": 1}, "answer.boolean_p_true": True,
                               "answer.boolean_decision": "both", "answer.boolean_min_p_true": 0.2,
                               "answer.early_stop": True, **extra})


def test_a_true_whose_note_does_not_say_the_event_reads_on_to_the_next_page(make_cfg):
    from rag.models import count_tokens

    cfg = _cfg(make_cfg, **{"answer.boolean_claim_check": True, "answer.boolean_claim_min_p": 0.5})
    llm = NoteFake()
    res = answer_pages(llm, cfg, "boolean", Q, _pages(), None, lambda t: count_tokens(t, cfg))
    assert [c["value"] for c in res["calls"]] == [False, True]  # page 1's note is signatures: rejected
    assert [c["claim_p"] for c in res["calls"]] == [pytest.approx(0.1), pytest.approx(0.9)]
    assert res["calls"][0]["interpretation"]["claim_rejected"] is True
    assert res["value"] is True and res["answering_part"][0].page == 2
    assert llm.notes_checked[0].startswith(NOTES["alpha"])
    # off (the default): the first page's true stands, no note is checked
    plain = _cfg(make_cfg)
    llm = NoteFake()
    res = answer_pages(llm, plain, "boolean", Q, _pages(), None, lambda t: count_tokens(t, plain))
    assert res["value"] is True and res["answering_part"][0].page == 1 and llm.notes_checked == []


def test_the_threshold_decides_and_a_rejected_last_page_leaves_false(make_cfg):
    from rag.models import count_tokens

    cfg = _cfg(make_cfg, **{"answer.boolean_claim_check": True, "answer.boolean_claim_min_p": 0.95})
    res = answer_pages(NoteFake(), cfg, "boolean", Q, _pages(), None, lambda t: count_tokens(t, cfg))
    assert res["value"] is False and [c["value"] for c in res["calls"]] == [False, False]


def test_claim_call_without_a_note_or_log_probabilities(make_cfg):
    cfg = make_cfg()
    assert claim_note({"step_by_step_analysis": " A. ", "reasoning_summary": "B."}) == "A. B."
    assert claim_call(FakeLLM(lambda m, s: {"final_answer": True}), cfg, Q, {})["claim_p"] is None  # no note
    out = claim_call(FakeLLM(lambda m, s: {"final_answer": False}), cfg, Q, {"reasoning_summary": "A list."})
    assert out["claim_p"] == 0.0 and out["claim_note"] == "A list."  # the parsed answer, taken as certain
