"""The computed-figures path of stage 06 (``answer.computed_figures``): a ratio, margin, growth or average a
number question asks for, computed in code from printed line items.

Entry point: ``answer_computed(cfg, question, pages, report_currency, company)`` (in :mod:`.computed`) -> None
when no formula is recognised, else the :func:`rag.answer.fuse.answer_pages` result shape (value N/A with
``interpretation["computed"]["fallback"]`` when an operand is missing). ``lexicon_version(cfg)``: the formula
lexicon's hash stage 06's key holds; ``computed_reason(computed, value)``: the formula and its operands in words.

Modules: :mod:`.formulas` (the lexicon and what a question asks), :mod:`.computed` (operands found with the
number path's candidates, the expression evaluated). Imports :mod:`rag.answer.common` and
:mod:`rag.answer.numbers` of the stage.
"""
from .computed import answer_computed, computed_reason
from .formulas import lexicon_version

__all__ = ["answer_computed", "computed_reason", "lexicon_version"]
