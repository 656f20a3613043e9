"""Data of the demo corpus: four FICTIONAL companies, their statements, narrative and facts.

Layout code lives in :mod:`rag.demo`; this module only holds content. Every company, person,
product and number here is invented. A report is a list of pages; a page is a list of blocks:

- ``("h1"|"h2", text)``                      headings
- ``("p", text)`` / ``("p", text, fact_key)`` a paragraph; with a key it is a known sentence whose
                                             page goes to the truth file (and to gold pools)
- ``("bullets", [text, ...], fact_key|None)`` a bulleted list (names of board members, products)
- ``("table", Table)``                        a financial table (title + unit line + cell grid)
- ``("cover", title, subtitle)``              the cover page

Amounts are in the table's unit (``scale`` says what one unit is worth in the currency); negative
values are printed in parentheses.
"""
from __future__ import annotations

# Content split by company (each module a few hundred lines); this package's names are what rag.demo,
# rag.demo_pdf and rag.gpu_compare import.
from .aurelia import aurelia
from .base import (COMMITTEES, EM_DASH, FORWARD, GOVERNANCE_INTRO, RISK, SUSTAINABILITY, Stmt, Table,  # noqa: F401
                   fill, fmt)
from .harrow import harrow
from .kitsune import kitsune
from .northwind import northwind

COMPANIES = (northwind, aurelia, harrow, kitsune)
