"""The text around a Markdown grid of a clean page (stage 06, number questions): what the parser printed
outside the grid that belongs to it.

Contracts (a grid is named by its ``order`` on the page, as :func:`rag.answer.common.md_tables.parse_tables` gives it;
an order with no grid gives [] / "" / None):
- ``years_above(markdown, order, width) -> [(column, year)]``: the period header left above the grid (after a
  "Note" line the first value column holds note references; past a "should be read in conjunction with"
  footer), one year per value column, else [].
- ``years_below(markdown, order, width) -> [(column, year)]``: the same from the one text line right below it.
- ``text_above(markdown, order, lines, joined)``: the last text lines above it (up to the grid before it).
"""
from __future__ import annotations

import re

# ---- a period header lost above its grid ------------------------------------------------------------------
YEARS_ABOVE_LINES = 8  # text lines above a grid searched for the period header the parser left out of it
YEARS_LINE_WORDS = 4  # other words a period line may hold ("Fiscal Years Ended January 31,", "(In millions)")
_PERIOD_WORDS = frozenset("""fiscal year years ended ending end as of at in the and for millions thousands billions
amounts except per share data weeks january february march april may june july august september october november
december jan feb mar apr jun jul aug sep sept oct nov dec""".split())
# The statement's footer, which the parser can place between its period header and its grid.
_READ_WITH = re.compile(r"(?i)\bshould be read in conjunction with\b")
_YEAR_WORD = re.compile(r"(?<![\d.,$])((?:19|20)\d\d)(?!\d|\s?%)")  # "December 31, 2017," ends in a comma


def _grid_starts(lines: list[str]) -> list[int]:
    """Line index of each grid's first row, in page order (a grid's ``order`` indexes this list)."""
    return [i for i, ln in enumerate(lines) if ln.lstrip().startswith("|")
            and (i == 0 or not lines[i - 1].lstrip().startswith("|"))]


def _lines_above(markdown: str, order: int) -> list[str] | None:
    """The page's lines above the ``order``-th grid (its first row excluded); None when there is no such grid."""
    lines = (markdown or "").splitlines()
    starts = _grid_starts(lines)
    return lines[: starts[order]] if order < len(starts) else None


def years_above(markdown: str, order: int, width: int) -> list[tuple[int, int]]:
    """(column, year) for the ``order``-th grid of a page whose header row names no period, from the text lines
    right above it (at most :data:`YEARS_ABOVE_LINES`, a ``Table:`` line's printed unit phrase included):
    lines holding years and at most :data:`YEARS_LINE_WORDS` other words ("# December 28, 2019 December 29,
    2018", "2017" then "2016"), read upwards until they name ``width - 1`` years (one per value column, in
    print order; after a "Note(s)" line, ``width - 2`` years stand for the columns after the notes column);
    [] when they do not, or a table row or other text comes first."""
    above = _lines_above(markdown, order)
    if above is None or width < 2:
        return []
    years: list[int] = []
    seen = 0
    notes = False  # a "Note(s)" line above the years: the grid's first value column holds note references
    for ln in reversed(above):
        text = ln.strip()
        if not text:
            continue
        seen += 1
        if seen > YEARS_ABOVE_LINES or text.startswith("|"):
            break
        unit_line = text.startswith("Table:")
        if unit_line:
            text = text.partition("(as printed:")[2]
        found = [int(y) for y in _YEAR_WORD.findall(text)]
        other = [w for w in re.findall(r"[^\W\d_]+", text.lower()) if w not in _PERIOD_WORDS]
        if not found or len(other) > YEARS_LINE_WORDS:
            notes = notes or (bool(years) and other[:1] in (["note"], ["notes"]))
            if years or not (unit_line or text.startswith(("#", "(")) or _READ_WITH.search(text)):
                break  # text between the grid and any period line: not its header
            continue  # a heading or unit line between the period line and the grid
        years = found + years
        if len(years) >= width - 1:
            break
    first = 2 if notes and len(years) == width - 2 else 1  # "Note 2022 2021" over four columns
    if len(years) != width - first or len(set(years)) != len(years):
        return []
    return [(c + first, y) for c, y in enumerate(years)]


def years_below(markdown: str, order: int, width: int) -> list[tuple[int, int]]:
    """(column, year) for the ``order``-th grid from the first text line right below it, when that line holds
    exactly ``width - 1`` distinct years and only period words ("Year Ended December 31, 2022 December 31, 2021
    December 31, 2020 (In thousands)": a header the parser printed after its grid); [] otherwise."""
    lines = (markdown or "").splitlines()
    starts = _grid_starts(lines)
    if order >= len(starts) or width < 2:
        return []
    i = starts[order]
    while i < len(lines) and lines[i].lstrip().startswith("|"):
        i += 1
    below = next((ln.strip() for ln in lines[i:] if ln.strip()), "")
    years = [int(y) for y in _YEAR_WORD.findall(below)]
    other = [w for w in re.findall(r"[^\W\d_]+", below.lower()) if w not in _PERIOD_WORDS]
    if len(years) != width - 1 or len(set(years)) != len(years) or other:
        return []
    return [(c + 1, y) for c, y in enumerate(years)]


def text_above(markdown: str, order: int, lines: int = 3, joined: bool = True) -> str | list[str]:
    """The last ``lines`` non-empty text lines above the ``order``-th grid of a page (up to the grid before
    it), joined: the sentence that says what a grid without a title holds ("The following table indicates the
    amount incurred for each of our significant research programs"); ``joined=False``: the lines, top first."""
    above = _lines_above(markdown, order)
    out: list[str] = []
    for ln in reversed(above or []):
        if ln.lstrip().startswith("|") or len(out) >= lines:
            break
        if ln.strip() and not ln.lstrip().startswith("Table:"):
            out.append(ln.strip())
    return " ".join(reversed(out)) if joined else out[::-1]
