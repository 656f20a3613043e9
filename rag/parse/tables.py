"""Rebuild tables (and text blocks) from a PDF page's word cells, without any model.

Used by the model-free parse path: docling's NativePdfPipeline gives positioned words and text
lines but no table objects. The recipe:

1. group words into *rows*: words whose vertical centres lie within ``row_tolerance_pt`` points;
2. split each row into *segments* at horizontal gaps >= ``column_gap_pt`` points;
3. a run of rows with >= 2 segments, vertically close, holding at least ``min_table_rows`` rows
   with a number, is a table; single-segment rows sandwiched inside such a run (sub-headings like
   "Current assets:") belong to it;
4. columns = x-intervals clustered over the data rows (union of overlapping segment spans), so a
   cell keeps its column across rows even when some rows leave columns empty;
5. header: a text row directly above the run whose segments fall into the columns joins as the
   first row; ``header_rows`` is 1 when the first row carries no amount in its label column.

Coordinates: PDF points, origin top-left, y grows downwards (as ``rag.core.records``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# A table cell that is an amount: optional sign/bracket/currency, digits with separators, optional
# decimals, closing bracket and percent. Years ("2023") match too, which is what header detection wants.
_NUMBER = re.compile(r"^[\(\-–—−+]?\s?[$€£¥]?\s?\(?\d[\d,.\s']*\)?\s?%?\)?$")
_NIL = {"-", "–", "—", "−", "nil", "n/a", "—  ", "$—", "$ —", "$-"}
# Currency signs printed apart from their amount (codes like "EUR" are left out: they occur in prose).
_SIGNS = {"$", "€", "£", "¥", "US$", "C$", "A$", "R$", "S$", "HK$"}
_YEAR = re.compile(r"^(19|20)\d\d$")
# A column title naming a period: "2022", "FY2022", "2021/22", "31 Dec 2022", "December 31, 2022",
# "2022 $" - a year and at most a few short words, no amounts.
_PERIOD = re.compile(r"^(?:(?:FY|H[12]|Q[1-4])\s?)?(?:\d{1,2}\s)?(?:[A-Za-z]{3,9}\.?\s)?(?:\d{1,2},?\s)?"
                     r"(?:19|20)\d\d(?:\s?[/-]\s?\d{2,4})?(?:\s?[$€£¥]|\s[A-Z]{3})?$")


@dataclass
class Word:
    text: str
    l: float
    t: float
    r: float
    b: float

    @property
    def yc(self) -> float:
        return (self.t + self.b) / 2


@dataclass
class Segment:
    """Words of one row closer than the column gap: one cell candidate."""
    text: str
    l: float
    r: float


@dataclass
class Row:
    words: list[Word]
    t: float
    b: float
    segments: list[Segment] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.segments)

    @property
    def l(self) -> float:
        return min(s.l for s in self.segments)

    @property
    def r(self) -> float:
        return max(s.r for s in self.segments)


@dataclass
class Table:
    rows: list[list[str]]
    bbox: tuple[float, float, float, float]
    header_rows: int
    context_above: str
    row_span: tuple[int, int]  # indices into the page's row list, [start, end)


def is_number(text: str) -> bool:
    s = text.strip()
    return bool(s) and any(c.isdigit() for c in s) and bool(_NUMBER.match(s))


def is_amount_or_nil(text: str) -> bool:
    return is_number(text) or text.strip().lower() in _NIL


def group_rows(words: list[Word], row_tolerance_pt: float, column_gap_pt: float,
               number_gap_pt: float | None = None) -> list[Row]:
    """Words -> rows (top to bottom), each split into segments at gaps >= ``column_gap_pt``.

    Two numbers side by side split already at ``number_gap_pt`` (narrow sub-columns of amounts); a
    lone currency sign ("$") always opens a segment and takes the next word with it ("$ 9,226").
    """
    number_gap_pt = column_gap_pt if number_gap_pt is None else number_gap_pt
    rows: list[Row] = []
    for w in sorted(words, key=lambda w: (w.yc, w.l)):
        if rows and abs(w.yc - (rows[-1].t + rows[-1].b) / 2) <= row_tolerance_pt:
            row = rows[-1]
            row.words.append(w)
            row.t, row.b = min(row.t, w.t), max(row.b, w.b)
        else:
            rows.append(Row(words=[w], t=w.t, b=w.b))
    for row in rows:
        row.words.sort(key=lambda w: w.l)
        segs: list[Segment] = []
        sign_open = False  # the last segment is a lone currency sign waiting for its amount
        for w in row.words:
            gap = w.l - segs[-1].r if segs else 0.0
            last = segs[-1].text.split()[-1] if segs else ""
            joins = segs and (sign_open or (gap < column_gap_pt and w.text not in _SIGNS and not (
                gap >= number_gap_pt and is_number(w.text) and is_amount_or_nil(last))))
            if joins:
                s = segs[-1]
                s.text, s.r = s.text + " " + w.text, max(s.r, w.r)
            else:
                segs.append(Segment(w.text, w.l, w.r))
            sign_open = w.text in _SIGNS
        row.segments = segs
    return rows


def _numeric_row(row: Row) -> bool:
    return len(row.segments) >= 2 and any(is_number(s.text) for s in row.segments[1:])


def _columns(rows: list[Row]) -> list[tuple[float, float]]:
    """Column x-intervals: union of overlapping segment spans over the data rows.

    Only rows holding a number count (header cells often span several columns and would merge
    them); header and label rows are then placed by overlap in :func:`_assign`.
    """
    data = [row for row in rows if _numeric_row(row)] or [row for row in rows if len(row.segments) >= 2]
    spans = sorted((s.l, s.r) for row in data for s in row.segments)
    cols: list[list[float]] = []
    for l, r in spans:
        if cols and l <= cols[-1][1]:
            cols[-1][1] = max(cols[-1][1], r)
        else:
            cols.append([l, r])
    return [(l, r) for l, r in cols]


def _assign(seg: Segment, cols: list[tuple[float, float]]) -> int:
    """Column with the largest overlap; else the nearest by centre distance."""
    best, best_ov = -1, 0.0
    for i, (l, r) in enumerate(cols):
        ov = min(r, seg.r) - max(l, seg.l)
        if ov > best_ov:
            best, best_ov = i, ov
    if best >= 0:
        return best
    c = (seg.l + seg.r) / 2
    return min(range(len(cols)), key=lambda i: abs((cols[i][0] + cols[i][1]) / 2 - c))


def _fits_columns(row: Row, cols: list[tuple[float, float]], slack: float) -> bool:
    """Every segment of ``row`` lies within the table's x-extent and no two share a column."""
    if len(row.segments) < 2:
        return False
    lo, hi = cols[0][0] - slack, cols[-1][1] + slack
    used = [_assign(s, cols) for s in row.segments]
    return all(lo <= s.l and s.r <= hi for s in row.segments) and len(set(used)) == len(used)


