"""The stage sections of :class:`rag.core.config.RunConfig`, one frozen model per stage (parse, clean, chunk,
index, retrieve, rerank, answer) and ``execution`` (where items run: this machine or a Ray cluster); the model
sections (embed, llm) are in :mod:`rag.core.config_models`. Each field's comment says its unit and why it exists;
functions read these values, never literals. Loading, presets and overrides: :mod:`rag.core.config`.
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ParseConfig(_Frozen):
    # "auto": the full docling StandardPdfPipeline when its weights are found, else "native".
    pipeline: Literal["auto", "standard", "native"] = "auto"
    # Folder with docling's pre-downloaded model weights (None: docling's default cache).
    artifacts_path: str | None = None
    # Accelerator of docling's full pipeline, overriding the run's top-level ``device`` (None or "auto":
    # follow it). "mps" (Apple) is docling-only.
    device: str | None = Field(None, pattern=r"^(auto|cpu|mps|cuda(:\d+)?)$")
    # Pages converted per docling call: bounds memory on 1,000-page reports.
    page_batch: int = Field(100, ge=1)
    # Parallel worker processes (one report each).
    workers: int = Field(2, ge=1)
    # Lines whose vertical centres are within this many points belong to one table row.
    row_tolerance_pt: float = Field(3.0, gt=0)
    # Gap in points between two words on a line that separates two table columns.
    column_gap_pt: float = Field(12.0, gt=0)
    # Two adjacent numbers split into two columns already at this gap in points (narrow amount columns).
    number_gap_pt: float = Field(5.0, gt=0)
    # A run of at least this many consecutive multi-column rows with a numeric cell is a table.
    min_table_rows: int = Field(2, ge=2)
    # Rows further apart than this many points (bottom of one to top of the next) end a table.
    max_row_gap_pt: float = Field(16.0, gt=0)
    # Text rows kept above a table as its context (title, "(in thousands)"), nearest last.
    context_lines: int = Field(2, ge=0)
    # A headerless table looks up to this many one-cell rows (unit line, "Year ended ...") further up
    # for its row of period labels ("2022  2021  2020") and takes it as its header (0: off).
    period_header_skip_rows: int = Field(3, ge=0)
    # Two text lines join one block when the gap between them is at most this share of line height.
    paragraph_gap_ratio: float = Field(0.8, ge=0)
    # A one-line bold (font name) block at most this many characters long is tagged "heading" (native path).
    heading_max_chars: int = Field(120, ge=1)
    # ...or a one-liner whose line height is at least this multiple of the page's median line height.
    heading_size_ratio: float = Field(1.25, gt=1)
    # docling-parse threads inside each worker (1: the workers are the parallelism).
    parser_threads: int = Field(1, ge=1)
    # Per-report time limit in seconds (0: none); a report over it is recorded as failed.
    timeout_s: float = Field(0.0, ge=0)


class CleanConfig(_Frozen):
    # Share of non-word glyphs above which a page is "garbled" and re-read with OCR.
    garbled_threshold: float = Field(0.15, ge=0, le=1)
    ocr: bool = True
    # A page whose a-z letter histogram has cosine similarity below this to English letter frequencies
    # is "shifted" (text layer decodes to substituted letters) and re-read with OCR; 0 turns the test off.
    shifted_threshold: float = Field(0.7, ge=0, le=1)
    # Pages with fewer letters than this are not judged by the letter test (too few to tell).
    shifted_min_letters: int = Field(200, ge=1)
    # A shifted page that OCR did not read (over the budget) is decoded when one code-point offset per font
    # (|offset| <= shift_max) makes its letters read as English (similarity >= shift_accept): letters and
    # punctuation come back, glyphs the parser lost (U+FFFD, often digits) do not.
    unshift: bool = True
    shift_max: int = Field(64, ge=1, le=126)
    shift_accept: float = Field(0.85, ge=0, le=1)
    # OCR time budget per report in seconds (OCR costs ~5-8 s a page on 2 cores): pages are read in
    # plan order until the budget is spent; the rest keep their text layer and are counted in
    # ocr_skipped. The budget and the seconds spent are recorded in the stage's item records.
    ocr_budget_s: float = Field(300.0, ge=0)
    # A line repeated on at least this share of pages (at top or bottom) is a header/footer.
    repeated_line_share: float = Field(0.5, gt=0, le=1)
    # Optional LLM table serialization (winner's trick): tables rewritten as sentences.
    serialize_tables: bool = False
    serialize_max_tables: int = Field(200, ge=0)
    # Characters of one table's Markdown sent to the serializing LLM (a longer table is cut there).
    serialize_max_chars: int = Field(6000, ge=200)
    # OCR render scale in pixels per PDF point (2.0 = 144 dpi; higher reads small print better, slower).
    ocr_scale: float = Field(2.0, gt=0)
    # onnxruntime threads of the OCR engine (speed only, not part of the currency key).
    ocr_threads: int = Field(2, ge=1)
    # Parallel worker processes (one report each; speed only). 1: reports in turn, in the run's process.
    # With tables serialized by the LLM the stage runs serially whatever this says.
    workers: int = Field(2, ge=1)
    # OCR text boxes below this recognizer confidence (0..1) are dropped.
    ocr_min_score: float = Field(0.5, ge=0, le=1)
    # OCR boxes whose vertical centres differ by at most this multiple of the box height share a line.
    ocr_row_tolerance: float = Field(0.5, gt=0)
    # A page with at most this many non-space characters is text-less: OCR'd unless its image is blank.
    textless_max_chars: int = Field(0, ge=0)
    # Share of pixels (0..1) differing from the background below which a page image is blank (no OCR).
    blank_ink_share: float = Field(0.005, ge=0, le=1)
    # Blocks looked at on the top and on the bottom of each page for repeated headers/footers.
    edge_lines: int = Field(2, ge=0)
    # ...and blocks inside this share (0..1) of the page height from the top or the bottom edge.
    edge_zone: float = Field(0.08, ge=0, lt=0.5)
    # Only edge blocks up to this many characters can be headers/footers (running heads are short).
    edge_line_max_chars: int = Field(150, ge=1)
    # Header/footer removal only in reports with at least this many pages.
    repeated_min_pages: int = Field(4, ge=2)
    # Page text lines up to this many characters are searched (nearest first) for a table's unit.
    unit_line_max_chars: int = Field(160, ge=10)
    # A table title in the unit line is cut to this many characters.
    table_title_max_chars: int = Field(120, ge=10)


class ChunkConfig(_Frozen):
    # Chunk sizes in cl100k tokens; several sizes are indexed side by side.
    sizes: tuple[int, ...] = (300,)
    overlap: int = Field(50, ge=0)
    encoding: str = "cl100k_base"
    # Prefix each chunk with "company | page | heading" before embedding.
    context_header: bool = True


class IndexConfig(_Frozen):
    # BM25 words stemmed before indexing and searching ("english": Snowball via PyStemmer, so "acquired"
    # finds "acquisition"); "none" keeps the words as printed. The index records what it was built with
    # and queries use the same.
    bm25_stemmer: Literal["none", "english"] = "none"


class RetrieveConfig(_Frozen):
    mode: Literal["dense", "bm25", "hybrid"] = "hybrid"
    # Which indexed chunk size retrieval reads.
    chunk_size: int = 300
    # 60 chunks (not 30) reach more distinct pages: erc2-dev hybrid gold-pool hit@10 0.77 -> 0.85.
    top_k_chunks: int = Field(60, ge=1)
    # Reciprocal rank fusion constant (score = sum 1 / (rrf_k + rank), rank 1-based).
    rrf_k: int = Field(60, ge=1)
    # How a page's retrieval score is made from its chunks' scores.
    page_score: Literal["max", "sum", "rrf_sum"] = "max"
    # Pages handed on to reranking / answering.
    top_pages: int = Field(10, ge=1)
    # Search with the question minus its answer-format boilerplate ("If data is not available, return
    # 'N/A'.", "according to the annual report") and minus the routed company's name (every chunk's
    # context header carries it, so it only adds noise).
    query_cleanup: bool = True
    # LLM rewrites the question into keywords + paraphrases, used by BM25 (all) and dense (each paraphrase).
    query_expansion: bool = False
    # Upper bounds on what the expansion may add (counts of keywords / paraphrases kept).
    expansion_keywords: int = Field(8, ge=0)
    expansion_paraphrases: int = Field(2, ge=0)
    # Vocabulary expansion without a model: topics of the lexicon file (question words -> the words a
    # report prints, e.g. "leadership changed" -> appointed, resigned, director) join the BM25 query.
    # erc2-dev hybrid: gold-pool hit@10 0.846 -> 1.0, MRR 0.589 -> 0.715 (benchmarks/retrieve.py).
    lexicon_expansion: bool = True
    lexicon: str = "prompts/search/lexicon.toml"  # relative to the project root
    # Pages of the primary financial statements a question names or draws on (its balance sheet, income or
    # cash-flow statement; prompts/search/statements.toml) join the candidates first, at most this many per
    # statement (0: off). rag.retrieve.statements; measured in RESULTS.md (issue 31).
    statement_pages: int = Field(2, ge=0)
    statements: str = "prompts/search/statements.toml"  # relative to the project root
    # A statement page: its title within the page's first statement_title_chars characters, and at least
    # statement_min_figures figures printed with a thousands separator or decimals (a contents page has none).
    statement_title_chars: int = Field(400, ge=1)
    statement_min_figures: int = Field(20, ge=1)
    # Number questions about a count (employees, stores, patents, vessels, customers: prompts/search/counts.toml):
    # pages printing a number followed within count_gap_words words by the count's noun join the candidates
    # after the statement pages, at most this many (0: off). rag.retrieve.counts; RESULTS.md issue 28.
    count_pages: int = Field(2, ge=0)
    counts: str = "prompts/search/counts.toml"  # relative to the project root
    count_gap_words: int = Field(3, ge=0)
    # Also search densely with "query + lexicon terms" (a second dense query; the best cosine counts).
    lexicon_dense: bool = True


class RerankConfig(_Frozen):
    # No rerank by default: the pointwise 1.5B judge gave near-binary scores, moved gold pages down on the
    # held-out split (hit@1 3 -> 0 of 11) and cost ~40 s a question; on erc2-dev no rerank scores 25.25 vs
    # 24.95. "llm" (settings below) stays one override away: --set rerank.mode=llm
    mode: Literal["none", "llm", "cross_encoder"] = "none"
    # Candidate pages scored by the reranker (taken from the top of retrieval).
    candidates: int = Field(6, ge=1)
    batch_size: int = Field(3, ge=1)
    # final = retrieval_weight * normalized retrieval score + llm_weight * reranker score.
    retrieval_weight: float = Field(0.3, ge=0)
    llm_weight: float = Field(0.7, ge=0)
    top_n: int = Field(10, ge=1)
    # Characters of each page shown to the LLM reranker (keeps the local model's prompt lean).
    page_chars: int = Field(1500, ge=100)
    cross_encoder_models: tuple[str, ...] = ()
    # Completion-token cap of one LLM rerank call (a batch): keeps the local model's answers short.
    max_tokens: int = Field(320, ge=16)
    # Words asked for in each page's reason (prompt instruction, not enforced).
    reason_words: int = Field(12, ge=1)


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
    # its lines naming the question's topic (question words + search-lexicon terms, rag.answer.focus).
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
    # metric asked for (rag.answer.figure_check): a figure from another row is not the answer. Titles are off by
    # default: "Net income" in a cash-flow statement titled "Cash flows" is not the cash flow.
    require_metric_on_line: bool = True
    metric_title_lines: int = Field(0, ge=0)
    metric_min_share: float = Field(0.5, ge=0, le=1)  # share of the metric's word stems that must appear
    # On a text (non-table) line only these many words before / after the figure are read.
    metric_window_words: tuple[int, int] = (10, 6)
    # Keep the model's citations for a boolean "false" answer (never filled). Off: a "false" usually
    # has no gold pages, and every cited page outside the gold pools costs reference score.
    refs_for_false: bool = False
    # Number questions: candidate figures from the tables of the top pages (rag.answer.figures) -- row label
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
    # metric's words on the row / around the figure, less penalties (rag.answer.figures, rag.answer.prose).
    # None: no threshold. 0.8 is the point of the threshold curve with the most questions right on 103 number
    # questions (erc2-dev + erc2-val's value set, RESULTS.md issue 28).
    figure_min_score: float | None = 0.8
    # Number questions: candidates also from figures printed in sentences (rag.answer.prose) -- numbers whose
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
    # (rag.answer.event_check; words per topic in events_file, relative to the project root); none kept -> N/A.
    # The 1.5B reader otherwise lists the executive officers, product tables or subsidiaries. erc2-dev +
    # erc2-val, the 14 names/name questions: 8.43 -> 17.03 of 21 (8 gained, 0 lost; see RESULTS.md, issue 19).
    require_event_near_name: bool = True
    event_window_words: int = Field(30, ge=1)  # whitespace-separated words on each side of the name
    # Boolean questions about an event: a "true" stands only when a page the reader cited (citing none: the
    # pages it read) prints a word of that event (same events_file, topics matched by the question); no
    # such page -> false. A question matching no topic is not checked.
    require_event_for_true: bool = False
    events_file: str = "prompts/checks/events.toml"
    # Booleans from token log-probabilities (issue 28 item 5; rag.answer.bool_logprob): after each page's
    # answering call, a second call with the same messages whose grammar is {"final_answer": boolean} reads
    # P(true) at the value token (rag.models.logprobs). A local server reuses the prompt it just evaluated, so
    # it costs a few tokens. boolean_p_true records P in every boolean call; boolean_decision "cot": the
    # chain-of-thought answer decides (as before), "logprob": true when P(true) >= boolean_min_p_true. A
    # decision from one logit difference of the prompt moves with the CPU build only near the threshold; a
    # generated chain of reasoning can take another path on another build.
    boolean_p_true: bool = True
    boolean_decision: Literal["cot", "logprob"] = "cot"
    boolean_min_p_true: float = Field(0.5, ge=0, le=1)
    # With boolean_decision "logprob": False skips the chain-of-thought call, so a page costs one prompt
    # evaluation and a few tokens (no reasoning in the debug record; a true cites the page it was read on).
    boolean_reasoning: bool = True
    boolean_top_logprobs: int = Field(10, ge=2, le=20)  # alternatives per token asked of the server
    boolean_decision_max_tokens: int = Field(24, ge=8)  # '{"final_answer": true}' is ~7 tokens
    # Number questions asking for a ratio, margin, growth or average that reports do not print ("days payable
    # outstanding", "3 year average EBITDA margin", "2 year revenue CAGR"): computed in code from operand
    # candidates (rag.answer.computed; formulas and operands in formulas_file, relative to the project root)
    # in each operand's year column of the top computed_pages pages; an operand missing -> the usual path.
    # Rounded as the question asks, else to computed_decimals. See RESULTS / notes issue 31 for the measure.
    computed_figures: bool = False
    computed_pages: int = Field(10, ge=1)
    computed_decimals: int = Field(4, ge=0)
    formulas_file: str = "prompts/figures/formulas.toml"


class ExecutionConfig(_Frozen):
    """Where the stages' items run. Speed only: no stage reads this section, so it is in no item key and
    changing it re-runs nothing (``--set run.executor=ray`` is an alias: ``run`` is the run's name)."""

    # "local": this machine (serial, threads or processes, as each stage asks); "ray": one Ray task per item
    # on a cluster (rag.core.ray_executor), the driver still writing every artifact.
    executor: Literal["local", "ray"] = "local"
    # Ray cluster to join: "local" starts one in this process (all CPUs of this machine), "auto" joins the
    # one `ray start` made on this node, "host:6379" a head's GCS address, "ray://host:10001" Ray Client.
    ray_address: str = "local"
    # What one item's task asks the cluster for: CPUs (fractions allowed), GPUs, memory in bytes (0: none).
    num_cpus: float = Field(1.0, ge=0)
    num_gpus: float = Field(0.0, ge=0)
    memory: int = Field(0, ge=0)
    # Re-runs of an item whose worker died (process killed, out of memory, node lost). An error raised by
    # the item's own work is recorded as its failure and never retried.
    max_retries: int = Field(3, ge=0)
    # Items submitted at once (0: all; the cluster's free resources decide how many run).
    max_in_flight: int = Field(0, ge=0)
    # Ship each item's input files (upstream artifacts, the PDF) through Ray's object store and write them
    # on a node that lacks them (same path, sha256-checked): no shared filesystem needed. Off: every node
    # must see the driver's files (NFS).
    stage_inputs: bool = True
