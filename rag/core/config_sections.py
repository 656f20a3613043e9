"""The stage sections of :class:`rag.core.config.RunConfig`, one frozen model per stage (parse, clean, chunk,
index, retrieve, rerank, answer) and ``execution`` (where items run: this machine or a Ray cluster); the model
sections (embed, llm) are in :mod:`rag.core.config_models`. Each field's comment says its unit and why it exists;
functions read these values, never literals. Loading, presets and overrides: :mod:`rag.core.config`.
"""
from __future__ import annotations

from typing import Literal

from pydantic import Field

# the answer section (06) is its own module for size; both are re-exported here for rag.core.config
from .config_answer import AnswerConfig  # noqa: F401
from .config_base import _Frozen  # noqa: F401


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
    # OCR budget per report, in pages (0: no page cap): pages are read in plan order up to this many; the
    # rest keep their text layer (shifted ones decoded by unshift) and are counted in ocr_skipped. A count,
    # not seconds, so 02 reads the same pages on every machine: under the old 300 s budget one report
    # (MongoDB, 171 candidates) got 41 pages OCR'd on a 2-core EPYC (avx2, ~7 s a page) and 57 on a 2-core
    # Xeon (4.4 s a page), so 03..06 differed by machine. 45 is about what the 300 s bought on the slower one.
    ocr_max_pages: int = Field(45, ge=0)
    # Safety valve in seconds of OCR per report (OCR costs ~4-8 s a page on 2 cores): only a machine several
    # times slower than those reaches it before the page cap; where it stops OCR first, the item records
    # ocr_stopped_by="seconds" and the pages read depend on the machine's speed.
    ocr_budget_s: float = Field(900.0, ge=0)
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
    # "stored": stage 04 embeds every chunk into the report's FAISS index. "on_demand": 04 builds BM25 only
    # (its FAISS file holds no vectors) and stage 05 embeds just the retrieve.dense_pool BM25 chunks a
    # question reaches (through the embedder's disk cache, so a chunk is embedded once): embedding was 49% of a
    # 2-core round (RESULTS.md, issue 29). Needs retrieve.dense_pool > 0 unless retrieve.mode is "bm25".
    # Offline default on_demand (erc2-dev + extra round, 2 cores: RESULTS.md "Chunk vectors on demand");
    # the gpu and openai presets store every vector (a GPU embeds 1,399 chunks/s).
    chunk_vectors: Literal["stored", "on_demand"] = "on_demand"


class RetrieveConfig(_Frozen):
    mode: Literal["dense", "bm25", "hybrid"] = "hybrid"
    # Which indexed chunk size retrieval reads.
    chunk_size: int = 300
    # 60 chunks (not 30) reach more distinct pages: erc2-dev hybrid gold-pool hit@10 0.77 -> 0.85.
    top_k_chunks: int = Field(60, ge=1)
    # Reciprocal rank fusion constant (score = sum 1 / (rrf_k + rank), rank 1-based).
    rrf_k: int = Field(60, ge=1)
    # Dense search ranks only the dense_pool best BM25 chunks of the BM25 query (0: every chunk of the report).
    # erc2-val, hybrid: 0 -> 100 moved hit@1/5/10 0.538/0.837/0.928 -> 0.558/0.857/0.935 (RESULTS.md).
    dense_pool: int = Field(100, ge=0)
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
    # FinanceBench's per-filing setting: a question whose questions.json entry names its own filing
    # ("filing": sha1, written by `rag import financebench` from doc_name) is routed to that filing alone,
    # whatever it names. Off (default): the shared setting, the pipeline routes itself (rag.retrieve.route).
    given_filing: bool = False


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
