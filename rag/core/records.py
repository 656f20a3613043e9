"""Typed records passed between stages (and stored as their JSON artifacts).

Page convention: ``page`` is the 1-based physical page number everywhere in these records.
Bounding boxes are in PDF points with the origin at the page's top-left (y grows downwards).
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class _Rec(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---- 01_parse ----------------------------------------------------------------------------
class TextBlock(_Rec):
    kind: Literal["text", "heading", "caption", "list_item", "footer", "header", "other"] = "text"
    text: str
    bbox: tuple[float, float, float, float] | None = None  # (left, top, right, bottom), points


class ParsedTable(_Rec):
    table_id: str  # "<page>-<n>", n counting from 0 on the page
    page: int  # 1-based
    cells: list[list[str]]  # row-major grid; first row is the header when ``header_rows`` > 0
    header_rows: int = 1
    markdown: str
    html: str
    bbox: tuple[float, float, float, float] | None = None
    # Text lines just above the table (title, "(in thousands)"…), kept for unit detection.
    context_above: str = ""
    # Index of this table's first block in reading order on the page (tables sit between blocks).
    block_index: int = 0


class PageMetrics(_Rec):
    chars: int
    garbled_ratio: float  # share of characters that are glyph artefacts / non-word noise, 0..1
    words: int = 0


class ParsedPage(_Rec):
    page: int  # 1-based
    width: float = 0.0
    height: float = 0.0
    blocks: list[TextBlock] = Field(default_factory=list)  # reading order
    tables: list[ParsedTable] = Field(default_factory=list)
    metrics: PageMetrics


class ParsedReport(_Rec):
    sha1: str
    pdf: str
    pipeline: Literal["standard", "native"]
    n_pages: int
    # Parse time (in memory, for the item record): excluded from the written JSON so that two parses of
    # one PDF give identical bytes.
    seconds: float | None = Field(None, exclude=True)
    pages: list[ParsedPage]


# ---- 02_clean ----------------------------------------------------------------------------
class CleanTable(_Rec):
    table_id: str
    page: int  # 1-based
    markdown: str  # header line with unit/currency first, then the Markdown grid
    html: str
    scale: int | None = None  # 1, 1_000, 1_000_000, 1_000_000_000 (None: not stated)
    currency: str | None = None  # ISO code when found ("USD", "EUR"…)
    unit_text: str = ""  # the phrase the unit was read from, e.g. "(in thousands)"
    serialized: str | None = None  # optional LLM sentences


class CleanPage(_Rec):
    page: int  # 1-based
    markdown: str  # whole page: headings, text and tables in reading order
    tables: list[CleanTable] = Field(default_factory=list)
    ocr: bool = False
    garbled_ratio: float = 0.0


class CleanReport(_Rec):
    sha1: str
    company: str
    pages: list[CleanPage]
    ocr_pages: list[int] = Field(default_factory=list)


# ---- 03_chunk ----------------------------------------------------------------------------
class Chunk(_Rec):
    chunk_id: str  # "<sha1[:8]>-s<size>-p<page>-<n>"
    sha1: str
    page: int  # 1-based
    size: int  # the configured chunk size this chunk was made for
    kind: Literal["text", "table", "serialized_table"]
    text: str  # what is embedded and indexed (context header included when configured)
    tokens: int  # cl100k tokens of ``text``
    heading: str = ""
    table_id: str | None = None


# ---- 04_index ----------------------------------------------------------------------------
class IndexInfo(_Rec):
    """``<sha1>.s<size>.meta.json``: what one (report, size) index was built from."""

    sha1: str
    size: int
    model_name: str
    dim: int
    embed: dict[str, Any]  # the embed config fields that change the vectors
    chunks: int  # row i of both indexes = line i of the chunk file
    # False: built with index.chunk_vectors="on_demand" (an empty FAISS index; stage 05 embeds what it ranks).
    vectors: bool = True
    chunk_file: str
    chunk_key: str = ""  # 03's currency key of the chunk file
    chunk_sha256: str | None = None  # sha256 of the chunk file the index rows come from
    bm25_files: list[str] = Field(default_factory=list)
    bm25_stemmer: str = "none"  # how the BM25 words were stemmed (queries must match)
    embed_seconds: float = Field(0.0, exclude=True)  # timing goes to the item record, not the index files
    code_version: str = ""


# ---- 05_retrieve -------------------------------------------------------------------------
SCORE_KEYS = ("dense", "bm25", "fused", "retrieval", "llm", "final")


class CandidatePage(BaseModel):
    """One page proposed as evidence for a question (``page`` is 1-based)."""

    sha1: str
    page: int
    text: str  # the full clean page Markdown (02_clean)
    chunk_ids: list[str] = Field(default_factory=list)  # the retrieved chunks on this page, best first
    # dense: best chunk cosine; bm25: best chunk BM25; fused: best chunk RRF score (None when the mode
    # did not compute it); retrieval: page score normalized to [0, 1]; llm: reranker relevance in [0, 1]
    # (None when not reranked); final: what the page list is sorted by. Higher = better for all.
    scores: dict[str, float | None] = Field(default_factory=lambda: {k: None for k in SCORE_KEYS})
    reason: str = ""  # the reranker's short reason (empty without LLM reranking)
    # what the page was added as: a financial statement (rag.retrieve.statements: "balance_sheet"...) or a page
    # printing an asked count (rag.retrieve.counts: "count:employees"...); "" = searched
    statement: str = ""

    @field_validator("scores")
    @classmethod
    def _all_keys(cls, v: dict[str, float | None]) -> dict[str, float | None]:
        return {**{k: None for k in SCORE_KEYS}, **v}


class RoutedReport(_Rec):
    sha1: str
    company: str
    filing: str = ""  # "3M 10-K 2018" when subset.csv gives period / doc_type
    why: str = ""  # why this filing of the company (rag.retrieve.filing), "" when it has one report


class RetrievalRecord(_Rec):
    """``05_retrieve/<qid>.json``: one question's routing, sub-questions and ranked candidate pages.

    ``candidates`` {sha1: pages best first by ``scores["final"]``}; ``sub_questions`` {sha1: text} for
    comparative questions (one per company, each retrieved in its own report); ``search`` {sha1: the
    search as run}; ``usage`` the model layer's usage dict (query expansion + LLM reranking).
    """

    qid: str
    question: str
    kind: str
    routed: list[RoutedReport] = Field(default_factory=list)
    routing: str = "ok"  # rag.retrieve.route.routing_status: "ok" | "unrouted" | "ambiguous"; "content": by_content
    sub_questions: dict[str, str] = Field(default_factory=dict)
    candidates: dict[str, list[CandidatePage]] = Field(default_factory=dict)
    search: dict[str, dict[str, Any]] = Field(default_factory=dict)
    usage: dict[str, Any] = Field(default_factory=dict)
    seconds: float | None = None

    @property
    def routed_sha1s(self) -> list[str]:
        return [r.sha1 for r in self.routed]


# ---- 06_answer ---------------------------------------------------------------------------
class AnswerRecord(BaseModel):
    """``06_answer/debug/<qid>.json``: one question's answer with everything that led to it.

    Typed here are the fields every record has; the rest (``calls``, ``sub_answers``, ``interpretation``,
    ``sanity``, ``pick_call``…, depending on the answer kind) are kept as they were written.
    """

    model_config = ConfigDict(extra="allow")

    qid: str
    question_text: str = ""
    kind: str = ""
    value: Any = None
    references: list[dict[str, Any]] = Field(default_factory=list)
    na_reason: str | None = None
    routed: list[str] = Field(default_factory=list)
    retrieved: list[dict[str, Any]] = Field(default_factory=list)
    prompt_version: dict[str, str] = Field(default_factory=dict)
    usage: dict[str, Any] = Field(default_factory=dict)
    n_calls: int = 0
    repaired: bool = False
    seconds: float | None = None
    code_version: str = ""
