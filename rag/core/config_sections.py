"""The stage sections of :class:`rag.core.config.RunConfig`, one frozen model per stage (parse, clean, chunk,
index, retrieve, rerank, answer) and ``execution`` (where items run: this machine or a Ray cluster); the model
sections (embed, llm) are in :mod:`rag.core.config_models`. Each field's ``description`` says its unit and what
it changes; functions read these values, never literals. Loading, presets and overrides: :mod:`rag.core.config`.

Two tiers (:mod:`rag.core.config_base`): plain ``Field(...)`` is a knob a preset, an ablation or a test varies;
``internal(...)`` is a named constant nothing varies (it still loads and overrides like any field). The fields
keep their order: the order is part of ``RunConfig.config_hash``. Reference: docs/config-reference.md. The
measurements behind the defaults: RESULTS.md, "Config defaults and the measurements behind them".
"""
from __future__ import annotations

from typing import Literal

from pydantic import Field

# the answer section (06) is its own module for size; both are re-exported here for rag.core.config
from .config_answer import AnswerConfig  # noqa: F401
from .config_base import _Frozen, internal  # noqa: F401


class ParseConfig(_Frozen):
    pipeline: Literal["auto", "standard", "native"] = Field(
        "auto", description="Parser: docling's full StandardPdfPipeline, the model-free native one, or auto "
                            "(standard when its weights are found, else native).")
    artifacts_path: str | None = Field(
        None, description="Folder with docling's pre-downloaded model weights (None: docling's default cache).")
    # "mps" (Apple) is docling-only.
    device: str | None = Field(
        None, pattern=r"^(auto|cpu|mps|cuda(:\d+)?)$",
        description="Accelerator of docling's full pipeline, overriding the run's top-level device (None or "
                    "\"auto\": follow it).")
    page_batch: int = Field(100, ge=1, description="Pages converted per docling call (bounds memory on long reports).")
    workers: int = Field(2, ge=1, description="Parallel worker processes (one report each).")
    row_tolerance_pt: float = internal(
        3.0, gt=0, description="Lines whose vertical centres are within this many points belong to one table row.")
    column_gap_pt: float = Field(
        12.0, gt=0, description="Gap in points between two words on a line that separates two table columns.")
    number_gap_pt: float = internal(
        5.0, gt=0, description="Gap in points that already splits two adjacent numbers into two columns.")
    min_table_rows: int = internal(
        2, ge=2, description="Consecutive multi-column rows with a numeric cell that make a table.")
    max_row_gap_pt: float = internal(
        16.0, gt=0, description="Gap in points between two rows (bottom to top) that ends a table.")
    context_lines: int = Field(
        2, ge=0, description="Text rows kept above a table as its context (title, \"(in thousands)\").")
    # ...and takes the row of period labels ("2022  2021  2020") it finds there as its header.
    period_header_skip_rows: int = Field(
        3, ge=0, description="One-cell rows (unit line, \"Year ended ...\") a headerless table looks up past for "
                             "its period labels (0: off).")
    paragraph_gap_ratio: float = internal(
        0.8, ge=0, description="Largest gap between two text lines, as a share of line height, that joins them.")
    heading_max_chars: int = internal(
        120, ge=1, description="Longest one-line bold block (characters) tagged \"heading\" (native path).")
    heading_size_ratio: float = internal(
        1.25, gt=1, description="Line height, as a multiple of the page's median, that makes a one-liner a "
                                "heading.")
    parser_threads: int = internal(
        1, ge=1, description="docling-parse threads inside each worker (1: the workers are the parallelism).")
    timeout_s: float = Field(
        0.0, ge=0, description="Per-report time limit in seconds (0: none); a report over it is recorded as failed.")


