"""Draw one demo report as a PDF (reportlab platypus) and say where every table and text landed.

Contract:
- ``render_report(company) -> (pdf_bytes, tables, texts)`` for one company dict of
  :mod:`rag.demo_content`: the same bytes on every run (``invariant=1``); ``tables`` (one record per
  printed table part: table_id, part, parts, continued, title, unit, header_rows, cells, page) and
  ``texts`` (page, kind, text, key) with the 1-based page each was drawn on.
- Raises :class:`DemoError` when the drawing does not match the plan (a page overflowed, a cell is wider
  than its column, a split table has no page to continue on).

Layout: every page of the content is laid out by reportlab platypus and ends with a page break; after
the build, the page on which each keyed flowable was really drawn is read back (``afterFlowable``) and
compared with the planned page, so an overflowing page is an error, never a silently wrong truth file.
Tables are platypus Tables of plain text cells on a grid, so a PDF text parser recovers every cell.
"""
from __future__ import annotations

import io
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.enums import TA_CENTER
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Spacer, Table as RLTable, TableStyle

from rag.demo_content import Table, fmt

# ---- page geometry and type (points; 72 pt = 1 inch) ----
MARGIN = 50
TOP_MARGIN = 64  # leaves room for the running header
HEADER_FROM_TOP = 36  # baseline of the running header, from the top edge
FOOTER_Y = 30  # baseline of the page number, from the bottom edge
BODY_WIDTH = A4[0] - 2 * MARGIN
NUM_COL_WIDTH = 84  # width of each numeric table column
TABLE_FONT, TABLE_BOLD, TABLE_SIZE = "Helvetica", "Helvetica-Bold", 8.5
CELL_PAD = 6  # reportlab's default cell padding (pt, each side): a cell's text must fit width - 2 * pad
TABLE_SPACE_AFTER = 10  # gap below a table (pt)

STYLES = {
    "h1": ParagraphStyle("h1", fontName="Helvetica-Bold", fontSize=16, leading=20, spaceBefore=4, spaceAfter=8),
    "h2": ParagraphStyle("h2", fontName="Helvetica-Bold", fontSize=11.5, leading=15, spaceBefore=6, spaceAfter=3),
    "p": ParagraphStyle("p", fontName="Helvetica", fontSize=10, leading=13.5, spaceAfter=7),
    "bullet": ParagraphStyle("bullet", fontName="Helvetica", fontSize=10, leading=13.5, leftIndent=16,
                             bulletIndent=4, spaceAfter=2),
    "title": ParagraphStyle("title", fontName="Helvetica-Bold", fontSize=12, leading=15, spaceBefore=6, spaceAfter=1),
    "unit": ParagraphStyle("unit", fontName="Helvetica-Oblique", fontSize=8.5, leading=11, spaceAfter=4),
    "cover": ParagraphStyle("cover", fontName="Helvetica-Bold", fontSize=30, leading=36, alignment=TA_CENTER,
                            spaceAfter=18),
    "cover2": ParagraphStyle("cover2", fontName="Helvetica", fontSize=16, leading=20, alignment=TA_CENTER,
                             spaceAfter=40),
}


class DemoError(RuntimeError):
    """The generator's own content or layout is inconsistent (a page overflowed, a cell is too wide)."""


def _keyed(flowable, key: str):
    flowable._demo_key = key  # read back in afterFlowable to learn the page it landed on
    return flowable


def _table_parts(t: Table) -> list[dict]:
    """The printed parts of a table: title, unit, cell grid, header row count, and the row styles."""
    header = list(t.columns)
    body = [([label] + [fmt(v, t.decimals) for v in vals], style) for label, vals, style in t.rows]
    cut = [body] if not t.split_after else [body[:t.split_after], body[t.split_after:]]
    parts = []
    for i, rows in enumerate(cut):
        # a continuation repeats title, unit line and header row only when the table asks for it;
        # title/unit are None in the truth when not printed (``table_id`` groups the parts)
        repeat = i == 0 or t.repeat_header
        grid = ([header] if repeat else []) + [cells for cells, _ in rows]
        styles = (["header"] if repeat else []) + [s for _, s in rows]
        parts.append(dict(table_id=t.key, part=i + 1, parts=len(cut), continued=i > 0,
                          title=(t.title + (" (continued)" if i > 0 else "")) if repeat else None,
                          unit=t.unit if repeat else None,
                          header_rows=1 if repeat else 0, cells=grid, _styles=styles))
    return parts


def _table_flowables(part: dict, key: str) -> list:
    grid, styles = part["cells"], part["_styles"]
    ncols = len(grid[0])
    label_w = BODY_WIDTH - (ncols - 1) * NUM_COL_WIDTH
    widths = [label_w] + [NUM_COL_WIDTH] * (ncols - 1)
    for row, style in zip(grid, styles):
        font = TABLE_BOLD if style in ("bold", "header", "head") else TABLE_FONT
        for cell, w in zip(row, widths):
            if stringWidth(cell, font, TABLE_SIZE) + 2 * CELL_PAD > w:
                raise DemoError(f"table {part['table_id']}: cell {cell!r} is wider than its column ({w} pt)")
    ts = [("FONT", (0, 0), (-1, -1), TABLE_FONT, TABLE_SIZE),
          ("GRID", (0, 0), (-1, -1), 0.4, colors.grey),
          ("ALIGN", (1, 0), (-1, -1), "RIGHT"),
          ("VALIGN", (0, 0), (-1, -1), "MIDDLE")]
    for r, style in enumerate(styles):
        if style in ("bold", "header", "head"):
            ts.append(("FONT", (0, r), (-1, r), TABLE_BOLD, TABLE_SIZE))
        if style == "header":
            ts.append(("BACKGROUND", (0, r), (-1, r), colors.Color(0.88, 0.9, 0.94)))
    table = RLTable(grid, colWidths=widths, style=TableStyle(ts))
    head = []
    if part["title"] is not None:
        head = [_keyed(Paragraph(escape(part["title"]), STYLES["title"]), key + ":title"),
                Paragraph(escape(part["unit"]), STYLES["unit"])]
    return head + [_keyed(table, key), Spacer(1, TABLE_SPACE_AFTER)]


