"""The number path of stage 06: candidate figures from the tables and sentences of the retrieved pages, then
one picked (by code, by the model, or by meaning).

Entry point: ``answer_from_tables(llm, cfg, question, pages, report_currency, counter, company)`` (in
:mod:`.figure_pick`) -> the :func:`rag.answer.fuse.answer_pages` result shape; ``interpretation["no_candidate"]``
when no candidate exists (the caller may then read the pages). ``pick_version`` / ``choose_version``: the
prompt versions stage 06's key holds while the pick / the choice by meaning is on.

Modules: :mod:`.figures` (table candidates: :func:`~.figures.build_candidates`), :mod:`.grid_cells`,
:mod:`.grid_context`, :mod:`.labels` (which row names the metric), :mod:`.figure_check` (does a figure's line
name the metric), :mod:`.prose` with :mod:`.prose_period`, :mod:`.prose_figures`, :mod:`.prose_kinds`,
:mod:`.prose_counts` (figures printed in sentences), :mod:`.wholes` (the whole over its parts), :mod:`.figure_pick`
(the pick), :mod:`.metric_choice` (numbers matched by meaning). Imports only :mod:`rag.answer.common` of the stage.
"""
from .figure_pick import answer_from_tables, pick_version
from .metric_choice import choose_version

__all__ = ["answer_from_tables", "choose_version", "pick_version"]
