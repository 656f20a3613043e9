"""Table grids (rows of cell strings) as GitHub Markdown and HTML.

Contract: ``to_markdown(rows, header_rows=1)`` and ``to_html(rows, header_rows=1)``; the first
``header_rows`` rows are the header (Markdown has at most one: an empty header line is written when
there is none). Used by the native parse path (``rag.parse.docling_pages``) and the cleaner (``rag.clean.tables``).
"""
from __future__ import annotations

import html as _html


def to_markdown(rows: list[list[str]], header_rows: int = 1) -> str:
    """GitHub Markdown grid; with no header row an empty header line is written (Markdown needs one)."""
    if not rows:
        return ""
    width = max(len(r) for r in rows)

    def line(cells: list[str]) -> str:
        cells = list(cells) + [""] * (width - len(cells))
        return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"

    head = rows[0] if header_rows > 0 else [""] * width
    body = rows[1:] if header_rows > 0 else rows
    return "\n".join([line(head), "|" + "|".join(["---"] * width) + "|"] + [line(r) for r in body])


def to_html(rows: list[list[str]], header_rows: int = 1) -> str:
    out = ["<table>"]
    for i, r in enumerate(rows):
        tag = "th" if i < header_rows else "td"
        out.append("<tr>" + "".join(f"<{tag}>{_html.escape(c)}</{tag}>" for c in r) + "</tr>")
    out.append("</table>")
    return "".join(out)
