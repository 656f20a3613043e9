"""Markdown tables of clean pages, and the periods their columns name (stage 06, number questions).

Contracts:
- ``parse_tables(markdown) -> list[MdTable]``: the Markdown grids of a clean page (``rag.clean``: a
  ``Table: <title> — values in <scale> of <currency>`` line, then ``| a | b |`` rows) with their title
  line; body rows that only hold periods ("2022", "FY2021") join the header.
- ``column_year(text) -> int | None``: the one period year a column header names ("December 31,
  2022", "FY22", "2021/22" -> 2022); None for none or several ("2022 vs 2021").
- Statement rows the parser turned into headings ("# Total assets" then "# 12,778,147": a bold total row
  of a printed statement) come back as one more grid per page, after the real ones (``order`` past them),
  dated by the page's latest year heading ("# 2022", the bold current column) when it has one.
- A first column of list bullets ("| • | Net asset value per share | 11.3 p |") is dropped; pence and cents
  ("11.3 p") are amounts.
- The text around a grid (a period header printed above or below it, its heading lines):
  :mod:`rag.answer.numbers.grid_context`.
- ``MdTable.plain_title()`` / ``MdTable.value_columns()``: the title without "Table:" and its unit note; the
  header text over each value column (what the text answers show and rank by).
- ``report_year(tables) -> int | None``: the report's period end year: the most common latest header
  year over the tables (a debt-maturity table listing 2027 does not move it).
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

HEADER_TEXT_ROWS = 3  # rows of header text ("Year ended", "March 31,") a period row may follow at a body's top
SCHEDULE_COLUMNS = 3  # ascending dated columns from this many on: a schedule (see _schedule)


# ---- Markdown tables ------------------------------------------------------------------------------------
@dataclass
class MdTable:
    title: str  # the clean stage's "Table: ..." line ("" when the grid has none)
    header: list[list[str]]  # header rows (the grid's first row + period-only body rows)
    rows: list[list[str]]  # body rows
    order: int = 0  # position on its page

    def plain_title(self) -> str:
        """The title without its "Table:" mark and the unit note ("— values in millions of USD"), which the cells
        carry."""
        title = re.sub(r"^Table:\s*", "", self.title).strip()
        return re.sub(r"\s*—\s*values in .*$", "", title) or title

    def value_columns(self) -> list[str]:
        """The header text over each value column (every column after the label), its header rows joined."""
        ncol = max((len(r) for r in self.rows), default=0)
        return [" ".join(h[i] for h in self.header if i < len(h) and h[i]).strip() for i in range(1, ncol)]


_SEP = re.compile(r"^\|(?:\s*:?-{3,}:?\s*\|)+\s*$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_YEAR = re.compile(r"(?<![\d.,])((?:19|20)\d\d)(?![\d.,]|\s?%)")
_FISCAL = re.compile(r"(?<!\d)(?:19|20)\d\d\s?[/-]\s?(\d\d)(?!\d)")
_FISCAL4 = re.compile(r"(?<!\d)((?:19|20)\d\d)\s?[/-]\s?((?:19|20)\d\d)(?!\d)")
_BARE_YEAR = re.compile(r"(?:19|20)\d\d")  # a cell or line that is a year and nothing else (fullmatch)
_FY = re.compile(r"(?i)\bFY\s?'?(\d\d)\b")
_SIGNS = re.compile(r"^(?:US\$|A\$|C\$|NZ\$|HK\$|S\$|R\$|[$€£¥₹])\s*|\s*(?:US\$|[$€£¥])$")
_LEADERS = re.compile(r"^(.*?[^\W\d_)].*?)\s*(?:\.\s?){3,}\s*(.*)$")
_NIL = {"-", "–", "—", "−", "nil", "n/a", "—-", "--"}
# an amount, a percentage, or pence / cents ("11.3 p": a per-share figure of a UK or Australian report)
_AMOUNT = re.compile(r"^[(\-–—−+]?\s?\(?\d[\d,.\s'\u202f\u00a0]*\)?\s?(?:%|p|c|pence|cents)?\)?$")


def _cells(line: str) -> list[str]:
    s = line.strip()
    s = s[1:] if s.startswith("|") else s
    s = s[:-1] if s.endswith("|") and not s.endswith("\\|") else s
    return [c.strip().replace("\\|", "|") for c in _CELL_SPLIT.split(s)]


def parse_tables(markdown: str, lookback: int = 3) -> list[MdTable]:
    """Markdown grids of a page with their ``Table:`` line (within ``lookback`` non-empty lines above)."""
    lines = (markdown or "").splitlines()
    out: list[MdTable] = []
    i = 0
    while i < len(lines):
        if not lines[i].lstrip().startswith("|"):
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].lstrip().startswith("|"):
            j += 1
        grid = [ln for ln in lines[i:j]]
        above = [ln.strip() for ln in lines[max(0, i - 2 * lookback): i] if ln.strip()][-lookback:]
        title = next((ln for ln in reversed(above) if ln.startswith("Table:")), "")
        sep = next((k for k, ln in enumerate(grid) if _SEP.match(ln.strip())), None)
        head = [_cells(ln) for ln in grid[:sep]] if sep is not None else []
        body = [_cells(ln) for ln in (grid[sep + 1:] if sep is not None else grid)]
        # Period-only rows at the top of the body ("| | 2022 | 2021 |") belong to the header.
        while body and _period_row(body[0]):
            head.append(body.pop(0))
        lead = next((k for k, r in enumerate(body[:HEADER_TEXT_ROWS + 1]) if not _top_text_row(r)), 0)
        if lead and lead < len(body) and _period_row(body[lead]):  # "Year ended" / "March 31," / "2021 | 2022"
            end = lead + 1  # through the period rows, not a section's caption right below them ("Assets:")
            while end < len(body) and (_period_row(body[end]) or _header_text_row(body[end])):
                end += 1
            head.extend(body[:end])
            del body[:end]
        if any(r and r[0] in _BULLETS for r in body) and all(not r[0] or r[0] in _BULLETS for r in body if r):
            head, body = [h[1:] for h in head], [r[1:] for r in body]  # a column of list bullets: not the labels
        body = [_split_leaders(r) for r in body]
        if head and head[0] and column_year(head[0][0]) is not None and any(_label(r) for r in body):
            head = [["", *h] for h in head]  # "| 2022 | 2021 |" over "| Total assets | 51,057 | 56,107 |"
        out.append(MdTable(title, head, body, len(out)))
        i = j
    return out + heading_table(lines)


HEADING_ORDER = 10_000  # a heading grid's ``order``: past every real grid, so no text above it is looked up
HEADING_LABEL_CHARS = 80
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$")
_NOTE_REF = re.compile(r"^(?:notes?\s+)?\d{1,2}(?:\([a-z]\)|[a-z])?$", re.IGNORECASE)


def heading_table(lines: list[str]) -> list[MdTable]:
    """Label/value rows the parser printed as headings: a heading with words and no digits, then (after at
    most one note-reference line) either a heading holding one amount (a statement's bold total row, whose
    bold figure is the current column: dated by the page's latest year heading) or two plain amount lines
    (the row's two columns, dated by the page's first two year headings in print order). One grid per kind;
    none dated when the page prints no year heading. Their title is the unit phrase of the nearest
    ``Table:`` line above the first row (the same statement), without that table's own title."""
    text = [(i, ln.strip()) for i, ln in enumerate(lines) if ln.strip()]
    bold: list[list[str]] = []
    plain: list[list[str]] = []
    first = None
    for k, (i, ln) in enumerate(text):
        m = _HEADING.match(ln)
        if not m or len(m.group(1)) > HEADING_LABEL_CHARS or re.search(r"\d", m.group(1)) \
                or not re.search(r"[^\W\d_]{3}", m.group(1)):
            continue  # a label has words and no digits (no year, note number or amount)
        nxt = [t for _, t in text[k + 1: k + 4]]
        if nxt and _NOTE_REF.match(nxt[0]):
            nxt = nxt[1:]
        v = _HEADING.match(nxt[0]) if nxt else None
        if v and _value_line(v.group(1)):
            bold.append([m.group(1), v.group(1)])
        elif len(nxt) >= 2 and _value_line(nxt[0]) and _value_line(nxt[1]):
            plain.append([m.group(1), nxt[0], nxt[1]])
        else:
            continue
        first = i if first is None else first
    if first is None:
        return []
    unit = next((ln.strip() for ln in reversed(lines[:first]) if ln.strip().startswith("Table:")), "")
    tail = re.search(r"\bvalues in .*$", unit)
    title = f"Table: {tail.group(0)}" if tail else ""
    years = [h.group(1) for _, ln in text if (h := _HEADING.match(ln)) and _BARE_YEAR.fullmatch(h.group(1))]
    printed = list(dict.fromkeys(years))
    out = []
    if bold:
        out.append(MdTable(title, [["", max(years)]] if years else [], bold, HEADING_ORDER))
    if plain:
        out.append(MdTable(title, [["", *printed[:2]]] if len(printed) >= 2 else [], plain, HEADING_ORDER + 1))
    return out


def _value_line(text: str) -> bool:
    """A line holding one amount and nothing else (not a year)."""
    return _is_amount(text) and not _BARE_YEAR.fullmatch(text.strip()) and " " not in text.strip()


def _header_text_row(cells: list[str]) -> bool:
    """A row with no label and no amount ("| | | Year ended | | Year ended |"): header text, when a period row
    follows it."""
    return not cells[0] and any(cells[1:]) and not any(_is_amount(c) for c in cells[1:])


def _caption_row(cells: list[str]) -> bool:
    """A row with a label and no other cell ("| Years ended December 31 | | | |"): at a body's top, with a period
    row after it, the statement's caption over its years."""
    return bool(cells and cells[0]) and not _is_amount(cells[0]) and not any(cells[1:])


def _top_text_row(cells: list[str]) -> bool:
    return _header_text_row(cells) or _caption_row(cells)


def _period_row(cells: list[str]) -> bool:
    """A row that names periods and holds no amount ("| | 2022 | 2021 | $/# | % |",
    "| Year ended | 31 Dec 2022 | 31 Dec 2021 |")."""
    vals = [c for c in cells[1:] if c]
    if not vals or (cells[0] and _is_amount(cells[0])):
        return False
    years = [c for c in vals if column_year(c) is not None]
    return bool(years) and not any(_is_amount(c) and not _BARE_YEAR.fullmatch(c.strip()) for c in vals)


def column_year(text: str) -> int | None:
    """The period year a column header names; None when it names none or several."""
    t = _FISCAL4.sub(lambda m: m.group(2), text or "")  # "2021/2022" -> 2022
    t = _FISCAL.sub(lambda m: _fiscal_end(m.group(0)[:4], m.group(1)), t)  # "2021/22" -> 2022
    years = {int(y) for y in _YEAR.findall(t)}
    if not years:
        years = {2000 + int(m) for m in _FY.findall(t)}
    return years.pop() if len(years) == 1 else None


def _fiscal_end(start: str, end2: str) -> str:
    end = int(start) // 100 * 100 + int(end2)
    return str(end + 100 if end < int(start) else end)


def _is_amount(cell: str) -> bool:
    s = _SIGNS.sub("", cell.strip()).strip()
    return bool(s) and any(c.isdigit() for c in s) and bool(_AMOUNT.match(s))


def _is_nil(cell: str) -> bool:
    return _SIGNS.sub("", cell.strip()).strip().lower() in _NIL


# ---- periods ----------------------------------------------------------------------------------------------
def _columns(t: MdTable) -> list[str]:
    """Header text per column (header rows joined)."""
    width = max((len(r) for r in t.header + t.rows), default=0)
    return [" ".join(r[c] for r in t.header if c < len(r) and r[c]).strip() for c in range(width)]


def _table_years(t: MdTable) -> list[tuple[int, int]]:
    """(column index, year) of the columns naming one period, skipping the label column."""
    return [(c, y) for c, h in enumerate(_columns(t)) if c > 0 and (y := column_year(h)) is not None
            and "%" not in h and "change" not in h.lower()]


def _schedule(years: list[int]) -> bool:
    """Dated columns in ascending order, SCHEDULE_COLUMNS or more: a maturity schedule or a multi-year
    summary, whose last year need not be the report's."""
    return len(years) >= SCHEDULE_COLUMNS and years == sorted(years)


def report_year(tables: list[MdTable]) -> int | None:
    """Most common latest header year over ``tables`` (ties: the later year); schedules
    (:func:`_schedule`) vote only when no other table does. None without dated tables."""
    dated = [[y for _, y in ys] for t in tables if (ys := _table_years(t))]
    voters = [ys for ys in dated if not _schedule(ys)] or dated
    latest = Counter(max(ys) for ys in voters)
    return max(latest, key=lambda y: (latest[y], y)) if latest else None


def _label(row: list[str]) -> str:
    return row[0] if row and row[0] and not _is_amount(row[0]) else ""


_BULLETS = frozenset("•◦▪▫●○■□‣⁃*-–")  # a first cell holding only a list bullet ("| • | Net asset value per share |")


def _split_leaders(row: list[str]) -> list[str]:
    """A label cell that runs into its value over dot leaders ("Total assets . . . . $51,057,683")
    -> label cell + value cell; a label whose first cell is empty (a shifted grid) moves left."""
    if len(row) > 1 and not row[0] and row[1] and not _is_amount(row[1]):
        row = row[1:]
    if row and (m := _LEADERS.match(row[0])):
        rest = _SIGNS.sub("", m.group(2).strip()).strip()  # "Operating activities .....$"
        return [m.group(1).strip(), *([rest] if rest else []), *row[1:]]
    return row
