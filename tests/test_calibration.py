"""A yes/no page's P(true) set against the other yes/no templates' on the same page (rag.answer.booleans.calibration,
answer.boolean_calibration)."""
from __future__ import annotations

import math

import pytest

from rag.answer.booleans.calibration import calibration_call, controls_for, load_controls
from rag.answer.common.calls import BooleanDecision
from rag.answer.common.context import CtxPage
from rag.answer.fuse import answer_pages
from rag.models.base import FakeLLM, LLMResult, Usage

Q = "Did Acme Corp announce a share buyback plan in the annual report? If there is no mention, return False."


def _lps(p: float) -> list:
    return [['{"final_answer":', [['{"final_answer":', 0.0]]],
            [" true", [[" true", math.log(p)], [" false", math.log(1 - p)]]], ["}", [["}", 0.0]]]]


class PageFake(FakeLLM):
    """The reasoning says true on every page. P(true): 0.4 for the buyback question on both pages; the other
    questions 0.35 on the page of signatures ("alpha": a page the reader says yes to whatever is asked) and 0.1
    on the page that states a buyback ("beta")."""

    def __init__(self):
        super().__init__(lambda m, s: {"final_answer": True} if s is BooleanDecision else {
            "step_by_step_analysis": "The page shows it.", "reasoning_summary": "Yes.", "relevant_pages": [1],
            "final_answer": True})
        self.asked = []

    def complete(self, messages, schema=None, **params):
        r = super().complete(messages, schema, **params)
        if schema is BooleanDecision:
            text = messages[-1]["content"]
            question = text.rsplit("QUESTION:", 1)[1].strip()
            self.asked.append(question)
            p = 0.4 if "buyback" in question else (0.35 if "alpha" in text else 0.1)
            r = LLMResult(value=r.value, raw=r.raw, model=r.model, usage=Usage(prompt_tokens=5, requests=1),
                          logprobs=_lps(p))
        return r


def _pages():
    return [CtxPage(sha1="s", page=i + 1, text=f"page text {w}", rank=i) for i, w in enumerate(("alpha", "beta"))]


def _cfg(make_cfg, **extra):
    return make_cfg(overrides={"answer.pages_per_call": {"boolean": 1}, "answer.boolean_p_true": True,
                               "answer.boolean_decision": "both", "answer.boolean_min_p_true": 0.2,
                               "answer.early_stop": True, **extra})


def test_controls_are_the_other_templates_with_the_questions_company():
    templates = load_controls("prompts")
    assert len(templates) == 10 and all("{company}" in t for t in templates)
    controls = controls_for("  did ACME corp announce a share buyback plan in the annual report?  If there is no "
                            "mention, return False.", templates)
    assert len(controls) == 9 and all("ACME corp" in c for c in controls)
    assert not any("buyback" in c for c in controls)
    # a question of no template is not calibrated
    assert controls_for("Is Acme Corp a capital-intensive business based on FY2022 data?", templates) == []


def test_a_true_on_a_page_that_says_yes_to_everything_reads_on(make_cfg):
    from rag.models import count_tokens

    cfg = _cfg(make_cfg, **{"answer.boolean_calibration": True, "answer.boolean_calibration_min": 0.11})
    llm = PageFake()
    res = answer_pages(llm, cfg, "boolean", Q, _pages(), None, lambda t: count_tokens(t, cfg))
    # page 1: 0.4 - 0.35 = 0.05 < 0.11, passed over; page 2: 0.4 - 0.1 = 0.3 stands
    assert [c["value"] for c in res["calls"]] == [False, True]
    assert [c["calib_score"] for c in res["calls"]] == [pytest.approx(0.05), pytest.approx(0.3)]
    assert res["calls"][0]["interpretation"]["calibration_rejected"] is True
    assert len(res["calls"][0]["calib_ps"]) == 9 and res["calls"][0]["calib_usage"]["requests"] == 9
    assert res["value"] is True and res["answering_part"][0].page == 2
    # a cut above both pages' scores leaves false
    high = _cfg(make_cfg, **{"answer.boolean_calibration": True, "answer.boolean_calibration_min": 0.5})
    res = answer_pages(PageFake(), high, "boolean", Q, _pages(), None, lambda t: count_tokens(t, high))
    assert res["value"] is False
    # off: the first page's true stands and no control is asked
    plain = _cfg(make_cfg, **{"answer.boolean_calibration": False})
    llm = PageFake()
    res = answer_pages(llm, plain, "boolean", Q, _pages(), None, lambda t: count_tokens(t, plain))
    assert res["value"] is True and res["answering_part"][0].page == 1
    assert all("buyback" in q for q in llm.asked)


def test_no_controls_no_p_or_failed_calls_leave_no_score(make_cfg):
    cfg = make_cfg()
    assert calibration_call(PageFake(), cfg, "Is Acme Corp capital-intensive?", "ctx", 0.4)["calib_score"] is None
    assert calibration_call(PageFake(), cfg, Q, "ctx", None)["calib_score"] is None

    class Down(FakeLLM):
        def complete(self, messages, schema=None, **params):
            from rag.models.base import ModelError

            raise ModelError("server down")

    out = calibration_call(Down(lambda m, s: None), cfg, Q, "ctx", 0.4)
    assert out["calib_score"] is None and len(out["calib_errors"]) == 9


def test_a_controls_file_without_the_placeholder_names_the_file(tmp_path):
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "controls.txt").write_text("# comment\nDid the company pay a dividend?\n")
    with pytest.raises(ValueError, match=r"controls.txt: line 2 has no \{company\}"):
        load_controls(tmp_path)


def test_rag_ask_says_which_page_was_passed_over():
    from rag.ask import _reason

    d = {"kind": "boolean", "calls": [
        {"parsed": {"reasoning_summary": "Page 1 shows the signatures."}, "pages": [{"page": 12}], "p_true": 0.31,
         "calib_ps": [0.25, 0.29], "calib_score": 0.04, "interpretation": {"calibration_rejected": True}},
        {"parsed": {"reasoning_summary": "No buyback is mentioned."}, "pages": [{"page": 30}], "p_true": 0.05}]}
    assert _reason(d) == ("No buyback is mentioned. (page 12's true passed over: P(true) 0.31, 0.27 for other "
                          "yes/no questions)")
    # read without reasoning (answer.boolean_reasoning false, the default): P(true) per page, and the same note
    no_reasoning = {"kind": "boolean", "calls": [{**c, "parsed": None} for c in d["calls"]]}
    assert _reason(no_reasoning) == ("page 12: P(true) 0.31; page 30: P(true) 0.05 (page 12's true passed over: "
                                     "P(true) 0.31, 0.27 for other yes/no questions)")
    d["calls"][0]["interpretation"] = {}
    assert _reason(d) == "No buyback is mentioned."