class CleanConfig(_Frozen):
    garbled_threshold: float = internal(
        0.15, ge=0, le=1, description="Share of non-word glyphs above which a page is garbled and re-read with OCR.")
    ocr: bool = Field(True, description="Re-read garbled, shifted and text-less pages with OCR.")
    # The text layer of a shifted page decodes to substituted letters.
    shifted_threshold: float = Field(
        0.7, ge=0, le=1, description="Cosine of a page's a-z histogram to English letter frequencies below which "
                                     "it is shifted and re-read with OCR (0: off).")
    shifted_min_letters: int = internal(
        200, ge=1, description="Pages with fewer letters are not judged by the letter test (too few to tell).")
    # A shifted page that OCR did not read (over the budget) is decoded when one code-point offset per font
    # (|offset| <= shift_max) makes its letters read as English (similarity >= shift_accept): letters and
    # punctuation come back, glyphs the parser lost (U+FFFD, often digits) do not.
    unshift: bool = Field(True, description="Decode a shifted page OCR did not read by one code-point offset per font.")
    shift_max: int = internal(64, ge=1, le=126, description="Largest |code-point offset| unshift tries.")
    shift_accept: float = internal(
        0.85, ge=0, le=1, description="Letter similarity to English at which an unshift offset is accepted.")
    # Pages are read in plan order up to this many; the rest keep their text layer (shifted ones decoded by
    # unshift) and are counted in ocr_skipped. A count, not seconds, so 02 reads the same pages on every machine.
    ocr_max_pages: int = Field(
        45, ge=0, description="OCR budget per report, in pages (0: no page cap; measured: RESULTS.md).")
    # Where it stops OCR before the page cap, the item records ocr_stopped_by="seconds" and the pages read
    # depend on the machine's speed.
    ocr_budget_s: float = Field(900.0, ge=0, description="Safety valve in seconds of OCR per report.")
    repeated_line_share: float = internal(
        0.5, gt=0, le=1, description="Share of pages a line repeats on (top or bottom) that makes it a "
                                     "header/footer.")
    serialize_tables: bool = Field(
        False, description="Rewrite tables as sentences with the LLM (the winner's trick).")
    serialize_max_tables: int = internal(200, ge=0, description="Tables serialized per report at most.")
    serialize_max_chars: int = internal(
        6000, ge=200, description="Characters of one table's Markdown sent to the serializing LLM (cut there).")
    ocr_scale: float = internal(
        2.0, gt=0, description="OCR render scale in pixels per PDF point (2.0 = 144 dpi; higher: small print, "
                               "slower).")
    ocr_threads: int = internal(
        2, ge=1, description="onnxruntime threads of the OCR engine (speed only, not in the currency key).")
    # With tables serialized by the LLM the stage runs serially whatever this says.
    workers: int = Field(
        2, ge=1, description="Parallel worker processes (one report each; speed only; 1: in the run's process).")
    ocr_min_score: float = internal(
        0.5, ge=0, le=1, description="Recognizer confidence (0..1) below which an OCR text box is dropped.")
    ocr_row_tolerance: float = internal(
        0.5, gt=0, description="Difference of vertical centres, in box heights, within which OCR boxes share a "
                               "line.")
    textless_max_chars: int = internal(
        0, ge=0, description="Non-space characters at most on a text-less page (OCR'd unless its image is blank).")
    blank_ink_share: float = Field(
        0.005, ge=0, le=1, description="Share of pixels (0..1) off the background below which a page image is "
                                       "blank (no OCR).")
    edge_lines: int = Field(
        2, ge=0, description="Blocks looked at on the top and on the bottom of each page for headers/footers.")
    edge_zone: float = internal(
        0.08, ge=0, lt=0.5, description="...and blocks inside this share (0..1) of the page height from either "
                                        "edge.")
    edge_line_max_chars: int = internal(
        150, ge=1, description="Longest edge block (characters) that can be a header/footer.")
    repeated_min_pages: int = internal(
        4, ge=2, description="Pages a report needs for header/footer removal.")
    unit_line_max_chars: int = internal(
        160, ge=10, description="Longest page text line (characters) searched for a table's unit, nearest first.")
    table_title_max_chars: int = internal(
        120, ge=10, description="Characters a table title in the unit line is cut to.")


