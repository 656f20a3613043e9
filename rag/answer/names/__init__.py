"""The name checks of stage 06: a name or names answer must be printed on the pages it comes from, next to a word of
the event the question asks about, and a short name becomes the full one the pages give.

Entry points (what :mod:`rag.answer.interpret` and the stage apply to the model's answer):
- ``check_names(kind, value, texts, examples)`` / ``example_answers(prompts_dir)`` (:mod:`.name_check`): entries
  printed on no page, or copied from a prompt's example, dropped; ``full_name(name, texts)``: "IAA" -> "IAA, Inc.".
- ``names_near_event(cfg, question, names, texts, company) -> (kept, dropped)`` (:func:`.event_check.check_names`),
  ``pages_state_event(cfg, question, texts, company)`` (a yes/no's true needs a word of the event) and
  ``events_version(cfg)`` (the events file's hash, in stage 06's key while a check is on).

Imports only :mod:`rag.answer.common` of the stage.
"""
from .event_check import check_names as names_near_event
from .event_check import events_version, pages_state_event
from .name_check import check_names, example_answers, full_name

__all__ = ["check_names", "events_version", "example_answers", "full_name", "names_near_event", "pages_state_event"]
