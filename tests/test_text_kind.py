"""The short-text answer kind (rag.answer.text.text_kind) and its hooks: schema, prompt, interpretation,
submission, kind inference."""
from __future__ import annotations

import pytest

from rag.answer.interpret import part_value
from rag.answer.common.prompts import SCHEMAS, build_messages, prompt_version
from rag.answer.common.submission import build_submission
from rag.answer.text.text_kind import MAX_SENTENCES, text_value
from rag.ask import infer_kind
from rag.core.config import load_config


def test_text_value_keeps_three_sentences():
    raw = "Margin fell 1.7 points in the U.S. market. Costs rose 2.5%. Prices rose. A fourth one."
    assert text_value(raw) == "Margin fell 1.7 points in the U.S. market. Costs rose 2.5%. Prices rose."
    assert MAX_SENTENCES == 3 and text_value("N/A") == "N/A" and text_value(None) == "N/A"


def test_prompt_schema_and_interpretation():
    msgs = build_messages("text", "=== Page 1 ===\nx", "Why did margin fall?")
    assert "at most 3 sentences" in msgs[0]["content"] and len(prompt_version("text")) == 12
    parsed = SCHEMAS["text"].model_validate({"step_by_step_analysis": "a", "reasoning_summary": "b",
                                             "relevant_pages": ["Page 1"], "final_answer": "Costs rose. " * 5})
    assert parsed.relevant_pages == [1]
    cfg = load_config("offline")
    v, info = part_value(cfg, "text", {"parsed": parsed.model_dump()}, [], [], "Why?", None)
    assert v == "Costs rose. Costs rose. Costs rose." and info == {}


def test_submission_accepts_text():
    sub = build_submission([{"question_text": "Why?", "kind": "text", "value": "Costs rose.",
                             "references": [{"sha1": "a" * 40, "page": 3}]},
                            {"question_text": "How?", "kind": "text", "value": "N/A", "references": []}], "x@y.z", "t")
    assert sub.answers[0].references[0].page_index == 2 and sub.answers[1].value == "N/A"


@pytest.mark.parametrize("q,kind", [
    ("What drove operating margin change as of FY2022 for 3M?", "text"),
    ("As of FY2023Q1, why did Pepsico raise full year guidance for FY2023?", "text"),
    ("How did 3M's segments perform in 2022?", "text"),
    ("How much did 3M spend on capex in FY2018?", "number"),
    ("As of Q2'2023, is Pfizer spinning off any large business segments?", "boolean"),
    ("Is 3M a capital-intensive business based on FY2022 data?", "boolean"),
])
def test_infer_kind_learns_text(q, kind):
    assert infer_kind(q) == kind


def test_ask_prints_filing_and_reason():
    from rag.ask import AskResult, format_result

    out = format_result(AskResult(question="q", kind="boolean", kind_inferred=True, companies=["3M Company"],
                                  value=False, references=[], reason="Capex is 5% of revenue.",
                                  filings=["3M Company 10-K 2022 (FY2022 named)"]))
    assert "Filing: 3M Company 10-K 2022 (FY2022 named)" in out and "Why: Capex is 5% of revenue." in out
