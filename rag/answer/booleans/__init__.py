"""The yes/no path of stage 06: P(true) from the model's token log-probabilities, and yes/no questions settled by
computed figures.

Entry points: ``answer_computed_bool(cfg, question, pages, report_currency, company)`` (in
:mod:`.computed_bool`; what fuse calls with ``answer.computed_figures``) -> None when the question asks no
figure's sign or change, else the :func:`rag.answer.fuse.answer_pages` result shape; ``p_true_call(llm, cfg,
question, context)`` (in :mod:`.bool_logprob`): one page's P(true) call; ``decide`` / ``p_decides``: whether
P(true) or the reasoning decides a page's yes/no (what :mod:`rag.answer.interpret` applies); ``claim_call`` (in
:mod:`.claim_check`): a page's "true" checked against the reader's own note on it (``answer.boolean_claim_check``);
``calibration_call`` (in :mod:`.calibration`): a page's P(true) against the other yes/no templates' on the same page
(``answer.boolean_calibration``).

Imports :mod:`rag.answer.common`, :mod:`rag.answer.numbers` and :mod:`rag.answer.computed` of the stage.
"""
from .bool_logprob import decide, p_decides, p_true_call
from .calibration import calibration_call, controls_version
from .claim_check import claim_call, claim_version
from .computed_bool import answer_computed_bool

__all__ = ["answer_computed_bool", "calibration_call", "claim_call", "claim_version", "controls_version", "decide",
           "p_decides", "p_true_call"]
