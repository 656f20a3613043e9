"""The open-text path of stage 06: a ``text`` answer's value, and (``answer.text_from_evidence``) the answer built
from evidence lines picked by the model, with changes and shares computed in code.

Entry points: ``answer_text(llm, cfg, question, pages, report_currency, counter, company)`` (in
:mod:`.text_evidence`; what fuse calls) -> the :func:`rag.answer.fuse.answer_pages` result shape;
``text_version(prompts_dir)``: its pick / write prompts' version (stage 06's key); ``text_value(v)`` (in
:mod:`.text_kind`): the model's free text cut to at most ``MAX_SENTENCES`` sentences (what interpret applies);
``grounded(text, sources)`` (in :mod:`.grounding`): its sentences split into those whose figures the pages print
and the others (interpret drops the others with ``answer.text_figures_on_pages``).

Modules: :mod:`.grounding` (figures checked against the pages), :mod:`.evidence_lines` (the numbered candidate
lines), :mod:`.evidence_math` (facts computed from the picked rows), :mod:`.text_evidence` (pick, compute, write),
:mod:`.text_kind`, :mod:`.ranking` (``answer_ranking``: which table row ranks first, in code, with
``answer.text_ranking``; the row groups it reads: :mod:`.row_groups`), :mod:`.registered` (``answer_registered``:
the securities a cover's 12(b) table registers, with ``answer.text_registered``), :mod:`.change`
(``answer_change``: how much a figure changed between two years, in code, with ``answer.text_change``),
:mod:`.drivers` (``answer_drivers``: what drove a figure's change, the change and the filing's cause sentences,
with ``answer.text_drivers``), :mod:`.events` (``answer_events``: which events of a kind the years asked saw,
quoted from the filing, with ``answer.text_events``; both quote through :mod:`.quotes`). Imports :mod:`rag.answer.common`, :mod:`rag.answer.computed` and
:mod:`rag.answer.numbers` of the stage.
"""
from .change import answer_change
from .drivers import answer_drivers
from .events import answer_events
from .grounding import grounded
from .ranking import answer_ranking
from .registered import answer_registered
from .text_evidence import answer_text, text_version
from .text_kind import text_value

__all__ = ["answer_change", "answer_drivers", "answer_events", "answer_ranking", "answer_registered", "answer_text",
           "grounded", "text_value", "text_version"]
