"""The answer section (stage 06) of :class:`rag.core.config.RunConfig`: how pages are read and a figure, name or
yes/no is decided. Each field's ``description`` says its unit and what it changes; ``internal(...)`` marks the
named constants nothing varies (:mod:`rag.core.config_base`). The measurements that chose the defaults are in
RESULTS.md, "Config defaults and the measurements behind them" (fields marked "measured: RESULTS.md").
The other sections are in :mod:`rag.core.config_sections`.
"""
from __future__ import annotations

from typing import Literal

from pydantic import Field, NonNegativeInt, PositiveInt

from .config_base import _Frozen, internal

Kind = Literal["number", "name", "names", "boolean"]


class AnswerConfig(_Frozen):
    max_context_tokens: int = Field(
        2600, ge=256, description="Context budget of one answering call, in tokens (local model: small).")
    max_pages: int = Field(3, ge=1, description="Pages given to the answering prompt (top of the reranked list).")
    fill_references: int = Field(
        1, ge=0, description="Top retrieved pages that fill an empty relevant_pages (0: leave it empty).")
    max_references: int = Field(3, ge=0, description="References kept per answer, at most.")
    team_email: str = Field("team@example.com", description="The submission's team e-mail.")
    submission_name: str = Field("enterprise-rag", description="The submission's name.")
    prompts_dir: str = internal(
        "prompts", description="Folder of the prompt text blocks (relative to the project root).")
    # Each part holds at most max_context_tokens.
    early_stop: bool = internal(
        True, description="Long context: answer the parts in page-rank order and stop at the first with an answer "
                          "(False: answer every part).")
    # {"boolean": 1} asks page by page, true when any page says true (with early_stop, the first true ends it).
    pages_per_call: dict[Kind, NonNegativeInt] = Field(
        default_factory=lambda: {"boolean": 1},
        description="Pages per answering call by answer kind (0 or absent: as many as max_context_tokens holds; "
                    "measured: RESULTS.md).")
    max_pages_by_kind: dict[Literal["number", "name", "names", "boolean", "text"], PositiveInt] = Field(
        default_factory=dict, description="Pages read by answer kind (absent: max_pages).")
    # Question words + search-lexicon terms (rag.answer.common.focus).
    focus_tokens: dict[Kind, NonNegativeInt] = Field(
        default_factory=dict, description="Focused reading by answer kind, in tokens per page: each page cut to "
                                          "its lines naming the question's topic (absent or 0: whole pages).")
    unit_lookback_lines: int = internal(
        3, ge=0, description="Lines above a table searched for its unit line (\"values in thousands of USD\").")
    sanity_max_power: int = internal(
        3, ge=1, description="Largest |k| tried when matching answer == printed value * 1000**k.")
    comparative_pick: Literal["code", "prompt"] = Field(
        "code", description="Comparative questions: max/min picked in code when the question says which "
                            "(\"highest\"), else the comparison prompt; \"prompt\": always the prompt.")
    require_printed_in_context: bool = Field(
        True, description="A number answer whose printed figure appears on no context page is N/A.")
    # The line is read with its table's header row and up to metric_title_lines title lines above the table
    # (rag.answer.numbers.figure_check). Titles are off by default: "Net income" in a cash-flow statement titled "Cash
    # flows" is not the cash flow.
    require_metric_on_line: bool = Field(
        True, description="N/A when no line printing the figure shares metric_min_share of the metric's word "
                          "stems (a figure from another row is not the answer; measured: RESULTS.md).")
    metric_title_lines: int = internal(0, ge=0, description="Table title lines read with a figure's line.")
    metric_min_share: float = internal(
        0.5, ge=0, le=1, description="Share of the metric's word stems a figure's line must print.")
    metric_window_words: tuple[int, int] = internal(
        (10, 6), description="Words read before / after a figure on a text (non-table) line.")
    # Off: a "false" usually has no gold pages, and every cited page outside the gold pools costs reference score.
    refs_for_false: bool = Field(False, description="Keep the model's citations for a boolean \"false\" answer.")
    # Row label naming the metric, latest-period column, unit from the table; the model picks one or N/A from
    # that short list; the figure is converted in code. No candidate: see figure_fallback.
    table_candidates: bool = Field(
        True, description="Number questions: candidate figures from the tables of the top pages "
                          "(rag.answer.numbers.figures; measured: RESULTS.md).")
    # A figure is checked in code, so reading more pages costs milliseconds.
    figure_pages: int = internal(
        10, ge=0, description="Pages searched for candidates (0 = max_pages; measured: RESULTS.md).")
    figure_max_candidates: int = internal(6, ge=1, description="Longest candidate list shown to the model.")
    figure_min_label_score: float = internal(
        0.5, ge=0, le=1, description="Share of the metric's words a row label needs to give a candidate.")
    figure_na_fallback: bool = Field(
        False, description="The model picked none of the candidates: read the pages as without them.")
    figure_fallback: Literal["read", "na"] = Field(
        "na", description="No candidate at all: read the pages as without table candidates, or answer N/A at "
                          "once, no model call (measured: RESULTS.md).")
    # "auto": code when one clearly fits (the only candidate, or the best leads the next by figure_code_margin),
    # else the model among the best figure_pick_list candidates or none.
    figure_pick: Literal["model", "code", "auto"] = Field(
        "code", description="Who picks among the candidates: the model (one short call), code (the best-scoring, "
                            "no call) or auto (measured: RESULTS.md).")
    figure_code_margin: float = internal(
        0.1, ge=0, description="Score lead that makes the best candidate a clear fit (figure_pick auto).")
    figure_pick_list: int = internal(
        5, ge=1, description="Candidates shown to the model when it picks (figure_pick auto).")
    # Scores: the share of the metric's words on the row / around the figure, less penalties
    # (rag.answer.numbers.figures, rag.answer.numbers.prose).
    figure_min_score: float | None = Field(
        0.75, description="The N/A threshold: candidates scoring below it are dropped (None: no threshold; "
                         "measured: RESULTS.md).")
    # When no row or sentence names the metric in the question's words, every figure of the top pages that passes
    # the unit / period / currency rules is ranked by the embedder's cosine to the metric; the reader chooses one
    # of the metric_choice_list closest (or none) in one short call, and the line stands when its probability
    # (log-probabilities) is at least metric_choice_min_p.
    metric_choice: bool = Field(
        False, description="Numbers matched by meaning (rag.answer.numbers.metric_choice; measured: RESULTS.md).")
    # "choice": one call showing the lines numbered, P(line) from the first digit; "lines": one yes/no call per
    # line, P(true) per line (rag.answer.numbers.line_check); the best line stands at metric_choice_min_p either way.
    metric_choice_by: Literal["choice", "lines"] = Field(
        "choice", description="How the reader matches lines by meaning: choosing one of them, or judging each "
                              "alone (measured: RESULTS.md).")
    metric_choice_list: int = internal(
        8, ge=1, le=9, description="Lines shown to the reader (one digit each: the probability is read there).")
    metric_choice_min_p: float = Field(
        0.3, ge=0, le=1, description="Probability at which the reader's chosen line stands (measured: "
                                     "RESULTS.md).")
    # Numbers whose surrounding words (prose_window_words before / after, in the sentence) hold prose_min_share of
    # the metric's word stems or a multi-word search-lexicon term of its topic; unit, scale, currency and period
    # read from the sentence; the same checks as table candidates. They join the table candidates' pick.
    prose_candidates: bool = Field(
        True, description="Number questions: candidates also from figures printed in sentences "
                          "(rag.answer.numbers.prose; measured: RESULTS.md).")
    prose_pages: int = internal(0, ge=0, description="Pages searched for sentences (0 = as for tables).")
    prose_window_words: tuple[NonNegativeInt, NonNegativeInt] = internal(
        (10, 6), description="Words read before / after a figure in a sentence.")
    prose_min_share: float = internal(
        0.5, ge=0, le=1, description="Share of the metric's word stems a figure's words must hold.")
    prose_max_candidates: int = internal(4, ge=1, description="Prose candidates kept per question, at most.")
    # Leadership changes, product launches, acquisitions (rag.answer.names.event_check; words per topic in events_file);
    # none kept -> N/A.
    require_event_near_name: bool = Field(
        True, description="Names / name questions about an event: keep a name only where a page prints it near a "
                          "word stating the event (measured: RESULTS.md).")
    # The one a definition gives ('Surgical Innovation Associates, Inc. ("SIA")'), else the name with its legal
    # form ("IAA, Inc.").
    full_names: bool = internal(
        True, description="A name answer named short (\"IAA\") becomes the full name the retrieved pages give it "
                          "(measured: RESULTS.md).")
    event_window_words: int = internal(
        30, ge=1, description="Whitespace-separated words on each side of a name searched for its event's word.")
    # Citing none: the pages it read; no such page -> false. A question matching no topic is not checked.
    require_event_for_true: bool = Field(
        False, description="Boolean questions about an event: a \"true\" stands only when a page the reader cited "
                           "prints a word of that event.")
    events_file: str = Field(
        "prompts/checks/events.toml", description="Event words per topic (relative to the project root).")
    # Booleans from token log-probabilities (rag.answer.booleans.bool_logprob): after each page's answering call, a
    # second call with the same messages whose grammar is {"final_answer": boolean} reads P(true) at the value token
    # (rag.models.logprobs). A local server reuses the prompt it just evaluated, so it costs a few tokens.
    boolean_p_true: bool = Field(
        True, description="Record P(true) from token log-probabilities in every boolean call (measured: "
                          "RESULTS.md).")
    # "cot": the chain-of-thought answer decides; "logprob": true when P(true) >= boolean_min_p_true; "both": a
    # page says true only when its reasoning says true and its P(true) >= boolean_min_p_true (two readings of the
    # same page agreeing). A decision from one logit difference of the prompt moves with the CPU build only near
    # the threshold; a generated chain of reasoning can take another path on another build. Without P(true) (a
    # preset with boolean_p_true off, a backend without log-probabilities) "both" is "cot". "logprob" with the
    # calibration below: chosen on the catalogue's tuning half for the worse of two llama.cpp builds
    # (benchmarks/bool_builds.py); presets without P(true) keep "both".
    boolean_decision: Literal["cot", "logprob", "both"] = Field(
        "logprob", description="What decides a boolean: the chain-of-thought answer, P(true), or both agreeing "
                            "(measured: RESULTS.md).")
    boolean_min_p_true: float = Field(
        0.25, ge=0, le=1, description="P(true) at which a boolean is true (boolean_decision logprob or both; "
                                     "measured: RESULTS.md).")
    # False: a page costs one prompt evaluation and a few tokens (no reasoning in the debug record: P(true) per
    # page instead; a true cites the page it was read on). True: each page's reasoning is recorded again
    # (widgets, `rag ask`'s "Why:").
    boolean_reasoning: bool = Field(
        False, description="With boolean_decision logprob: also make the chain-of-thought call (measured: "
                           "RESULTS.md).")
    # A page's "true" (after the decision above) is checked against the reader's own note on the page: the note
    # and the question put back to it as a yes/no, P(true) from the log-probabilities (rag.answer.booleans.claim_check).
    boolean_claim_check: bool = Field(
        False, description="A yes/no page's true stands only when the reader judges its own note on the page to say "
                           "the asked event took place (measured: RESULTS.md).")
    boolean_claim_min_p: float = Field(
        0.1, ge=0, le=1, description="P(true) of the note check at which a page's true stands (boolean_claim_check; "
                                     "chosen on the tuning half: RESULTS.md).")
    # A page's "true" set against the same page's P(true) for the ERC generator's other yes/no templates, the same
    # company filled in (rag.answer.booleans.calibration, prompts/checks/controls.txt); questions of no template
    # are not calibrated.
    boolean_calibration: bool = Field(
        True, description="A yes/no page's true stands only when its P(true) exceeds the mean P(true) of the other "
                           "yes/no templates on the same page by boolean_calibration_min (measured: RESULTS.md).")
    boolean_calibration_min: float = Field(
        0.12, ge=-1, le=1, description="Own P(true) minus the controls' mean at which a page's true stands "
                                       "(boolean_calibration; chosen on the tuning half: RESULTS.md).")
    boolean_top_logprobs: int = internal(
        10, ge=2, le=20, description="Alternatives per token asked of the server.")
    boolean_decision_max_tokens: int = internal(
        24, ge=8, description="Token cap of the decision call ('{\"final_answer\": true}' is ~7 tokens).")
    # "days payable outstanding", "3 year average EBITDA margin", "2 year revenue CAGR": operands in each one's
    # year column of the top computed_pages pages; an operand missing -> the usual path. Rounded as the question
    # asks, else to computed_decimals.
    currency_source: Literal["subset", "text"] = Field(
        "subset", description="The report's currency for figures printing none: subset.csv's, or the one the "
                              "report's text states (rag.answer.common.report_currency; measured: RESULTS.md).")
    computed_figures: bool = Field(
        False, description="Ratios, margins, growth and averages reports do not print, computed in code from "
                           "operand candidates (rag.answer.computed.computed; measured: RESULTS.md).")
    computed_pages: int = internal(10, ge=1, description="Pages searched for a computed figure's operands.")
    computed_decimals: int = Field(
        4, ge=0, description="Decimals of a computed figure when the question asks for none.")
    formulas_file: str = internal(
        "prompts/figures/formulas.toml", description="Formulas and operands (relative to the project root).")
    # A free open answer's sentence stating a figure that no page of its call prints (nor a rescale of one, nor a
    # difference or change of two of the sentence's own) is dropped; none left -> N/A (rag.answer.text.grounding).
    text_figures_on_pages: bool = Field(
        True, description="Open (text) answers keep only sentences whose figures their pages print (measured: "
                          "RESULTS.md).")
    # Each of the first page_choice_pages retrieved pages is put to the reader alone as a yes/no ("does this page
    # state what an answer needs?"), P(true) from the log-probabilities; the pages are read in that order.
    page_choice: tuple[Literal["number", "name", "names", "boolean", "text", "comparative"], ...] = Field(
        (), description="Answer kinds whose pages are read in the order of the reader's P(the page answers) "
                        "(rag.answer.common.page_check; measured: RESULTS.md).")
    page_choice_pages: int = internal(8, ge=1, description="Retrieved pages the reader judges (page_choice).")
    # The reader first picks the numbered sentences / table rows (with their table's period columns) of the top
    # text_evidence_pages pages that answer, then writes at most three sentences from those lines alone and the
    # changes, shares and per-share values computed from them in code; a sentence stating a figure printed in none
    # of them is dropped. The lines naming the topic are ranked by the embedder's cosine to the question.
    text_from_evidence: bool = Field(
        False, description="Open (text) answers built from their evidence (rag.answer.text.text_evidence; off: the "
                           "free answer over whole pages; measured: RESULTS.md).")
    # A text question asking which row ranks first (the largest liability, the best performing category) is
    # answered in code: the row group printing most of the question's words (ties: closest in meaning) is ranked
    # by a figure or its change.
    text_ranking: bool = Field(
        True, description="Open (text) questions asking which row ranks first answered from the table closest in "
                           "meaning, ranked in code (rag.answer.text.ranking; measured: RESULTS.md).")
    # "Which debt securities are registered to trade on a national securities exchange?": the cover's 12(b) table.
    text_registered: bool = Field(
        True, description="Open (text) questions asking which securities are registered on an exchange answered "
                           "from the cover's Section 12(b) table, in code (rag.answer.text.registered; measured: "
                           "RESULTS.md).")
    # "How much has the effective tax rate changed between FY2021 and FY2022?": both years' figures as the number
    # path reads them, the change computed.
    text_change: bool = Field(
        True, description="Open (text) questions asking how much a figure changed between two years answered from "
                           "both years' table figures, in code (rag.answer.text.change; measured: RESULTS.md).")
    # "What drove operating margin change as of FY2022?": the change computed, the filing's own cause sentences quoted.
    text_drivers: bool = Field(
        True, description="Open (text) questions asking what drove a figure's change answered with both years' "
                            "figures and the filing's sentences stating the cause, in code (rag.answer.text.drivers; "
                            "measured: RESULTS.md).")
    # "What are major acquisitions that X has done in FY2022, FY2021 and FY2020?": the filing's sentences naming them.
    text_events: bool = Field(
        True, description="Open (text) questions asking which events of a kind (acquisitions, divestitures...) "
                           "happened in the years asked answered with the filing's sentences naming them and a "
                           "year, in code (rag.answer.text.events; measured: RESULTS.md).")
    text_drivers_pages: int = internal(
        10, ge=1, description="Retrieved pages whose sentences a drivers or events answer reads.")
    text_ranking_pages: int = internal(5, ge=1, description="Retrieved pages whose tables a ranking reads.")
    text_ranking_min_terms: float = internal(
        2.0, ge=0.0, description="Least score (question words its heading, title and section print; half for row "
                                 "labels) of a ranking's rows (else the free answer).")
    text_evidence_pages: int = internal(4, ge=1, description="Pages whose lines the text-evidence reader sees.")
    text_evidence_lines: int = Field(16, ge=2, description="Lines shown to the text-evidence reader, at most.")
    text_evidence_tokens: int = internal(
        900, ge=100, description="Tokens of lines shown to the text-evidence reader, at most.")
