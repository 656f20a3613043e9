"""Open (text) answers built from their evidence (rag.answer.text.text_evidence, issue 48 item 4): the numbered
candidate lines with their table's period columns, the changes / shares / largest line computed in code, the
figure check on the written sentences, N/A without evidence, the example-copy check, the switch and the key."""
from __future__ import annotations

import json

import pytest

from rag.answer.text import evidence_math as em
from rag.answer.common.context import CtxPage
from rag.answer.text.evidence_lines import candidate_lines, format_lines
from rag.answer.text.text_evidence import answer_text, supported
from rag.models.base import LLMResult, Usage

SHA = "e" * 40
Q = "How much did Acme Corp's effective tax rate change between FY2023 and FY2024?"
PAGE = """# Income taxes

Acme Corp's effective tax rate decreased in 2024, mainly due to a lower rate on foreign earnings.

Table: Income taxes — values in USD
|  | 2024 | 2023 |
|---|---|---|
| Income before income taxes | 1,200 | 1,000 |
| Provision for income taxes | 252 | 240 |
| Effective tax rate | 21.0 % | 24.0 % |

Our Board of Directors held eight meetings during the year.
"""


@pytest.fixture(autouse=True)
def _hash_embedder(monkeypatch, request):
    """Bag-of-words vectors instead of the embedder's weights (the llm test keeps the real one)."""
    if "llm" not in request.keywords:
        import rag.models as models
        from rag.models.base import HashEmbedder

        monkeypatch.setattr(models, "get_embedder", lambda cfg: HashEmbedder(dim=512))


class FakeLLM:
    """Answers the pick call with ``lines`` and the write call with ``answer``; records the messages."""
    model = "fake"

    def __init__(self, lines, answer):
        self.lines, self.answer, self.seen = lines, answer, []

    def complete(self, messages, schema=None, **params):
        self.seen.append(messages)
        body = {"lines": self.lines} if "lines" in schema.model_fields else {"final_answer": self.answer}
        return LLMResult(value=schema.model_validate(body), raw=json.dumps(body), model=self.model, usage=Usage())


def _cfg(make_cfg, **over):
    return make_cfg(overrides={"answer.text_from_evidence": True, **over})


def _n(lines, needle):
    return next(ln.n for ln in lines if needle in ln.text)


def test_candidate_lines_are_numbered_with_their_table_columns(make_cfg):
    cfg = _cfg(make_cfg)
    lines = candidate_lines(cfg, Q, [CtxPage(SHA, 7, PAGE, 0)], len, "Acme Corp")
    shown = format_lines(lines)
    assert "Effective tax rate | 21.0 % | 24.0 %" in shown and "columns: | 2024 | 2023 |" in shown
    assert "Board of Directors" not in shown  # no topic word: not a candidate
    assert [ln.n for ln in lines] == list(range(1, len(lines) + 1)) and shown.startswith("Page 7:")


def test_a_change_share_and_largest_line_are_computed_in_code(make_cfg):
    lines = candidate_lines(_cfg(make_cfg), Q, [CtxPage(SHA, 7, PAGE, 0)], len, "Acme Corp")
    rate = next(ln for ln in lines if ln.label == "Effective tax rate")
    assert em.computed_facts(Q, [rate]) == [
        "Effective tax rate: 24.0 % in 2023 -> 21.0 % in 2024, a change of -3.0 percentage points (page 7)"]
    q_share = "What share of Acme Corp's income before income taxes was the provision for income taxes in FY2024?"
    lines = candidate_lines(_cfg(make_cfg), q_share, [CtxPage(SHA, 7, PAGE, 0)], len, "Acme Corp")
    pre = next(ln for ln in lines if ln.label.startswith("Income before"))
    tax = next(ln for ln in lines if ln.label.startswith("Provision"))
    share = em.computed_facts(q_share, [pre, tax])
    assert share == ["Provision for income taxes is 21.0% of Income before income taxes in 2024 (252 / 1,200, page 7)"]
    most = em.computed_facts("Which line was the largest in FY2023?", [pre, tax])
    assert most and "Income before income taxes (1,000, page 7)" in most[0]
    assert em.computed_facts("Who is the chief executive of Acme Corp?", [pre, tax]) == []


def test_the_answer_rests_on_the_picked_lines_and_drops_made_up_figures(make_cfg):
    cfg = _cfg(make_cfg)
    page = CtxPage(SHA, 7, PAGE, 0)
    lines = candidate_lines(cfg, Q, [page], len, "Acme Corp")
    picked = [_n(lines, "Effective tax rate |"), _n(lines, "decreased in 2024")]
    llm = FakeLLM(picked, "The effective tax rate fell from 24.0% in 2023 to 21.0% in 2024 (-3.0 percentage points). "
                          "It saved about 37 million of taxes.")
    out = answer_text(llm, cfg, Q, [page], "USD", len, "Acme Corp")
    assert out["value"] == "The effective tax rate fell from 24.0% in 2023 to 21.0% in 2024 (-3.0 percentage points)."
    ev = out["interpretation"]["evidence"]
    assert ev["dropped_sentences"] == ["It saved about 37 million of taxes."]  # 37 is printed nowhere
    assert out["cited"] == [page] and len(ev["picked"]) == 2
    assert out["calls"][-1]["value"] == out["value"] and out["calls"][-1]["interpretation"] is out["interpretation"]
    write_user = llm.seen[1][-1]["content"]
    assert "COMPUTED:" in write_user and "-3.0 percentage points" in write_user
    assert "Board of Directors" not in write_user  # the writer sees the picked lines only


