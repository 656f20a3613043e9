"""Which cell of a grid's row holds the figure, and in what unit (stage 06, number questions; used by
:mod:`rag.answer.numbers.figures`).

Contracts:
- ``_table_unit(t, dollar, stated_dollar) -> (Scale, currency)``: the grid's scale and currency from the clean
  stage's unit phrase, its printed unit, its header and the body rows above the first amount.
- ``notes_width(t) -> int``: value cells of a row that starts with a note reference (0: no notes column).
- ``_pick_cell(row, want_col, dated, note_width) -> (cell, column) | None``: the row's cell for a column.
"""
from __future__ import annotations

import re

from ..common import printed as nums
from ...clean import units
from ..common.md_tables import MdTable, _is_amount, _is_nil

NOTE_MAX = 99  # a first "value" this small without separators, in a row with one value too many, is a note ref


def _table_unit(t: MdTable, dollar: str, stated_dollar: str | None = None) -> tuple[nums.Scale, str | None]:
    """The table's unit line ("Table: ... — values in thousands of USD, except per share data") and its
    currency: one the printed unit phrase or header names explicitly ("thousands of Canadian dollars",
    "A$'000") wins; a dollar the clean stage resolved from a bare "$" gives way to ``stated_dollar``
    (the dollar the pages say the report is presented in); else the unit line's."""
    # The clean stage's unit phrase first: the title before it is text the parser took for one
    # ("Thousands of — values in millions of JPY": a line left over from the page's other currency column).
    unit_line = re.search(r"\bvalues in\b.*", t.title or "")
    sc = nums.scale_from_text(unit_line.group(0) if unit_line else t.title) if t.title else nums.Scale()
    top = []  # body rows above the first amount ("| (dollars in thousands) | Amount Percent |")
    for r in t.rows:
        if _value_slots(r):
            break
        top.append(r)
    head = " ".join(c for r in t.header + top for c in r)
    factor = sc.factor
    if factor is None:
        found = units.find_scale(head)
        factor = found[0] if found else None
    canon_text, _, printed = (t.title or "").partition("(as printed:")
    cur = _explicit_currency(printed + " " + head)
    if cur is None:
        c = units.find_currency(canon_text, dollar) or units.find_currency(head, dollar)
        cur = c[0] if c else None
        if stated_dollar and cur in nums.DOLLAR_CODES:
            cur = stated_dollar
    return nums.Scale(factor, cur, sc.exceptions, sc.text), cur


def _explicit_currency(text: str) -> str | None:
    """The first currency ``text`` names other than a bare "$"/"dollars" (ISO code, "A$", "euro"...)."""
    for m in units._CURRENCY_RE.finditer(text or ""):
        found = units.find_currency(m.group(0), dollar="$")
        if found and found[0] != "$":
            return found[0]
    return None


def _value_slots(row: list[str]) -> list[tuple[int, str]]:
    """(column, cell) of the amounts and nil cells after the label."""
    return [(c, cell) for c, cell in enumerate(row) if c > 0 and (_is_amount(cell) or _is_nil(cell))]


def _note_like(cell: str) -> bool:
    return bool(re.fullmatch(r"\d{1,2}", cell)) and int(cell) <= NOTE_MAX


def notes_width(t: MdTable) -> int:
    """Value cells of a row that starts with a note reference, 0 when the grid has no notes column: its
    widest rows all start with a small integer and others are one cell narrower ("| Revenue | 5 | 45,102 |
    24,496 |" beside "| Sales of electricity |  | 6,536 | 652 |", the "Notes" header lost)."""
    rows = [sl for r in t.rows if (sl := _value_slots(r))]
    widest = max((len(sl) for sl in rows), default=0)
    if widest < 3 or not any(len(sl) == widest - 1 for sl in rows):
        return 0
    return widest if all(_note_like(sl[0][1]) for sl in rows if len(sl) == widest) else 0


def _pick_cell(row: list[str], want_col: int | None, dated: list[tuple[int, int]],
               note_width: int = 0) -> tuple[str, int | None] | None:
    """The row's cell of column ``want_col``: by the order of its value cells when they are as many as
    the dated columns (a grid with "$" or note columns the header does not name), else by index;
    ``want_col`` None: the first value cell, after the note reference of a row ``note_width`` cells wide
    (:func:`notes_width`). -> (cell, column) or None."""
    slots = _value_slots(row)
    if not slots:
        return None
    if want_col is None:
        if note_width and len(slots) == note_width:
            slots = slots[1:]
        return slots[0][1], slots[0][0]
    order = [c for c, _ in dated]
    if len(slots) == len(order) + 1 and _note_like(slots[0][1]):
        slots = slots[1:]  # a note reference column the header does not name
    if len(slots) == len(order):
        return slots[order.index(want_col)][1], want_col  # the dated column it stands for
    if want_col < len(row) and (_is_amount(row[want_col]) or _is_nil(row[want_col])):
        return row[want_col], want_col
    return None
