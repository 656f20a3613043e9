"""Names answers must be printed next to words of the asked event (rag.answer.names.event_check)."""
from __future__ import annotations

import pytest

from rag.answer.common.context import CtxPage
from rag.answer.names.event_check import EventsError, check_names, event_topics, name_has_event
from rag.answer.interpret import part_value

SHA = "a" * 40
PRODUCTS_Q = "What are the names of new products launched by Acme Corp as mentioned in the annual report?"
EXEC_Q = "What are the names of all new executives that took on new leadership positions in Acme Corp?"
PAGE_TABLE = ("| Product | Indication | Status |\n|---|---|---|\n| Zentra | Psoriasis | Phase 2 |\n"
              "| Vivox | Acne | Preclinical |")
PAGE_LAUNCH = "In March we launched Zentra in the United States, our first commercial product."
OFFICERS = "Executive officers: Jane Roe, Chief Financial Officer since 2015; John Doe, Chief Executive Officer."
APPOINTED = "On 1 July 2023 Mary Major was appointed Chief Operating Officer, succeeding Tom Minor."


def _cfg(make_cfg, on=True, **kw):
    return make_cfg(overrides={"answer.require_event_near_name": on, **kw})


def test_topics_follow_the_question(make_cfg):
    cfg = _cfg(make_cfg)
    assert [t.name for t in event_topics(cfg, PRODUCTS_Q, "Acme Corp")] == ["product_launches"]
    assert [t.name for t in event_topics(cfg, EXEC_Q, "Acme Corp")] == ["leadership_changes"]
    assert event_topics(cfg, "What are the names of the auditors of Acme Corp?", "Acme Corp") == []


def test_a_name_counts_only_next_to_an_event_word(make_cfg):
    cfg = _cfg(make_cfg)
    topics = event_topics(cfg, PRODUCTS_Q)
    assert not name_has_event("Zentra", [PAGE_TABLE], topics, 30)
    assert name_has_event("zentra", [PAGE_TABLE, PAGE_LAUNCH], topics, 30)  # case-folded, any page
    assert not name_has_event("Zentra", ["launched " + "word " * 40 + "Zentra"], topics, 30)  # too far
    assert not name_has_event("Zent", [PAGE_LAUNCH], topics, 30)  # a phrase, not part of a word
    leaders = event_topics(cfg, EXEC_Q)
    assert check_names(cfg, EXEC_Q, ["Mary Major", "Jane Roe", "Nobody"], [OFFICERS + "\n" + "x " * 40, APPOINTED],
                       "Acme Corp") == (["Mary Major"], ["Jane Roe", "Nobody"])
    assert name_has_event("Chief Operating Officer", [APPOINTED], leaders, 30)


def test_unchecked_questions_keep_every_name(make_cfg):
    cfg = _cfg(make_cfg)
    q = "What are the names of the auditors of Acme Corp?"
    assert check_names(cfg, q, ["KPMG"], ["no event here"]) == (["KPMG"], [])


def test_part_value_drops_names_without_the_event_and_says_why(make_cfg):
    part = [CtxPage(sha1=SHA, page=3, rank=0, text=PAGE_TABLE), CtxPage(sha1=SHA, page=4, rank=1, text=PAGE_LAUNCH)]
    call = {"parsed": {"final_answer": ["Zentra", "Vivox"]}}
    on, off = _cfg(make_cfg), _cfg(make_cfg, on=False)
    assert part_value(off, "names", call, [], part, PRODUCTS_Q, None, "Acme Corp") == (["Zentra", "Vivox"], {})
    v, info = part_value(on, "names", call, [], part, PRODUCTS_Q, None, "Acme Corp")
    assert v == ["Zentra"] and info == {"event_dropped": ["Vivox"]}
    v, info = part_value(on, "names", {"parsed": {"final_answer": ["Vivox"]}}, [], part, PRODUCTS_Q, None, "Acme Corp")
    assert v == "N/A" and info["na_reason"].startswith("no context page states")
    m_and_a = "What was the latest merger or acquisition that Acme Corp was involved in? Return name of the entity or 'N/A'"
    pg = [CtxPage(sha1=SHA, page=1, rank=0, text="Subsidiaries: Beta Ltd. We completed the acquisition of Gamma Inc.")]
    assert part_value(on, "name", {"parsed": {"final_answer": "Gamma Inc"}}, [], pg, m_and_a, None, "Acme Corp")[0] == "Gamma Inc"
    assert part_value(on, "name", {"parsed": {"final_answer": "Delta"}}, [], pg, m_and_a, None, "Acme Corp")[0] == "N/A"


def test_a_broken_events_file_is_named(make_cfg, tmp_path):
    bad = tmp_path / "events.toml"
    bad.write_text('[[topic]]\nname = "x"\nwhen = ["("]\nevents = ["a"]\n')
    with pytest.raises(EventsError, match="events.toml: topic 1 .*bad regular expression"):
        event_topics(_cfg(make_cfg, **{"answer.events_file": str(bad)}), PRODUCTS_Q)
    with pytest.raises(EventsError, match="not found"):
        event_topics(_cfg(make_cfg, **{"answer.events_file": str(tmp_path / "none.toml")}), PRODUCTS_Q)


BUYBACK_Q = "Did Acme Corp announce a share buyback plan in the annual report? If there is no mention, return False."


def test_boolean_true_needs_a_cited_page_with_the_event(make_cfg):
    on = make_cfg(overrides={"answer.require_event_for_true": True})
    off = make_cfg(overrides={"answer.require_event_for_true": False})
    assert [t.name for t in event_topics(on, BUYBACK_Q, "Acme Corp")] == ["share_buyback"]
    revenue = CtxPage(sha1=SHA, page=2, rank=0, text="Revenue rose 12% to $40 million on higher volumes.")
    buyback = CtxPage(sha1=SHA, page=5, rank=1, text="The Board approved an on-market share buy-back of up to 5%.")
    yes = {"parsed": {"final_answer": True}}
    assert part_value(off, "boolean", yes, [revenue], [revenue, buyback], BUYBACK_Q, None, "Acme Corp") == (True, {})
    v, info = part_value(on, "boolean", yes, [revenue], [revenue, buyback], BUYBACK_Q, None, "Acme Corp")
    assert v is False and info["event_missing"] and "event" in info["na_reason"]  # cited page says nothing of it
    assert part_value(on, "boolean", yes, [buyback], [revenue, buyback], BUYBACK_Q, None, "Acme Corp") == (True, {})
    assert part_value(on, "boolean", yes, [], [revenue, buyback], BUYBACK_Q, None, "Acme Corp") == (True, {})  # none cited: the part
    no = {"parsed": {"final_answer": False}}
    assert part_value(on, "boolean", no, [], [buyback], BUYBACK_Q, None, "Acme Corp") == (False, {})  # false stays false
    other = "Did Acme Corp report any cyber incidents in the annual report? If there is no mention, return False."
    assert part_value(on, "boolean", yes, [revenue], [revenue], other, None, "Acme Corp") == (True, {})  # no topic: unchecked


def test_every_erc_boolean_template_has_an_event_topic(make_cfg):
    """The ten boolean templates of ERC round 2 (rag.valgen) each match some topic, so none goes unchecked."""
    from rag.valgen import FAMILIES

    cfg = make_cfg(overrides={"answer.require_event_for_true": True})
    templates = [v for _w, _flag, _fam, variants in FAMILIES["boolean"] for v in variants]
    assert len(templates) == 10
    for t in templates:
        assert event_topics(cfg, t.format(company="Acme Corp"), "Acme Corp"), t