class ChunkConfig(_Frozen):
    sizes: tuple[int, ...] = Field(
        (300,), description="Chunk sizes in cl100k tokens; several sizes are indexed side by side.")
    overlap: int = Field(50, ge=0, description="Tokens shared by two neighbouring chunks.")
    encoding: str = internal("cl100k_base", description="tiktoken encoding that counts chunk tokens.")
    context_header: bool = Field(
        True, description="Prefix each chunk with \"company | page | heading\" before embedding.")


class IndexConfig(_Frozen):
    # The index records what it was built with and queries use the same.
    bm25_stemmer: Literal["none", "english"] = Field(
        "none", description="BM25 word stemming (\"english\": Snowball, \"acquired\" finds \"acquisition\"; "
                            "\"none\": as printed).")
    # "stored": stage 04 embeds every chunk into the report's FAISS index. "on_demand": 04 builds BM25 only
    # (its FAISS file holds no vectors) and stage 05 embeds just the retrieve.dense_pool BM25 chunks a
    # question reaches (through the embedder's disk cache, so a chunk is embedded once). Needs
    # retrieve.dense_pool > 0 unless retrieve.mode is "bm25".
    chunk_vectors: Literal["stored", "on_demand"] = Field(
        "on_demand", description="Chunk vectors embedded by 04 into the index (stored) or by 05 for a BM25 pool "
                                 "(on_demand) (measured: RESULTS.md).")


class RetrieveConfig(_Frozen):
    mode: Literal["dense", "bm25", "hybrid"] = Field(
        "hybrid", description="Search: dense vectors, BM25, or both fused by reciprocal rank.")
    chunk_size: int = Field(300, description="Which indexed chunk size retrieval reads.")
    top_k_chunks: int = Field(60, ge=1, description="Chunks retrieved per question (measured: RESULTS.md).")
    rrf_k: int = Field(60, ge=1, description="Reciprocal rank fusion constant (score = sum 1 / (rrf_k + rank)).")
    dense_pool: int = Field(
        100, ge=0, description="Dense search ranks only this many best BM25 chunks (0: every chunk of the "
                               "report) (measured: RESULTS.md).")
    page_score: Literal["max", "sum", "rrf_sum"] = Field(
        "max", description="How a page's retrieval score is made from its chunks' scores.")
    top_pages: int = Field(10, ge=1, description="Pages handed on to reranking / answering.")
    # Answer-format boilerplate: "If data is not available, return 'N/A'.", "according to the annual report";
    # every chunk's context header carries the company's name, so it only adds noise.
    query_cleanup: bool = internal(
        True, description="Search with the question minus its answer-format boilerplate and the routed "
                          "company's name.")
    query_expansion: bool = Field(
        False, description="LLM rewrites the question into keywords + paraphrases (BM25: all; dense: each "
                           "paraphrase).")
    expansion_keywords: int = Field(8, ge=0, description="Keywords the query expansion may add, at most.")
    expansion_paraphrases: int = internal(2, ge=0, description="Paraphrases the query expansion may add, at most.")
    # e.g. "leadership changed" -> appointed, resigned, director.
    lexicon_expansion: bool = Field(
        True, description="Words of the lexicon's topics (question words -> the words a report prints) join the "
                          "BM25 query (measured: RESULTS.md).")
    lexicon: str = Field(
        "prompts/search/lexicon.toml", description="The search lexicon (relative to the project root).")
    # Balance sheet, income or cash-flow statement (prompts/search/statements.toml); rag.retrieve.statements.
    statement_pages: int = Field(
        2, ge=0, description="Pages of each primary financial statement a question draws on that join the "
                             "candidates first (0: off; measured: RESULTS.md).")
    statements: str = Field(
        "prompts/search/statements.toml", description="Statement titles and words (relative to the project root).")
    statement_title_chars: int = internal(
        400, ge=1, description="A statement page's title lies within its first this many characters.")
    statement_min_figures: int = Field(
        20, ge=1, description="Figures with a thousands separator or decimals a statement page prints at least.")
    # Employees, stores, patents, vessels, customers (prompts/search/counts.toml); rag.retrieve.counts.
    count_pages: int = Field(
        2, ge=0, description="Pages printing a number next to a count's noun that join the candidates of a "
                             "count question (0: off; measured: RESULTS.md).")
    counts: str = Field("prompts/search/counts.toml", description="Count nouns (relative to the project root).")
    count_gap_words: int = internal(3, ge=0, description="Words at most between a count's number and its noun.")
    lexicon_dense: bool = Field(
        True, description="Also search densely with \"query + lexicon terms\" (the best cosine counts).")
    # "filing": sha1 in questions.json, written by `rag import financebench` from doc_name.
    given_filing: bool = Field(
        False, description="Route a question naming its own filing to that filing alone (FinanceBench's "
                           "per-filing setting; off: the pipeline routes).")
    route_by_content: bool = Field(
        False, description="A question naming no company goes to a filing printing the period it names, the one "
                           "whose text the embedder finds closest: a guess (off: it is answered N/A; on in "
                           "FinanceBench's datasets; measured: RESULTS.md).")


