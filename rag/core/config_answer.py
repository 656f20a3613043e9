"""The answer section (stage 06) of :class:`rag.core.config.RunConfig`: how pages are read and a figure, name or
yes/no is decided. Each field's comment says its unit and why it exists (with the measurement that chose
it); the other sections are in :mod:`rag.core.config_sections`.
"""
from __future__ import annotations

from typing import Literal

from pydantic import Field, NonNegativeInt, PositiveInt

from .config_base import _Frozen


class AnswerConfig(_Frozen):
    # Context budget for one answering call, in tokens (local model: small).
    max_context_tokens: int = Field(2600, ge=256)
    # Pages given to the answering prompt (top of the reranked list).
    max_pages: int = Field(3, ge=1)
    # Fill empty relevant_pages with the top retrieved pages (this many; 0 = leave empty).
    fill_references: int = Field(1, ge=0)
    max_references: int = Field(3, ge=0)
    team_email: str = "team@example.com"
    submission_name: str = "enterprise-rag"
    # Folder of the prompt text blocks (relative to the project root).
    prompts_dir: str = "prompts"
    # Long context: answer the parts (each <= max_context_tokens) in page-rank order and stop at the
    # first part with an answer (number/name: non-N/A, boolean: true); False answers every part.
    early_stop: bool = True
    # Pages per answering call by answer kind (0 or absent: as many as max_context_tokens holds). A small
    # model reads one page more reliably than three: {"boolean": 1} asks page by page, true when any
    # page says true (with early_stop, the first true ends the loop). The 1.5B model misses evidence inside a
    # three-page context: erc2-dev booleans 4/8 -> 6/8 page by page, no new false positives. Measured and not
    # kept on the 33 dev + val booleans (37.0 of 49.5, see RESULTS.md): require_event_for_true (37.1, +1 -1),
    # focused pages (focus_tokens boolean 400: 31.9), a "mention is enough" prompt (37.25, +1 -1).
    pages_per_call: dict[Literal["number", "name", "names", "boolean"], NonNegativeInt] = Field(
        default_factory=lambda: {"boolean": 1})
    # Pages read by answer kind (absent: max_pages).
    max_pages_by_kind: dict[Literal["number", "name", "names", "boolean"], PositiveInt] = Field(
        default_factory=dict)
    # Focused reading by answer kind, in tokens per page (absent or 0: whole pages): each page is cut to
    # its lines naming the question's topic (question words + search-lexicon terms, rag.answer.common.focus).
    focus_tokens: dict[Literal["number", "name", "names", "boolean"], NonNegativeInt] = Field(
        default_factory=dict)
    # Lines above a table searched for its unit line ("values in thousands of USD").
    unit_lookback_lines: int = Field(3, ge=0)
    # Sanity check: largest |k| tried when matching answer == printed value * 1000**k.
    sanity_max_power: int = Field(3, ge=1)
    # Comparative questions: pick max/min in code when the question says which ("highest"…), else
    # ask the comparison prompt; "prompt" always asks it.
    comparative_pick: Literal["code", "prompt"] = "code"
    # A number answer whose printed figure (digits) appears on no context page is N/A (guards
    # against a small model's made-up or miscomputed numbers).
    require_printed_in_context: bool = True
    # ...and N/A when no line printing the figure (with its table's header row and up to
    # metric_title_lines title lines above the table) shares metric_min_share of the word stems of the
    # metric asked for (rag.answer.numbers.figure_check): a figure from another row is not the answer. Titles are off by
    # default: "Net income" in a cash-flow statement titled "Cash flows" is not the cash flow.
    require_metric_on_line: bool = True
    metric_title_lines: int = Field(0, ge=0)
    metric_min_share: float = Field(0.5, ge=0, le=1)  # share of the metric's word stems that must appear
    # On a text (non-table) line only these many words before / after the figure are read.
    metric_window_words: tuple[int, int] = (10, 6)
    # Keep the model's citations for a boolean "false" answer (never filled). Off: a "false" usually
    # has no gold pages, and every cited page outside the gold pools costs reference score.
    refs_for_false: bool = False
    # Number questions: candidate figures from the tables of the top pages (rag.answer.numbers.figures) -- row label
    # naming the metric, latest-period column, unit from the table -- and the model picks one or N/A
    # from that short list; the figure is converted in code. No candidate: see figure_fallback. erc2-dev
    # 25.25 -> 26.43 (see RESULTS.md, issue 19).
    table_candidates: bool = True
    # Pages searched for candidates (0 = max_pages): all of 05's top 10. A figure is checked in code, so reading
    # more pages costs milliseconds; erc2-val numbers, values found 65 -> 79 of 113 (3 -> 10 pages), N/A-gold
    # answered N/A 47 -> 46 of 47 (benchmarks/number_replay.py, RESULTS.md issue 28).
    figure_pages: int = Field(10, ge=0)
    figure_max_candidates: int = Field(6, ge=1)  # longest list shown to the model
    figure_min_label_score: float = Field(0.5, ge=0, le=1)  # a row label's share of the metric's words
    figure_na_fallback: bool = False  # the model picked none of the candidates: read the pages as without them
    # No candidate at all: "read" the pages as without table candidates, or answer "na" at once (no model
    # call: on erc2-val every N/A-gold number question had no candidate, 47 of 47). "read" ties (erc2-dev
    # 26.43 vs 26.23: it finds a figure printed only in prose as often as it invents one; val, the 11
    # questions without candidates: 10.95 vs 10.88 of 16.5) and costs ~90 s per such question.
    figure_fallback: Literal["read", "na"] = "na"
    # Who picks among the candidates: the model (one short call), code (the best-scoring candidate, no call;
    # the 1.5B pick was right 7 of 11 times on erc2-val where code was right 9), or "auto": code when one
    # clearly fits (the only candidate, or the best leads the next by figure_code_margin), else the model
    # among the best figure_pick_list candidates or none (issue 28: 43 -> 46 of 72 values with the 1.5B, +4 -1,
    # noise-sized and CPU-build dependent: code stays).
    figure_pick: Literal["model", "code", "auto"] = "code"
    figure_code_margin: float = Field(0.1, ge=0)  # score lead that makes the best candidate a clear fit
    figure_pick_list: int = Field(5, ge=1)  # candidates shown to the model when it picks ("auto")
    # The N/A threshold: candidates scoring below it are dropped (none left -> N/A). Scores: the share of the
    # metric's words on the row / around the figure, less penalties (rag.answer.numbers.figures, rag.answer.numbers.prose).
    # None: no threshold. 0.8 is the point of the threshold curve with the most questions right on 103 number
    # questions (erc2-dev + erc2-val's value set, RESULTS.md issue 28).
    figure_min_score: float | None = 0.8
    # Numbers matched by meaning (rag.answer.numbers.metric_choice, issue 46): when no row or sentence names the metric
    # in the question's words, every figure of the top pages that passes the unit / period / currency rules is
    # ranked by the embedder's cosine to the metric; the reader chooses one of the metric_choice_list closest
    # (or none) in one short call, and the line stands when its probability (log-probabilities) is at least
    # metric_choice_min_p (chosen on the tuning half of data/splits.json; RESULTS.md).
    metric_choice: bool = False
    metric_choice_list: int = Field(8, ge=1, le=9)  # lines shown; one digit each (the probability is read there)
    metric_choice_min_p: float = Field(0.3, ge=0, le=1)  # tuning half: the one threshold gaining without N/A loss
    # Number questions: candidates also from figures printed in sentences (rag.answer.numbers.prose) -- numbers whose
    # surrounding words (prose_window_words before / after, in the sentence) hold prose_min_share of the
    # metric's word stems or a multi-word search-lexicon term of its topic; unit, scale, currency and period
    # read from the sentence; the same checks as table candidates. They join the table candidates' pick.
    # Values found 29 -> 43 of 72 value-gold, N/A-gold answered N/A 31 of 31 both (RESULTS.md, issue 28).
    prose_candidates: bool = True
    prose_pages: int = Field(0, ge=0)  # pages searched for sentences (0 = as for tables)
    prose_window_words: tuple[NonNegativeInt, NonNegativeInt] = (10, 6)
    prose_min_share: float = Field(0.5, ge=0, le=1)
    prose_max_candidates: int = Field(4, ge=1)
    # Names / name questions about an event (leadership changes, product launches, acquisitions): keep a name
    # only where a context page prints it within event_window_words words of a word stating the event
    # (rag.answer.names.event_check; words per topic in events_file, relative to the project root); none kept -> N/A.
    # The 1.5B reader otherwise lists the executive officers, product tables or subsidiaries. erc2-dev +
    # erc2-val, the 14 names/name questions: 8.43 -> 17.03 of 21 (8 gained, 0 lost; see RESULTS.md, issue 19).
    require_event_near_name: bool = True
    # A name answer named short ("IAA", "SIA") becomes the full name the retrieved pages give it: the one a
    # definition gives ('Surgical Innovation Associates, Inc. ("SIA")'), else the name with its legal form
    # ("IAA, Inc."). erc2-val name questions: 1 -> 4 of 4 value-gold (RESULTS.md issue 28).
    full_names: bool = True
    event_window_words: int = Field(30, ge=1)  # whitespace-separated words on each side of the name
    # Boolean questions about an event: a "true" stands only when a page the reader cited (citing none: the
    # pages it read) prints a word of that event (same events_file, topics matched by the question); no
    # such page -> false. A question matching no topic is not checked.
    require_event_for_true: bool = False
    events_file: str = "prompts/checks/events.toml"
    # Booleans from token log-probabilities (issue 28 item 5; rag.answer.booleans.bool_logprob): after each page's
    # answering call, a second call with the same messages whose grammar is {"final_answer": boolean} reads
    # P(true) at the value token (rag.models.logprobs). A local server reuses the prompt it just evaluated, so
    # it costs a few tokens (and ~3.5 s of the server's own work on 2 cores, see boolean_reasoning).
    # boolean_p_true records P in every boolean call; boolean_decision "cot": the
    # chain-of-thought answer decides (as before), "logprob": true when P(true) >= boolean_min_p_true. A
    # decision from one logit difference of the prompt moves with the CPU build only near the threshold; a
    # generated chain of reasoning can take another path on another build.
    # Default "logprob" at 0.2 (the 1.5B's decision-only answer leans "false": P 0.03-0.7): right booleans
    # erc2-dev 4 -> 6 of 8, erc2-val 18 -> 20 of 25 (the threshold was read off these two), and on
    # FinanceBench's 14 yes/no questions, not used to choose it, 8 -> 9 (True-gold 6 -> 7 of 8, False-gold
    # answered True 4 of 6 both); RESULTS.md, issue 28. Other presets (other models) keep "cot".
    boolean_p_true: bool = True
    boolean_decision: Literal["cot", "logprob"] = "logprob"
    boolean_min_p_true: float = Field(0.2, ge=0, le=1)
    # With boolean_decision "logprob": False skips the chain-of-thought call, so a page costs one prompt
    # evaluation and a few tokens (no reasoning in the debug record: P(true) per page instead; a true cites
    # the page it was read on). The decision call has the reasoning call's messages, so its P(true) is the
    # same with or without it: default False, measured with empty caches on the 33 erc2-dev + erc2-val
    # booleans, 0 answers and 0 references changed (|P| moved at most 0.018 by the server's prompt reuse),
    # 06 on the 40 dev + extra questions 36 -> 23.6 s/question with rag.models.llama_logits (RESULTS.md,
    # issue 28). True: each page's reasoning is recorded again (widgets, `rag ask`'s "Why:").
    boolean_reasoning: bool = False
    boolean_top_logprobs: int = Field(10, ge=2, le=20)  # alternatives per token asked of the server
    boolean_decision_max_tokens: int = Field(24, ge=8)  # '{"final_answer": true}' is ~7 tokens
    # Number questions asking for a ratio, margin, growth or average that reports do not print ("days payable
    # outstanding", "3 year average EBITDA margin", "2 year revenue CAGR"): computed in code from operand
    # candidates (rag.answer.computed.computed; formulas and operands in formulas_file, relative to the project root)
    # in each operand's year column of the top computed_pages pages; an operand missing -> the usual path.
    # Rounded as the question asks, else to computed_decimals. See RESULTS / notes issue 31 for the measure.
    computed_figures: bool = False
    computed_pages: int = Field(10, ge=1)
    computed_decimals: int = Field(4, ge=0)
    formulas_file: str = "prompts/figures/formulas.toml"
    # Open (text) answers built from their evidence (issue 48, rag.answer.text.text_evidence): the reader first picks
    # the numbered sentences / table rows (with their table's period columns) of the top text_evidence_pages
    # pages that answer, then writes at most three sentences from those lines alone and the changes, shares and
    # per-share values computed from them in code; a sentence stating a figure printed in none of them is
    # dropped. The lines naming the topic are ranked by the embedder's cosine to the question; at most
    # text_evidence_lines of them and text_evidence_tokens tokens are shown (a 1.5B reader picks from a short list). Off reproduces the free answer over whole pages.
    text_from_evidence: bool = False
    text_evidence_pages: int = Field(4, ge=1)
    text_evidence_lines: int = Field(16, ge=2)
    text_evidence_tokens: int = Field(900, ge=100)