def _is_section_label(row: Row, first: Row, cols: list[tuple[float, float]], slack: float,
                      run: list[Row], title_size_ratio: float) -> bool:
    if len(row.segments) != 1 or not _numeric_row(first) or first.segments[0].l > cols[0][1]:
        return False
    seg = row.segments[0]
    heights = sorted(r.b - r.t for r in run)
    body = heights[len(heights) // 2]
    return (abs(seg.l - cols[0][0]) <= slack and seg.r <= cols[0][1] + slack and not is_number(seg.text)
            and not seg.text.startswith("(") and row.b - row.t < body * title_size_ratio)


def is_period_row(row: Row) -> bool:
    """Every segment of a multi-segment row is a period label ("2022", "FY2021", "31 Dec 2022")."""
    return len(row.segments) >= 2 and all(_PERIOD.match(s.text.strip()) for s in row.segments)


def _period_header_above(rows: list[Row], start: int, floor: int, cols: list[tuple[float, float]],
                         max_row_gap_pt: float, slack: float, skip_rows: int) -> int | None:
    """Index of a period-label row above ``rows[start]`` separated from it only by up to
    ``skip_rows`` one-cell rows (unit line, "Year Ended December 31,"), each gap at most
    ``max_row_gap_pt``; None when there is none. Rows before ``floor`` belong to an earlier table."""
    k = start - 1
    while k >= floor and k >= start - 1 - skip_rows:
        if rows[k + 1].t - rows[k].b > max_row_gap_pt:
            return None
        if is_period_row(rows[k]):
            return k if _fits_columns(rows[k], cols, slack) else None
        if len(rows[k].segments) != 1:
            return None
        k -= 1
    return None


def find_tables(rows: list[Row], *, min_table_rows: int, max_row_gap_pt: float, column_gap_pt: float,
                context_lines: int, title_size_ratio: float = 1.25, period_header_skip_rows: int = 0) -> list[Table]:
    """Find table runs among ``rows`` (sorted top to bottom) and build their cell grids.

    ``title_size_ratio``: a one-cell row at least this many times the run's median row height is a
    title (kept as context), not a section label of the table. ``period_header_skip_rows``: a table
    with no header row directly above looks this many one-cell rows further up for its period labels
    (see :func:`_period_header_above`); the rows skipped stay in ``context_above``.
    """
    tables: list[Table] = []
    i, n = 0, len(rows)
    used_until = 0
    while i < n:
        if len(rows[i].segments) < 2:
            i += 1
            continue
        # Grow a run of multi-segment rows; a single-segment row may sit inside when the row after
        # it continues the run (sub-headings inside a statement).
        j = i + 1
        while j < n and rows[j].t - rows[j - 1].b <= max_row_gap_pt:
            if len(rows[j].segments) >= 2:
                j += 1
            elif (j + 1 < n and len(rows[j + 1].segments) >= 2
                  and rows[j + 1].t - rows[j].b <= max_row_gap_pt):
                j += 1
            else:
                break
        while j > i and not _numeric_row(rows[j - 1]):  # a table ends with its last row of numbers
            j -= 1
        if j == i:
            i += 1
            continue
        run = rows[i:j]
        if sum(_numeric_row(r) for r in run) < min_table_rows:
            i = j
            continue
        cols = _columns(run)
        start, joined_header = i, False
        # A text header row directly above (e.g. "Note  2023  2022" with no number, or column
        # titles) joins when it aligns with the columns.
        if (start - 1 >= used_until and rows[start].t - rows[start - 1].b <= max_row_gap_pt
                and _fits_columns(rows[start - 1], cols, column_gap_pt)):
            start -= 1
            cols = _columns(rows[start:j])
            joined_header = True
        # A section label directly above a headerless run ("Financing activities" opening the second
        # page of a split statement) joins too: left-aligned with the label column, body-sized (not
        # a larger title), not a unit line "(in ...)", and the run's first row is a data row.
        elif (start - 1 >= used_until and rows[start].t - rows[start - 1].b <= max_row_gap_pt
              and _is_section_label(rows[start - 1], rows[start], cols, column_gap_pt, run, title_size_ratio)):
            start -= 1
        # Otherwise the period labels may sit a few one-cell rows higher, above the unit line:
        # "2022 2021 2020" / "(Dollars in millions)" / table. Without them the columns have no years.
        h = None
        if not joined_header and period_header_skip_rows:
            h = _period_header_above(rows, start, used_until, cols, max_row_gap_pt, column_gap_pt,
                                     period_header_skip_rows)
        top = start if h is None else h  # first row inside the table's box
        between = [] if h is None else rows[h + 1:start]  # the unit line(s) under the period labels
        grid = []
        for row in ([] if h is None else [rows[h]]) + rows[start:j]:
            cells = [""] * len(cols)
            for s in row.segments:
                k = _assign(s, cols)
                cells[k] = (cells[k] + " " + s.text).strip()
            grid.append(cells)
        # Header: the first row when its label cell is empty ("", 2023, 2022) or its other cells
        # hold text but no amount (years allowed); a lone label ("Financing activities") is not one.
        first = grid[0]
        amounts = any(is_amount_or_nil(c) and not _YEAR.match(c.strip()) for c in first[1:])
        header_rows = 1 if (first[0] == "" or (any(first[1:]) and not amounts)) else 0
        sel = rows[top:j]
        bbox = (min(r.l for r in sel), sel[0].t, max(r.r for r in sel), sel[-1].b)
        above = [r.text for r in rows[max(used_until, top - context_lines):top]
                 if sel[0].t - r.b <= max_row_gap_pt * context_lines]
        # Rows skipped between the period labels and the body (the unit line) are inside the box now:
        # keep them as context, where the cleaner reads a table's unit from.
        above += [r.text for r in between]
        tables.append(Table(rows=grid, bbox=bbox, header_rows=header_rows,
                            context_above="\n".join(above), row_span=(top, j)))
        used_until = j
        i = j
    return tables

