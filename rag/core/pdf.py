"""PDF page text through pdfium (fast, no layout analysis): the one helper for modules that need a page's
printed text without running stage 01 (rag init guessing company and currency, rag.valgen_labels showing pages).

Contract: ``pdf_page_texts(pdf, pages=None, first=None) -> [(page, text)]`` with 1-based ``page``, line
ends normalised to ``\\n``; ``pages`` picks pages (1-based), ``first`` the first n; the document is always
closed. Raises pypdfium2's PdfiumError (or OSError) on a file that is not a readable PDF, and ValueError
for a page past the end.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable


def pdf_page_texts(pdf: Path | str, pages: Iterable[int] | None = None,
                   first: int | None = None) -> list[tuple[int, str]]:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    try:
        n = len(doc)
        wanted = list(pages) if pages is not None else list(range(1, (min(first, n) if first is not None else n) + 1))
        bad = [p for p in wanted if not 1 <= p <= n]
        if bad:
            raise ValueError(f"{pdf}: page {bad[0]} out of range (1..{n})")
        return [(p, doc[p - 1].get_textpage().get_text_range().replace("\r\n", "\n").replace("\r", "\n"))
                for p in wanted]
    finally:
        doc.close()


def pdf_page_count(pdf: Path | str) -> int:
    """Pages of ``pdf`` (the document is always closed); errors as :func:`pdf_page_texts`."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    try:
        return len(doc)
    finally:
        doc.close()