def _layout(company: dict):
    """Flowables for one report plus the plan: what (tables, texts) should land on which 1-based page."""
    flow: list = []
    plan_tables: list[dict] = []
    plan_texts: list[dict] = []
    carry: list = []  # second part of a table split at a page break, printed at the top of the next page
    n_pages = len(company["pages"])
    for pno, blocks in enumerate(company["pages"], 1):
        flow.extend(carry)
        carry = []
        for b in blocks:
            kind = b[0]
            if kind == "cover":
                flow += [Spacer(1, 200), Paragraph(escape(b[1]), STYLES["cover"]),
                         Paragraph(escape(b[2]), STYLES["cover2"])]
                plan_texts += [dict(page=pno, kind="title", text=b[1], key=None),
                               dict(page=pno, kind="title", text=b[2], key=None)]
            elif kind in ("h1", "h2", "p"):
                key = b[2] if len(b) > 2 else None
                tkey = f"text:{len(plan_texts)}"
                flow.append(_keyed(Paragraph(escape(b[1]), STYLES[kind]), tkey))
                plan_texts.append(dict(page=pno, kind="heading" if kind != "p" else "paragraph",
                                       text=b[1], key=key, _fkey=tkey))
            elif kind == "bullets":
                for item in b[1]:
                    tkey = f"text:{len(plan_texts)}"
                    flow.append(_keyed(Paragraph(escape(item), STYLES["bullet"], bulletText="\u2022"), tkey))
                    plan_texts.append(dict(page=pno, kind="list_item", text=item, key=b[2], _fkey=tkey))
            elif kind == "table":
                for part in _table_parts(b[1]):
                    tkey = f"table:{part['table_id']}:{part['part']}"
                    fl = _table_flowables(part, tkey)
                    page = pno + part["part"] - 1
                    if page > n_pages:
                        raise DemoError(f"{company['key']}: table {part['table_id']} continues past the last page")
                    plan_tables.append(dict(part, page=page, _fkey=tkey))
                    (flow if part["part"] == 1 else carry).extend(fl)
            else:
                raise DemoError(f"{company['key']} page {pno}: unknown block kind {kind!r}")
        if pno < n_pages:
            flow.append(PageBreak())
    if carry:
        raise DemoError(f"{company['key']}: a split table has no page to continue on")
    return flow, plan_tables, plan_texts


def render_report(company: dict) -> tuple[bytes, list[dict], list[dict]]:
    """PDF bytes of one report, and its tables and texts with the 1-based page they were drawn on."""
    flow, tables, texts = _layout(company)
    landed: dict[str, int] = {}
    buf = io.BytesIO()
    header = company["header"]

    def deco(canvas, doc):
        canvas.saveState()
        canvas.setFont("Helvetica", 8)
        canvas.setFillColor(colors.grey)
        canvas.drawString(MARGIN, A4[1] - HEADER_FROM_TOP, header)
        canvas.drawRightString(A4[0] - MARGIN, FOOTER_Y, str(doc.page))  # physical page number
        canvas.restoreState()

    class Doc(SimpleDocTemplate):
        def afterFlowable(self, flowable):
            key = getattr(flowable, "_demo_key", None)
            if key is not None:
                landed.setdefault(key, self.page)

    # invariant=1: fixed creation date and document ID, so the bytes (and the sha1) never change.
    doc = Doc(buf, pagesize=A4, leftMargin=MARGIN, rightMargin=MARGIN, topMargin=TOP_MARGIN,
              bottomMargin=MARGIN, invariant=1, title=header, author=company["name"],
              subject="Fictional annual report generated for the enterprise-rag demo", creator="rag.demo")
    doc.build(flow, onFirstPage=lambda c, d: None, onLaterPages=deco)
    problems = []
    for rec in tables + texts:
        key = rec.get("_fkey")
        if key is not None and landed.get(key) != rec["page"]:
            problems.append(f"{key} planned on page {rec['page']} but drawn on page {landed.get(key)}")
    for t in tables:  # the title must sit on the same page as its grid
        if t["title"] is not None and landed.get(t["_fkey"] + ":title") != t["page"]:
            problems.append(f"title of {t['_fkey']} is not on page {t['page']}")
    if doc.page != len(company["pages"]):
        problems.append(f"{doc.page} pages drawn, {len(company['pages'])} planned")
    if problems:
        raise DemoError(f"{company['key']}: layout does not match the plan (a page overflowed?):\n  "
                        + "\n  ".join(problems))
    clean = lambda d: {k: v for k, v in d.items() if not k.startswith("_")}
    return buf.getvalue(), [clean(t) for t in tables], [clean(t) for t in texts]
