"""Open answers keep only sentences whose figures their pages print (rag.answer.text.grounding,
answer.text_figures_on_pages)."""
from __future__ import annotations

from rag.answer.common.context import CtxPage
from rag.answer.interpret import part_value
from rag.answer.text.grounding import figures, grounded, supported

PAGE = ("Consolidated statements of income (millions)\n| | 2022 | 2021 |\n| Net sales | $ 1,824 | 1,700 |\n"
        "| Effective tax rate | 21.6% | 24.6% |\nWe do not report a gross margin: our revenue is net of interest.")
SRC = [PAGE]


def test_figures_are_digits_without_separators_and_words_hold_none():
    assert figures("Sales of $1,824 million in FY2021, up 7.3%.") == {"1824", "7.3"}


def test_a_figure_passes_when_printed_rescaled_or_derived_from_the_sentences_own():
    assert supported("Sales were $1,824 million.", SRC) and supported("Sales were $1.8 billion.", SRC, derived=True)
    assert not supported("Sales were $1.8 billion.", SRC)  # strict: only as printed
    assert supported("The rate fell from 24.6% to 21.6% (-3.0 points).", SRC, derived=True)
    assert supported("Sales rose from 1,700 to 1,824 (7.3%).", SRC, derived=True)  # the change in percent
    assert not supported("Gross margin fell from 20.9% to 20.4% (-0.5 points).", SRC, derived=True)
    assert not supported("The rate fell by 5.0 points.", SRC, derived=True)  # a difference of nothing it states


def test_grounded_keeps_the_sentences_the_pages_bear_out():
    kept, dropped = grounded("Gross margin fell from 20.9% to 20.4%. It is not a useful metric for this company.", SRC)
    assert kept == ["It is not a useful metric for this company."]
    assert dropped == ["Gross margin fell from 20.9% to 20.4%."]


def _call(answer: str) -> dict:
    return {"parsed": {"step_by_step_analysis": "Page 1.", "reasoning_summary": "Page 1.", "relevant_pages": [1],
                       "final_answer": answer}}


def test_a_text_part_drops_a_sentence_no_page_prints_and_is_na_when_none_is_left(make_cfg):
    page = CtxPage("e" * 40, 7, PAGE, 0)
    q = "What drove gross margin change as of FY2022 for Acme Corp?"
    cfg = make_cfg()
    v, info = part_value(cfg, "text", _call("Gross margin fell from 20.9% to 20.4%. It is not a useful metric for "
                                            "this company."), [page], [page], q, "USD")
    assert v == "It is not a useful metric for this company."
    assert info["dropped_sentences"] == ["Gross margin fell from 20.9% to 20.4%."]
    v, info = part_value(cfg, "text", _call("The largest liability was debt of $29.4 billion."), [page], [page], q, "USD")
    assert v == "N/A" and "no page read prints" in info["na_reason"]
    v, info = part_value(cfg, "text", _call("Sales were $1.8 billion, up from 1,700."), [page], [page], q, "USD")
    assert v == "Sales were $1.8 billion, up from 1,700." and info == {}
    off = make_cfg(overrides={"answer.text_figures_on_pages": False})
    v, _ = part_value(off, "text", _call("Gross margin fell from 20.9% to 20.4%."), [page], [page], q, "USD")
    assert v == "Gross margin fell from 20.9% to 20.4%."