def test_no_picked_line_is_na_without_a_second_call(make_cfg):
    cfg = _cfg(make_cfg)
    llm = FakeLLM([], "anything")
    out = answer_text(llm, cfg, Q, [CtxPage(SHA, 7, PAGE, 0)], "USD", len, "Acme Corp")
    assert out["value"] == "N/A" and out["cited"] == [] and len(llm.seen) == 1
    assert "picked no line" in out["interpretation"]["na_reason"]


def test_an_answer_copying_the_prompt_example_is_na(make_cfg):
    cfg = _cfg(make_cfg)
    copy = ("The Marine Coatings segment declined, from 2,395 in 2023 to 2,310 in 2024 (-85, -3.5%). Lower volumes in "
            "hull paints drove the decrease, partly offset by price increases.")
    page = CtxPage(SHA, 7, PAGE + "\nMarine Coatings 2,395 2,310 -85 -3.5% 2023 2024\n", 0)
    lines = candidate_lines(cfg, Q, [page], len, "Acme Corp")
    out = answer_text(FakeLLM([1, 2], copy), cfg, Q, [page], "USD", len, "Acme Corp")
    assert out["value"] == "N/A" and "prompts/text/write.txt" in out["interpretation"]["na_reason"], lines


def test_supported_compares_digits_without_separators():
    assert supported("Sales were 1,824 in 2023.", ["Net sales | 1824 | 1700", "columns 2023 2022"])
    assert not supported("Sales were 1.8 billion.", ["Net sales | 1,824"])


def test_off_by_default_its_knobs_out_of_the_key_while_off(make_cfg):
    from rag.core import deps

    base = make_cfg()
    assert base.answer.text_from_evidence is False
    moved = make_cfg(overrides={"answer.text_evidence_lines": 12})
    assert deps.config_signature(base, "06_answer") == deps.config_signature(moved, "06_answer")
    assert deps.config_signature(base, "06_answer") != deps.config_signature(_cfg(make_cfg), "06_answer")


@pytest.mark.llm
def test_a_real_server_picks_the_rate_row(make_cfg):
    from rag.models import get_llm

    cfg = _cfg(make_cfg)
    page = CtxPage(SHA, 7, PAGE, 0)
    out = answer_text(get_llm(cfg), cfg, Q, [page], "USD", len, "Acme Corp")
    picked = [p["text"] for p in out["interpretation"]["evidence"]["picked"]]
    assert any("Effective tax rate" in t for t in picked), out


def test_only_the_lines_closest_in_meaning_are_shown(make_cfg):
    cfg = _cfg(make_cfg, **{"answer.text_evidence_lines": 2})
    lines = candidate_lines(cfg, Q, [CtxPage(SHA, 7, PAGE, 0)], len, "Acme Corp")
    assert len(lines) == 2 and {ln.kind for ln in lines} == {"sentence", "row"}  # one of each kind
    assert any(ln.label == "Effective tax rate" for ln in lines)  # the row sharing the question's words


def test_the_row_closest_in_meaning_joins_the_readers_pick(make_cfg):
    cfg = _cfg(make_cfg)
    page = CtxPage(SHA, 7, PAGE, 0)
    lines = candidate_lines(cfg, Q, [page], len, "Acme Corp")
    best = max((ln for ln in lines if ln.kind == "row"), key=lambda ln: ln.score)
    llm = FakeLLM([_n(lines, "decreased in 2024")], "The effective tax rate decreased in 2024.")
    out = answer_text(llm, cfg, Q, [page], "USD", len, "Acme Corp")
    ev = out["interpretation"]["evidence"]
    assert ev["added_row"] == best.n and best.text in [p["text"] for p in ev["picked"]]
    assert best.text in llm.seen[1][-1]["content"]  # the writer sees it


def test_no_year_is_read_from_a_period_spanning_several_columns():
    from rag.answer.text.evidence_lines import Line

    page = CtxPage(SHA, 25, "", 0)
    spanned = Line(page, "row", "Total Company", columns=["", "2024", "", "", "2023", ""], label="Total Company",
                   cells=["$ 34,229", "100.0 %", "$ 6,539", "$ 35,355", "100.0 %", "$ 7,369"])
    assert em.row_values(spanned) == {}  # "2024" sits over the share column of a three-column group
    plain = Line(page, "row", "Sales", columns=["2024", "2023"], label="Sales", cells=["$ 5,120", "$ 4,780"])
    assert {y: v.value for y, v in em.row_values(plain).items()} == {2024: 5120.0, 2023: 4780.0}
