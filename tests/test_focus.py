"""Focused reading (rag.answer.common.focus): pages cut to the lines on the question's topic."""
from __future__ import annotations

from rag.answer.common.focus import focus_text, topic_terms_for
from rag.core.config import load_config

COUNT = lambda t: len(t.split())  # noqa: E731  one token per word

FILLER = "\n".join(f"Note {i}: the carrying amount of plant and equipment was reviewed for impairment at the end of the year." for i in range(40))
PAGE = (FILLER + "\n# F5. Business combinations\n"
        "On 30 November 2021, the Group acquired 100% of Fowlers Pty. Ltd. for $25.9 million. Fowlers lays "
        "asphalt in Victoria and was bought from its founders after a long search for a partner in the region. "
        "The price was paid in cash, from the Group's existing facilities, and no new shares were issued to "
        "the sellers, who remain with the business as managers under three-year service contracts signed on completion of the purchase.\n" + FILLER)


def test_topic_terms_are_the_question_words_and_its_lexicon_topics():
    cfg = load_config("test")
    terms = topic_terms_for(cfg, "Did Acme Corp mention any mergers or acquisitions in the annual report? "
                                 "If there is no mention, return False.", "Acme Corp")
    assert terms[:2] == ["merge", "acqui"]  # question words, cut to their stems; no company, no template words
    assert "business combination" in terms  # the mergers_acquisitions lexicon topic
    assert not {"acme", "corp", "annua", "menti", "retur", "false"} & set(terms)


def test_focus_keeps_the_matching_lines_in_page_order_with_the_heading_above():
    out = focus_text(PAGE, ["acqui", "business combination"], 40, COUNT)
    lines = out.splitlines()
    assert lines[0] == "..." and lines[-1] == "..."
    assert "# F5. Business combinations" in lines  # matches the phrase
    # the long line is split into sentences; "Pty. Ltd." does not end one
    assert "On 30 November 2021, the Group acquired 100% of Fowlers Pty. Ltd. for $25.9 million." in lines
    assert COUNT(out) <= 40 + 4 and "impairment" not in out


def test_focus_returns_short_pages_whole_and_unmatched_pages_as_their_head():
    assert focus_text("Revenue rose 4%.", ["acqui"], 60, COUNT) == "Revenue rose 4%."
    head = focus_text(FILLER, ["acqui"], 30, COUNT)
    assert head.startswith("Note 0:") and COUNT(head) <= 30
