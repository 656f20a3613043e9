"""rag.answer.common.md_tables: a statement's caption row above its period row is header, so its years date the
columns (3M's income statement: "| Years ended December 31 | | | |" then "| (Millions) | 2022 | 2021 | 2020 |")."""
from __future__ import annotations

from rag.answer.common.md_tables import _table_years, parse_tables

STATEMENT = """Table: Consolidated Statement of Income — values in USD
|  |  |  |  |
|---|---|---|---|
| Years ended December 31 |  |  |  |
| (Millions, except per share amounts) | 2022 | 2021 | 2020 |
| Net sales | $ 34,229 | $ 35,355 | $ 32,184 |
| Operating expenses |  |  |  |
| Operating income | 6,539 | 7,369 | 7,161 |
"""
# A section caption right below the period row stays a body row (it opens the rows under it).
SECTIONED = """|  |  |  |
|---|---|---|
| In Millions | 2022 | 2021 |
| Available for sale |  |  |
| Debt securities | 100 | 90 |
"""


def test_a_caption_row_above_the_period_row_is_header():
    (t,) = parse_tables(STATEMENT)
    assert _table_years(t) == [(1, 2022), (2, 2021), (3, 2020)]
    assert [r[0] for r in t.rows] == ["Net sales", "Operating expenses", "Operating income"]


def test_a_section_caption_below_the_period_row_stays_in_the_body():
    (t,) = parse_tables(SECTIONED)
    assert _table_years(t) == [(1, 2022), (2, 2021)]
    assert [r[0] for r in t.rows] == ["Available for sale", "Debt securities"]
