"""Tables of stage 02: a parsed table -> :class:`rag.core.records.CleanTable` (title + unit line + grid),
and the optional LLM serialization of clean tables into standalone sentences.

Contract:
- ``clean_table(t, vocab, caption=, heading=, page_lines=, dollar=, cfg=, skip=, carry=) -> CleanTable``:
  cells cleaned with :func:`rag.clean.text.clean_text`, Markdown grid under the unit line of
  :func:`rag.clean.units.unit_line` (``Table: <title> — values in <scale> of <currency>``); scale and currency
  from :func:`rag.clean.units.detect_unit`; a unit-less table that opens its page with as many columns as
  ``carry`` (the previous page's last table) continues it and takes its unit.
- The title is the nearest context line that can name a table, else the caption, else the heading in
  effect; never a header/footer key (``skip``) nor a line that only states a unit.
- ``serialize_tables(report, cfg, llm=None) -> usage``: fills ``CleanTable.serialized`` (one sentence
  per value) of up to ``cfg.clean.serialize_max_tables`` tables in place; a failed table keeps None.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Any

from pydantic import BaseModel

from . import units
from .text import clean_text, edge_key, normalize_whitespace
from ..core.config import RunConfig
from ..parse.render import to_markdown
from ..core.records import CleanReport, CleanTable, ParsedTable

# ---- title and unit -------------------------------------------------------------------------------
# Words of a unit statement that say nothing about the table ("All amounts are expressed in …").
_UNIT_FILLER = {"all", "amounts", "amount", "figures", "values", "in", "of", "are", "is", "expressed", "stated",
                "unless", "otherwise", "indicated", "noted", "shown", "presented", "and", "the", "except", "for"}


def _unit_only(line: str) -> bool:
    """True for a line that states a unit and nothing else ("(In thousands, except per share data)")."""
    s = units.find_scale(line)
    c = units.find_currency(line)
    if not s and not c:
        return False
    rest = re.sub(r"(?i)\bexcept\b.*", "", line)
    for phrase in (s[1] if s else "", c[1] if c else ""):
        rest = rest.replace(phrase, " ") if phrase else rest
    words = [w for w in re.findall(r"[^\W\d_]+", rest.lower()) if w not in _UNIT_FILLER and len(w) > 1]
    return not words or (len(words) == 1 and units.find_currency(words[0]) is not None)


def _title_like(line: str, skip: set[str]) -> bool:
    """A line that can name a table: mostly words, not a sentence tail, header row or running header."""
    tokens = line.split()
    words = [t for t in tokens if re.search(r"[^\W\d_]{3}", t)]
    return (bool(tokens) and 2 * len(words) >= len(tokens) and not line[0].islower() and line[-1] not in ",;."
            and edge_key(line) not in skip and not _unit_only(line))


def _title(context: str, caption: str, heading: str, max_chars: int, skip: set[str] = frozenset()) -> str:
    """Nearest context line that can name the table (``_title_like``), else the caption, else the
    heading in effect; ``skip`` holds header/footer keys (``edge_key``) never used as a title."""
    lines = [x.strip() for x in context.splitlines() if x.strip()]
    title = next((ln for ln in reversed(lines) if _title_like(ln, skip)), "")
    title = re.sub(r"\s+", " ", title or caption or (heading if heading and _title_like(heading, skip) else "")).strip()
    return title if len(title) <= max_chars else title[: max_chars - 1].rstrip() + "…"


def _columns(markdown: str) -> int:
    sep = next((ln for ln in markdown.splitlines() if re.fullmatch(r"\|(?:\s*:?-{3,}:?\s*\|)+", ln.strip())), "")
    return sep.count("---")


def clean_table(t: ParsedTable, vocab: Counter, *, caption: str, heading: str, page_lines: list[str],
                dollar: str, cfg: RunConfig, skip: set[str] = frozenset(), carry: CleanTable | None = None) -> CleanTable:
    """Cleaned cells -> Markdown grid under a unit line; scale/currency from :func:`rag.clean.units.detect_unit`.

    ``carry``: the previous page's last table when this one opens its page; a table that states no
    unit and has as many columns continues it and takes its unit (a statement split over pages)."""
    cells = [[normalize_whitespace(clean_text(c, vocab)).replace("\n", " ") for c in row] for row in t.cells]
    context = clean_text(t.context_above, vocab)
    head = cells[: max(1, t.header_rows)] if cells else []
    body = cells[max(1, t.header_rows):]
    unit = units.detect_unit(context, [c for r in head for c in r], caption, page_lines,
                             [c for r in body for c in r], dollar)
    grid = to_markdown(cells, t.header_rows) if cells else clean_text(t.markdown, vocab)
    title = _title(context, caption, heading, cfg.clean.table_title_max_chars, skip)
    if (carry is not None and unit.scale is None and unit.currency is None and (carry.scale or carry.currency)
            and _columns(grid) == _columns(carry.markdown)):
        again = units.detect_unit(carry.unit_text, dollar=dollar)
        unit = units.Unit(carry.scale, carry.currency, carry.unit_text, again.exceptions, "previous page", "previous page")
    line = units.unit_line(title, unit)
    return CleanTable(table_id=t.table_id, page=t.page, markdown=line + "\n" + grid, html=t.html,
                      scale=unit.scale, currency=unit.currency, unit_text=unit.text)


# ---- serialization --------------------------------------------------------------------------------
class TableSentences(BaseModel):
    """LLM output of table serialization: standalone sentences, one per value."""
    sentences: list[str]


SERIALIZE_SYSTEM = (
    "You rewrite one table from a company's annual report as standalone factual sentences. Each sentence "
    "names the company or the subject, the line item (metric), the period or date, the value exactly as "
    "printed, and the unit and currency stated in the table's first line. One sentence per value; skip "
    "empty cells; never compute, round, convert or invent values. Answer with JSON: {\"sentences\": [...]}.")


def serialize_tables(report: CleanReport, cfg: RunConfig, llm=None) -> dict[str, int]:
    """Fill ``CleanTable.serialized`` of up to ``serialize_max_tables`` tables (in place) through
    ``rag.models.get_llm(cfg).complete_many``; returns token usage and counts (failed tables stay None)."""
    if llm is None:
        from ..models import get_llm

        llm = get_llm(cfg)
    tables = [t for p in report.pages for t in p.tables][: cfg.clean.serialize_max_tables]
    reqs = [{"messages": [{"role": "system", "content": SERIALIZE_SYSTEM},
                          {"role": "user", "content": f"Company: {report.company}\nPage: {t.page}\n\n"
                                                      f"{t.markdown[: cfg.clean.serialize_max_chars]}"}],
             "schema": TableSentences} for t in tables]
    try:
        results: list[Any] = llm.complete_many(reqs)
    except Exception:  # one failure raises for the batch: retry one by one (answers are cached)
        results = []
        for r in reqs:
            try:
                results.append(llm.complete(**r))
            except Exception as e:  # noqa: BLE001 - recorded, the table keeps serialized=None
                results.append(e)
    usage = {"prompt_tokens": 0, "completion_tokens": 0, "serialized_tables": 0, "serialize_failed": 0}
    for t, res in zip(tables, results):
        if isinstance(res, Exception):
            usage["serialize_failed"] += 1
            continue
        usage["prompt_tokens"] += res.usage.prompt_tokens
        usage["completion_tokens"] += res.usage.completion_tokens
        sentences = [s.strip() for s in res.value.sentences if s and s.strip()]
        if sentences:
            t.serialized = "\n".join(sentences)
            usage["serialized_tables"] += 1
    return usage
