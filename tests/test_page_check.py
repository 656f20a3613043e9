"""Pages read in the order of the reader's P(the page answers) (rag.answer.common.page_check, answer.page_choice)."""
from __future__ import annotations

import json
import math

from rag.answer.common.context import CtxPage
from rag.answer.common.page_check import choose_pages
from rag.answer.fuse import answer_pages
from rag.models.base import LLMResult, Usage

SHA = "d" * 40
Q = "Which segment dragged down Acme Corp's growth in 2023?"
# Retrieval ranks the page that answers last of four.
PAGES = [CtxPage(SHA, n, f"marker-{tag} " + body, rank)
         for rank, (n, tag, body) in enumerate([(4, "a", "Our strategy is growth."), (9, "b", "Risk factors."),
                                                (12, "c", "Segment overview."),
                                                (30, "d", "Home sales fell 9.6%; Outdoor grew 5.8%.")])]
P_BY_TAG = {"a": 0.2, "b": 0.05, "c": 0.4, "d": 0.9}


class PageFakeLLM:
    """P(true) of a page check by the page's marker; a text answer quoting the first page it is shown."""
    model = "fake"

    def __init__(self):
        self.checks, self.answers = [], []

    def complete(self, messages, schema=None, **params):
        user = messages[-1]["content"]
        if user.startswith("PAGE:\n"):
            tag = user.split("marker-", 1)[1][0]
            self.checks.append(tag)
            p = P_BY_TAG[tag]
            lps = [['{"final_answer":', [['{"final_answer":', 0.0]]],
                   [" true", [[" true", math.log(p)], [" false", math.log(1 - p)]]], ["}", [["}", 0.0]]]]
            return LLMResult(value=schema.model_validate({"final_answer": p >= 0.5}), raw="", model=self.model,
                             usage=Usage(prompt_tokens=100, requests=1), logprobs=lps)
        first = user.split("marker-", 1)[1][0]
        self.answers.append(first)
        body = {"step_by_step_analysis": "Page 1.", "reasoning_summary": "Page 1.", "relevant_pages": [1],
                "final_answer": f"The answer from page marker-{first}."}
        return LLMResult(value=schema.model_validate(body), raw=json.dumps(body), model=self.model,
                         usage=Usage(prompt_tokens=500, completion_tokens=30, requests=1))


def test_the_pages_are_sorted_by_the_readers_p_and_the_rest_keep_their_rank(make_cfg):
    cfg = make_cfg(overrides={"answer.page_choice": ["text"]})
    out, call = choose_pages(PageFakeLLM(), cfg, Q, PAGES[:3] + PAGES[3:], len)
    assert [p.page for p in out] == [30, 12, 4, 9]
    assert [(x["page"], x["rank"]) for x in call["p_pages"]] == [(4, 0), (9, 1), (12, 2), (30, 3)]
    assert [x["p_true"] for x in call["p_pages"]] == [0.2, 0.05, 0.4, 0.9]
    assert call["kind"] == "page_choice" and call["usage"]["requests"] == 4 and call["error"] is None
    few = make_cfg(overrides={"answer.page_choice": ["text"], "answer.page_choice_pages": 2})
    out, call = choose_pages(PageFakeLLM(), few, Q, PAGES, len)
    assert [p.page for p in out] == [4, 9, 12, 30] and len(call["p_pages"]) == 2  # only the first two judged


def test_an_open_answer_reads_first_the_page_the_reader_judges_best(make_cfg):
    # Without page_choice the reader sees the pages in rank order and answers from the first part.
    plain = make_cfg(overrides={"answer.max_pages": 1})
    llm = PageFakeLLM()
    res = answer_pages(llm, plain, "text", Q, PAGES, "USD", len, "Acme Corp")
    assert llm.checks == [] and llm.answers == ["a"] and "marker-a" in res["value"]
    chosen = make_cfg(overrides={"answer.max_pages": 1, "answer.page_choice": ["text"]})
    llm = PageFakeLLM()
    res = answer_pages(llm, chosen, "text", Q, PAGES, "USD", len, "Acme Corp")
    assert sorted(llm.checks) == ["a", "b", "c", "d"] and llm.answers == ["d"] and "marker-d" in res["value"]
    assert res["calls"][0]["kind"] == "page_choice" and [p.page for p in res["cited"]] == [30]
    assert res["answering_part"][0].page == 30


def test_only_the_listed_kinds_are_checked_and_the_setting_enters_the_keys(make_cfg):
    from rag.answer import question_key
    from rag.core.dataset import Question

    cfg = make_cfg(overrides={"answer.page_choice": ["text"]})
    base = make_cfg()
    text_q = Question(qid="q1", text=Q, kind="text")
    assert question_key(cfg, text_q, "r") != question_key(base, text_q, "r")
    llm = PageFakeLLM()
    answer_pages(llm, cfg, "name", "Who is the CEO of Acme Corp?", PAGES[:1], "USD", len, "Acme Corp")
    assert llm.checks == [] and llm.answers == ["a"]  # a name question reads in rank order, unchecked
