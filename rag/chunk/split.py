"""Splitting of stage 03 (pure functions): page Markdown -> text and table segments -> pieces that fit
a token budget.

Contract:
- ``split_page(markdown, tables, heading) -> (segments, heading after)``: the page cut into text and
  table segments in reading order, each with the Markdown heading in effect at its start.
- ``atoms(text, budget, count)``: ``text`` split recursively (paragraphs -> lines -> sentences -> words,
  a word over budget cut by characters) into (separator, text) atoms of at most ``budget`` tokens.
- ``pack(atoms, budget, overlap, count, prefix="")``: atoms greedily packed into texts of at most
  ``budget`` tokens (exact count), each after the first opening with up to ``overlap`` tokens of whole
  trailing atoms of the previous one.
- ``table_pieces(table_md, unit_text, budget, count)``: a table split between rows, its leading lines
  (title / unit line) and header row + separator repeated in every piece; a row over budget is kept whole.
``count`` is a token counter (``rag.chunk.token_counter``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from ..core.records import CleanTable

Counter = Callable[[str], int]

# Sentence end: ., ! or ? (optionally closed by a quote/bracket) followed by whitespace and a capital,
# digit or opening quote/bracket. Avoids splitting "1.5" or "U.S. dollars" in most cases.
_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+(?=[\"'(\[A-Z0-9])")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*\S)\s*$")
_GRID_LINE = re.compile(r"^\s*\|")


# ---- page text -> text parts and tables ---------------------------------------------------------------
@dataclass
class _Segment:
    kind: str  # "text" | "table"
    text: str
    heading: str  # heading in effect at the segment's start
    table: CleanTable | None = None


def split_page(markdown: str, tables: list[CleanTable], heading: str) -> tuple[list[_Segment], str]:
    """Cut a page's Markdown into text and table segments in reading order.

    Each ``CleanTable`` is looked up by its exact Markdown (or its grid) in the page; grids found in
    the page text that match no ``CleanTable`` become table segments of their own. Tables absent from
    the page text are appended at the end. Returns the segments and the heading in effect after the page.
    """
    spans: list[tuple[int, int, CleanTable | None]] = []
    for t in tables:
        for needle in (t.markdown, _grid_of(t.markdown)):
            pos = markdown.find(needle) if needle else -1
            if pos >= 0 and not any(a <= pos < b for a, b, _ in spans):
                spans.append((pos, pos + len(needle), t))
                break
        else:
            spans.append((len(markdown), len(markdown), t))
    spans.sort(key=lambda s: s[0])
    segments: list[_Segment] = []
    cursor = 0
    for start, end, table in spans:
        heading = _text_segments(markdown[cursor:start], heading, segments)
        segments.append(_Segment("table", table.markdown, heading, table))
        cursor = max(cursor, end)
    heading = _text_segments(markdown[cursor:], heading, segments)
    return segments, heading


def _grid_of(table_md: str) -> str:
    lines = table_md.splitlines()
    grid = [ln for ln in lines if _GRID_LINE.match(ln)]
    return "\n".join(grid) if grid else ""


def _text_segments(text: str, heading: str, out: list[_Segment]) -> str:
    """Append text segments of ``text`` to ``out``, lifting stray Markdown grids out as tables."""
    buf: list[str] = []
    grid: list[str] = []

    def flush_text() -> None:
        if "".join(buf).strip():
            out.append(_Segment("text", "\n".join(buf).strip("\n"), start_heading[0]))
        buf.clear()

    def flush_grid() -> None:
        if grid:
            out.append(_Segment("table", "\n".join(grid), heading_now[0]))
            grid.clear()

    start_heading = [heading]
    heading_now = [heading]
    for line in text.split("\n"):
        if _GRID_LINE.match(line):
            if not grid:
                flush_text()
            grid.append(line)
            continue
        if grid:
            flush_grid()
            start_heading[0] = heading_now[0]
        m = _HEADING.match(line)
        if m:
            heading_now[0] = m.group(1).strip()
            if not "".join(buf).strip():
                start_heading[0] = heading_now[0]
        buf.append(line)
    flush_grid()
    flush_text()
    return heading_now[0]


# ---- recursive text splitting -----------------------------------------------------------------------
# An atom is (separator placed before it when joined, text). Levels: paragraphs, lines, sentences, words.
_LEVELS = ("\n\n", "\n", "sentence", " ")
Atom = tuple[str, str]


def _split_level(text: str, level: int) -> list[str]:
    sep = _LEVELS[level]
    if sep == "sentence":
        return [p for p in _SENTENCE_END.split(text) if p.strip()]
    if sep == "\n\n":
        return [p.strip("\n") for p in re.split(r"\n[ \t]*\n", text) if p.strip()]
    return [p for p in text.split(sep) if p.strip()]


def atoms(text: str, budget: int, count: Counter, level: int = 0, sep_before: str = "") -> list[Atom]:
    """Split ``text`` recursively (paragraphs -> lines -> sentences -> words) into atoms of at most
    ``budget`` tokens. Paragraphs and lines are always split down to sentences (so the overlap is made
    of whole sentences); a sentence over budget is split into words; a word over budget (a long URL)
    is cut by characters, the only cut inside a word."""
    name = _LEVELS[level]
    if name == " ":
        out: list[Atom] = []
        for i, word in enumerate(text.split()):
            sep = sep_before if i == 0 else " "
            out.extend(_char_pieces(word, budget, count, sep) if count(word) > budget else [(sep, word)])
        return out
    out = []
    for i, part in enumerate(_split_level(text, level)):
        sep = sep_before if i == 0 else (" " if name == "sentence" else name)
        if name == "sentence" and count(part) <= budget:
            out.append((sep, part))
        else:
            out.extend(atoms(part, budget, count, level + 1, sep))
    return out


def _char_pieces(word: str, budget: int, count: Counter, sep_before: str) -> list[Atom]:
    out, rest = [], word
    while rest:
        n = len(rest)
        while n > 1 and count(rest[:n]) > budget:
            n = n * 3 // 4
        out.append((sep_before if not out else "", rest[:n]))
        rest = rest[n:]
    return out


def _join(parts: list[Atom], prefix: str = "") -> str:
    body = "".join((sep if i else "") + txt for i, (sep, txt) in enumerate(parts))
    return prefix + body


def pack(parts: list[Atom], budget: int, overlap: int, count: Counter, prefix: str = "") -> list[str]:
    """Greedily pack atoms into texts ``prefix + atoms`` of at most ``budget`` tokens (exact count);
    each text after the first starts with whole trailing atoms of the previous one holding at most
    ``overlap`` tokens (never all of it). An atom that alone exceeds the budget gets a text of its own.

    Sizes are first estimated by summing per-atom counts (cheap), then checked exactly when a text is
    closed; atoms that push it over are handed back to the next text."""
    texts: list[str] = []
    base = count(prefix) if prefix else 0
    i = 0
    carry: list[Atom] = []  # overlap atoms opening the next text
    while i < len(parts):
        cur = list(carry)
        est = base + sum(count(sep + t) for sep, t in cur)
        first_new = len(cur)
        while i < len(parts):
            sep, t = parts[i]
            add = count((sep if cur else "") + t)
            if len(cur) > first_new and est + add > budget:
                break
            if len(cur) == first_new and cur and est + add > budget:
                cur, est, first_new = [], base, 0  # overlap + this atom do not fit: drop the overlap
                add = count(t)
            cur.append(parts[i])
            est += add
            i += 1
        while len(cur) > first_new + 1 and count(_join(cur, prefix)) > budget:
            cur.pop()
            i -= 1
        texts.append(_join(cur, prefix))
        carry = []
        for atom in reversed(cur[max(first_new, 1):]):
            if count(_join([atom] + carry)) > overlap:
                break
            carry.insert(0, atom)
        if overlap <= 0:
            carry = []
    return texts


# ---- tables ------------------------------------------------------------------------------------------
def table_pieces(table_md: str, unit_text: str, budget: int, count: Counter) -> list[str]:
    """Split a table's Markdown between rows; every piece repeats the lines above the grid (title,
    unit line), ``unit_text`` when those lines lack it, and the grid's header row + separator.
    A row that alone exceeds the budget is a piece of its own (over budget, never cut)."""
    lines = [ln for ln in table_md.split("\n") if ln.strip()]
    first_grid = next((i for i, ln in enumerate(lines) if _GRID_LINE.match(ln)), len(lines))
    above = lines[:first_grid]
    if unit_text and not any(unit_text in ln for ln in above):
        above.append(unit_text)
    grid = lines[first_grid:]
    n_head = 2 if len(grid) >= 2 and re.fullmatch(r"\s*\|[\s:|-]*", grid[1]) else min(1, len(grid))
    prefix_lines = above + grid[:n_head]
    rows = grid[n_head:]
    if not rows:
        return ["\n".join(prefix_lines)]
    return pack([("\n", r) for r in rows], budget, 0, count, prefix="\n".join(prefix_lines) + "\n")