class RerankConfig(_Frozen):
    # "llm" (settings below) stays one override away: --set rerank.mode=llm.
    mode: Literal["none", "llm", "cross_encoder"] = Field(
        "none", description="Reranker of the retrieved pages: none, the LLM judge, or a cross-encoder "
                            "(measured: RESULTS.md).")
    candidates: int = Field(6, ge=1, description="Pages scored by the reranker (from the top of retrieval).")
    batch_size: int = Field(3, ge=1, description="Pages per LLM rerank call.")
    # final = retrieval_weight * normalized retrieval score + llm_weight * reranker score.
    retrieval_weight: float = internal(
        0.3, ge=0, description="Weight of the normalized retrieval score in the final score.")
    llm_weight: float = internal(0.7, ge=0, description="Weight of the reranker's score in the final score.")
    top_n: int = Field(10, ge=1, description="Pages kept after reranking.")
    page_chars: int = Field(1500, ge=100, description="Characters of each page shown to the LLM reranker.")
    cross_encoder_models: tuple[str, ...] = Field((), description="Cross-encoder models (mode cross_encoder).")
    max_tokens: int = internal(320, ge=16, description="Completion-token cap of one LLM rerank call (a batch).")
    reason_words: int = internal(
        12, ge=1, description="Words asked for in each page's reason (prompt instruction, not enforced).")


class ExecutionConfig(_Frozen):
    """Where the stages' items run. Speed only: no stage reads this section, so it is in no item key and
    changing it re-runs nothing (``--set run.executor=ray`` is an alias: ``run`` is the run's name)."""

    # The driver still writes every artifact.
    executor: Literal["local", "ray"] = Field(
        "local", description="\"local\": this machine (serial, threads or processes); \"ray\": one Ray task per "
                             "item on a cluster.")
    # "auto" joins the one `ray start` made on this node, "host:6379" a head's GCS address, "ray://host:10001"
    # Ray Client.
    ray_address: str = Field("local", description="Ray cluster to join (\"local\": start one in this process).")
    num_cpus: float = Field(1.0, ge=0, description="CPUs one item's task asks the cluster for (fractions allowed).")
    num_gpus: float = Field(0.0, ge=0, description="GPUs one item's task asks the cluster for.")
    memory: int = Field(0, ge=0, description="Memory in bytes one item's task asks the cluster for (0: none).")
    # An error raised by the item's own work is recorded as its failure and never retried.
    max_retries: int = Field(3, ge=0, description="Re-runs of an item whose worker died (killed, out of memory, "
                                                  "node lost).")
    max_in_flight: int = Field(
        0, ge=0, description="Items submitted at once (0: all; the cluster's free resources decide).")
    # Same path, sha256-checked. Off: every node must see the driver's files (NFS).
    stage_inputs: bool = Field(
        True, description="Ship each item's input files through Ray's object store to a node that lacks them.")
