"""Stage 02 (clean): glyph repair on real erc2-dev strings, broken words, headers/footers, units,
table placement, OCR of an image-only page (real rapidocr), LLM table serialization (FakeLLM),
resume/errors, and the real parse -> clean path on the demo corpus."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from rag import clean
from rag.clean import units
from rag.core.artifacts import read_json
from rag.core.dataset import Dataset, Report
from rag.models.base import FakeLLM
from rag.core.records import CleanReport, PageMetrics, ParsedPage, ParsedReport, ParsedTable, TextBlock

SHA = "a" * 40


# ---- glyph artefacts: real strings from erc2-dev PDFs (pypdfium2 text / docling native parse) ---------------
@pytest.mark.parametrize("raw, expected", [
    # ACRES Commercial Realty (0279901b) p22: Symbol-font bullet U+F0B7 inside a docling text block
    ("nd general risks, including as follows: \uf0b7 If current economic and market conditio",
     "nd general risks, including as follows:\n- If current economic and market conditio"),
    # Downer EDI (0a61a353) p13: Wingdings bullets U+F067 joined into one block by the parser
    ("\uf067 Employee benefits \uf067 Subcontractor \uf067 Raw materials and consumables used",
     "- Employee benefits\n- Subcontractor\n- Raw materials and consumables used"),
    # Ritchie Bros (78c71282) p3: a colon printed in the Symbol font (U+F03A)
    ("PART I\r\nITEM 1\uf03a Business 4\r\nITEM 1A\uf03a Risk Factors 18",
     "PART I\nITEM 1: Business 4\nITEM 1A: Risk Factors 18"),
    # Downer EDI p134: a C1 control code (0x82) used as a bullet glyph
    ("towards targets \r\nand objectives.\r\n\x82 Embed talent management and ",
     "towards targets\nand objectives.\n- Embed talent management and"),
    # Wheeler REIT (b947c33b) p1: Wingdings check boxes on the 10-K cover
    ("as defined in Rule 405 of the Securities Act. Yes ¨ No þ",
     "as defined in Rule 405 of the Securities Act. Yes ☐ No ☒"),
    # ACRES p9: pdfium's line-end hyphen mark U+FFFE inside a compound that the report also prints whole
    ("ntains certain forward-looking statements. Forward\ufffelooking statements relate to ",
     "ntains certain forward-looking statements. Forward-looking statements relate to"),
    # glyph tokens of fonts without a Unicode map (docling GLYPH<…>, pdfminer (cid:N)), /uniXXXX names
    ("GLYPH<c=3,font=/AAAAAH+Arial>Revenue (cid:3)grew /uni00A0 fast", "Revenue grew fast"),
    ("the \ufb01rst \ufb02oor o\ufb03ce", "the first floor office"),
    ("soft\xadware and pay\xad\nment\u200b  terms\u00a0apply", "software and payment terms apply"),
])
def test_clean_text_repairs_real_glyph_artefacts(raw, expected):
    assert clean.clean_text(raw, clean.build_vocab([raw])) == expected


def test_pdfium_hyphen_mark_keeps_compounds_of_the_report():
    # ACRES p4 / p14: "borrower\ufffeowned", "A\ufffenote" — both parts are words of the report.
    vocab = clean.build_vocab(["loans owned by the borrower", "a note on the A-notes"])
    assert clean.clean_text("covered by borrower\ufffeowned interest rate caps", vocab) == \
        "covered by borrower-owned interest rate caps"
    assert clean.clean_text("our typical A\ufffenote investments", vocab) == "our typical A-note investments"


def test_line_end_hyphenation_uses_the_report_vocabulary():
    vocab = clean.build_vocab([
        "Our sustainability report covers related parties and right of use of assets. End to end cost savings "
        "are effective. The management team reviewed the consolidated financial statements."])
    # real docling native joins (Downer EDI p11, p14, p15, p18): compounds keep their hyphen
    assert clean.fix_broken_words("Downer's sustainability- related performance", vocab) == \
        "Downer's sustainability-related performance"
    assert clean.fix_broken_words("Right-of- use assets", vocab) == "Right-of-use assets"
    assert clean.fix_broken_words("providing end- to-end solutions", vocab) == "providing end-to-end solutions"
    assert clean.fix_broken_words("cost- effective", vocab) == "cost-effective"
    # words split by the typesetter are joined
    assert clean.fix_broken_words("the manage-\nment team", vocab) == "the management team"
    assert clean.fix_broken_words("consoli- dated finan- cial statements", vocab) == "consolidated financial statements"
    # suspended hyphens stay: "pre- and post-tax"
    assert clean.fix_broken_words("pre- and post-tax profit", vocab) == "pre- and post-tax profit"
    assert clean.fix_broken_words("non- attended sites", Counter()) == "non-attended sites"


def test_ligature_gaps_are_closed():
    vocab = clean.build_vocab(["significant financial office benefits profit the first"])
    assert clean.fix_broken_words("signi fi cant fi nancial results of the of fi ce", vocab) == \
        "significant financial results of the office"
    assert clean.fix_broken_words("employee benefi ts and pro fit", vocab) == "employee benefits and profit"
    assert clean.fix_broken_words("the fi rst", Counter()) == "the first"


def test_garbled_ratio_flags_glyph_pages_only():
    ok = "ITEM 1\uf03a Business. " + "Revenue increased to $2.85 billion in 2024. " * 5
    assert clean.garbled_ratio(ok) < 0.05
    bad = " ".join(f"GLYPH<c={n},font=/AAAAAH+Frutiger>" for n in range(40)) + " Revenue"
    assert clean.garbled_ratio(bad) > 0.9
    assert clean.garbled_ratio("(cid:72)(cid:101)(cid:108)lo") > 0.8
    assert clean.garbled_ratio("") == 0.0


def test_whitespace_normalization():
    assert clean.normalize_whitespace("  a   b \n\n\n\n c  \n") == "a b\n\nc"


# ---- headers, footers, page numbers ------------------------------------------------------------------------
def _page(n: int, blocks: list[TextBlock], tables: list[ParsedTable] = (), chars: int = 100) -> ParsedPage:
    return ParsedPage(page=n, width=595, height=842, blocks=list(blocks), tables=list(tables),
                      metrics=PageMetrics(chars=chars, garbled_ratio=0.0, words=chars // 5))


def _report(pages: list[ParsedPage], pdf: str = "x.pdf") -> ParsedReport:
    return ParsedReport(sha1=SHA, pdf=pdf, pipeline="native", n_pages=len(pages), seconds=0.0, pages=pages)


def test_repeated_headers_footers_and_page_numbers_are_removed(make_cfg):
    cfg = make_cfg(overrides={"clean.ocr": False})
    topics = ["freight volumes", "fleet renewal", "fuel costs", "driver hiring", "pricing", "safety"]
    pages = []
    for n, topic in enumerate(topics, 1):
        blocks = [TextBlock(text="Acme Holdings plc | Annual Report 2023"),
                  TextBlock(text=f"Section on {topic}."),
                  TextBlock(text="Only on two pages") if n in (2, 3) else TextBlock(text=f"More on {topic}."),
                  TextBlock(text=f"Closing words on {topic}."),
                  TextBlock(text=f"Page {n} of 6" if n % 2 else str(n))]
        pages.append(_page(n, blocks))
    rep, info = clean.clean_report(_report(pages), "Acme Holdings plc", cfg)
    for p, topic in zip(rep.pages, topics):
        assert "Annual Report 2023" not in p.markdown
        assert p.markdown.startswith(f"Section on {topic}.") and p.markdown.endswith(f"Closing words on {topic}.")
    assert "Only on two pages" in rep.pages[1].markdown  # 2 of 6 pages < repeated_line_share
    assert info["removed_blocks"] == 12
    assert "page # of #" in {clean.edge_key(x) for x in ["Page 3 of 6"]}
    assert clean.is_page_number("12") and clean.is_page_number("Page 4 of 10") and not clean.is_page_number("2023 results")


# ---- units -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, scale, currency", [
    ("(in thousands)", 1_000, None),
    ("(In thousands, except per share data)", 1_000, None),
    ("(Dollars in millions, except per share data)", 1_000_000, "USD"),
    ("(in thousands of USD)", 1_000, "USD"),
    ("(in millions of U.S. dollars)", 1_000_000, "USD"),
    ("(in U.S. dollars $000's, except EPS and percentages)", 1_000, "USD"),  # Ritchie Bros 10-K
    ("Thousands of U.S. dollars", 1_000, "USD"),  # Seiko Epson
    ("(million JPY)", 1_000_000, "JPY"),  # Seiko Epson subsidiaries table
    ("95,000 (thousand EUR)", 1_000, "EUR"),
    ("$'000", 1_000, "USD"),
    ("$000s", 1_000, "USD"),
    ("US$m", 1_000_000, "USD"),
    ("A$m", 1_000_000, "AUD"),
    ("2023 €m", 1_000_000, "EUR"),
    ("€ millions", 1_000_000, "EUR"),
    ("EUR million", 1_000_000, "EUR"),
    ("(£ in millions)", 1_000_000, "GBP"),
    ("£bn", 1_000_000_000, "GBP"),
    ("in billions of euros", 1_000_000_000, "EUR"),
    ("(in millions of yen)", 1_000_000, "JPY"),
    ("百万円", 1_000_000, "JPY"),
    ("RMB'000", 1_000, "CNY"),
    ("CHF m", 1_000_000, "CHF"),
    ("(000s)", 1_000, None),
    ("Millions", 1_000_000, None),
    ("All amounts in CAD thousands unless otherwise stated", 1_000, "CAD"),
    # prose amounts and other words are not unit statements
    ("Revenue increased $5.2 million", None, "USD"),
    ("The company sold 3 million units", None, None),
    ("we expect to invest in millions of homes", None, None),
    ("$000,000", None, "USD"),
    ("Year ended December 31, 2022", None, None),
])
def test_unit_phrasings(text, scale, currency):
    s = units.find_scale(text)
    assert (s[0] if s else None) == scale
    c = units.find_currency(text, dollar="USD")
    assert (c[0] if c else None) == currency


def test_detect_unit_priority_and_sources():
    # context beats a page line; currency from the "$" printed in the amounts
    u = units.detect_unit("CONSOLIDATED STATEMENTS OF OPERATIONS\n(In thousands, except per share data)",
                          ["", "2022", "2021"], "", ["All figures in millions"], ["$ 1,234", "$ 99", "12"], "USD")
    assert (u.scale, u.currency, u.scale_source, u.currency_source) == (1_000, "USD", "context", "cells")
    assert u.exceptions == "per share data"
    # header cells, then a nearby page line for a table with nothing above it
    u = units.detect_unit("", ["", "2022 €m", "2021 €m"], "", ["All figures in $ millions"])
    assert (u.scale, u.currency, u.scale_source, u.text) == (1_000_000, "EUR", "header", "2022 €m")
    u = units.detect_unit("Revenue by segment", ["Segment", "FY22"], "", ["All figures in A$ millions"], dollar="AUD")
    assert (u.scale, u.currency, u.scale_source) == (1_000_000, "AUD", "page")
    # "$" means the report's dollar
    assert units.detect_unit("($'000)", dollar="AUD").currency == "AUD"
    assert units.dollar_currency(["Amounts in Australian dollars (A$)", "US$ bonds", "A$ 5m"]) == "AUD"
    assert units.dollar_currency(["no currency here"], default="CAD") == "CAD"


def test_unit_line_is_read_back_by_the_answer_stage():
    from rag.answer.common.printed import scale_from_text

    u = units.detect_unit("Consolidated income statement\n(in thousands, except per share data)", ["", "2024"],
                          "", [], ["$ 12"], "USD")
    line = units.unit_line("Consolidated income statement", u)
    assert line.startswith("Table: Consolidated income statement — values in thousands of USD, except per share data")
    assert '(as printed: "(in thousands, except per share data)")' in line
    s = scale_from_text(line)
    assert (s.factor, s.currency) == (1_000, "USD") and "per share" in s.exceptions
    assert units.unit_line("Headcount", units.Unit()) == "Table: Headcount"


# ---- page Markdown and tables --------------------------------------------------------------------------------
def _table(page: int, n: int, cells, block_index: int, context: str = "", header_rows: int = 1) -> ParsedTable:
    return ParsedTable(table_id=f"{page}-{n}", page=page, cells=cells, header_rows=header_rows, markdown="md",
                       html=f"<table><tr><td>{page}-{n}</td></tr></table>", context_above=context,
                       block_index=block_index)


def test_page_markdown_places_tables_with_unit_lines_and_continues_split_tables(make_cfg):
    cfg = make_cfg(overrides={"clean.ocr": False})
    income = _table(1, 0, [["", "2023", "2022"], ["Revenue", "12,345", "11,002"], ["Net income", "(1,234)", "987"]],
                    block_index=2, context="Consolidated income statement\n(in thousands of USD)")
    p1 = _page(1, [TextBlock(kind="heading", text="Financial statements"), TextBlock(text="Intro paragraph."),
                   TextBlock(text="Text after the table."), TextBlock(kind="list_item", text="\uf0b7 A bullet")],
               [income])
    cont = _table(2, 0, [["Total assets", "99,000", "88,000"], ["Total equity", "50,000", "40,000"]], block_index=0,
                  header_rows=0)
    p2 = _page(2, [TextBlock(text="Notes follow.")], [cont])
    rep, info = clean.clean_report(_report([p1, p2]), "Acme", cfg)
    md = rep.pages[0].markdown
    t = rep.pages[0].tables[0]
    assert t.markdown.splitlines()[0] == ('Table: Consolidated income statement — values in thousands of USD '
                                          '(as printed: "(in thousands of USD)")')
    assert (t.scale, t.currency, t.unit_text) == (1_000, "USD", "(in thousands of USD)")
    assert t.html == income.html and "| Net income | (1,234) | 987 |" in t.markdown
    order = [md.index(x) for x in ("# Financial statements", "Intro paragraph.", t.markdown, "Text after the table.",
                                   "- A bullet")]
    assert order == sorted(order)
    # page 2 opens with a unit-less table of the same width: a continuation with the same unit
    t2 = rep.pages[1].tables[0]
    assert (t2.scale, t2.currency) == (1_000, "USD")
    assert t2.markdown.startswith("Table: Financial statements — values in thousands of USD")
    assert rep.pages[1].markdown.index(t2.markdown) < rep.pages[1].markdown.index("Notes follow.")
    assert info["tables_with_unit"] == 2


def test_header_footer_labelled_blocks_are_dropped(make_cfg):
    cfg = make_cfg(overrides={"clean.ocr": False})
    p = _page(1, [TextBlock(kind="header", text="Running title"), TextBlock(text="Body."),
                  TextBlock(kind="footer", text="Confidential")])
    rep, _ = clean.clean_report(_report([p]), "Acme", cfg)
    assert rep.pages[0].markdown == "Body."


# ---- OCR fallback on a generated image-only PDF (real rapidocr) ---------------------------------------------------
def _image_pdf(path: Path) -> Path:
    """Page 1: real text; page 2: blank; pages 3 and 4: their text exists ONLY as an embedded image."""
    from PIL import Image, ImageDraw, ImageFont
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    size = (320, 200)  # points: small pages keep OCR fast
    c = canvas.Canvas(str(path), pagesize=size)
    c.setFont("Helvetica", 12)
    c.drawString(20, 150, "Chairman letter with a real text layer.")
    c.showPage()
    c.showPage()  # blank page 2
    for lines in (["Revenue grew to 4,512", "Operating profit 731"], ["Second scanned page"]):
        img = Image.new("RGB", (640, 400), "white")
        draw = ImageDraw.Draw(img)
        font = ImageFont.load_default(size=40)
        for i, line in enumerate(lines):
            draw.text((30, 40 + 70 * i), line, fill="black", font=font)
        c.drawImage(ImageReader(img), 0, 0, width=size[0], height=size[1])
        c.showPage()
    c.save()
    return path


def _ticking_clock(monkeypatch, step: float):
    """The OCR budget's clock advances ``step`` seconds per reading (deterministic budgets in tests)."""
    t = [0.0]

    def tick():
        t[0] += step
        return t[0]

    monkeypatch.setattr(clean, "_clock", tick)


def test_ocr_reads_image_only_pages_within_the_budget(tmp_path, make_cfg, monkeypatch):
    pdf = _image_pdf(tmp_path / "scan.pdf")
    # Each budget check costs 10 "seconds": start, page 2 (blank), page 3 fit in 25 s; page 4 does not.
    _ticking_clock(monkeypatch, 10.0)
    cfg = make_cfg(overrides={"clean.ocr_budget_s": 25})
    pages = [_page(1, [TextBlock(text="Chairman letter with a real text layer.")]),
             _page(2, [], chars=0), _page(3, [], chars=0), _page(4, [], chars=0)]
    rep, info = clean.clean_report(_report(pages, pdf=str(pdf)), "Acme", cfg)
    assert info["textless_pages"] == [2, 3, 4]
    assert info["blank_pages"] == [2]  # rendered, found blank, not OCR'd
    assert rep.ocr_pages == [3] and info["ocr_skipped"] == 1 and info["ocr_budget_s"] == 25
    page3 = rep.pages[2]
    assert page3.ocr and "Revenue grew to 4,512" in page3.markdown and "Operating profit 731" in page3.markdown
    assert page3.markdown.index("Revenue") < page3.markdown.index("Operating")
    assert rep.pages[3].markdown == "" and not rep.pages[3].ocr
    assert rep.pages[0].markdown == "Chairman letter with a real text layer."


def test_garbled_page_goes_to_ocr_first(tmp_path, make_cfg, monkeypatch):
    """Planning only (OCR stubbed): garbled pages, most garbled first, before text-less ones."""
    from rag.clean import ocr

    calls = []

    def fake_ocr_page(pdf, page, **kw):
        calls.append(page)
        return ocr.OcrPage(page=page, lines=[f"ocr text {page}"], seconds=0.01, ink=0.2)

    monkeypatch.setattr(ocr, "ocr_page", fake_ocr_page)
    _ticking_clock(monkeypatch, 1.0)
    cfg = make_cfg(overrides={"clean.ocr_budget_s": 2.5})
    glyphs = " ".join(f"GLYPH<c={n},font=/F1>" for n in range(30))
    pages = [_page(1, [TextBlock(text="Fine text page.")]), _page(2, [], chars=0),
             _page(3, [TextBlock(text=glyphs + " some words here and there")]),
             _page(4, [TextBlock(text=glyphs)])]
    rep, info = clean.clean_report(_report(pages), "Acme", cfg)
    assert info["garbled_pages"] == [4, 3] and calls == [4, 3] and info["ocr_skipped"] == 1
    assert rep.ocr_pages == [3, 4] and rep.pages[3].markdown == "ocr text 4" and rep.pages[3].garbled_ratio > 0.9
    cfg_off = make_cfg(overrides={"clean.ocr": False})
    rep, _ = clean.clean_report(_report(pages), "Acme", cfg_off)
    assert rep.ocr_pages == [] and "GLYPH" not in rep.pages[3].markdown


# ---- stage: resume, errors, serialization ---------------------------------------------------------------------------
def _dataset(tmp_path: Path, sha1s: list[str]) -> Dataset:
    reports = tuple(Report(sha1=s, company=f"Co {s[:4]}", currency="USD", pdf=tmp_path / f"{s}.pdf") for s in sha1s)
    return Dataset(root=tmp_path, name="t", reports=reports, questions=(), gold={})


def _write_parsed(cfg, parsed: ParsedReport) -> Path:
    from rag.core.artifacts import write_json_atomic

    return write_json_atomic(cfg.run_dir / "01_parse" / f"{parsed.sha1}.json", parsed.model_dump(mode="json"))


def _one_table_report(sha1: str) -> ParsedReport:
    t = _table(1, 0, [["", "2023"], ["Revenue", "$ 5,000"]], block_index=1, context="(in millions)")
    return ParsedReport(sha1=sha1, pdf="x.pdf", pipeline="native", n_pages=1, seconds=0.0,
                        pages=[_page(1, [TextBlock(text="Results.")], [t])])


def test_run_clean_resumes_and_names_bad_inputs(tmp_path, make_cfg):
    cfg = make_cfg(overrides={"clean.ocr": False})
    good, missing, broken = "b" * 40, "c" * 40, "d" * 40
    _write_parsed(cfg, _one_table_report(good))
    (cfg.run_dir / "01_parse" / f"{broken}.json").write_text(json.dumps({"sha1": broken, "pages": "nope"}))
    ds = _dataset(tmp_path, [good, missing, broken])
    df = clean.run_clean(cfg, ds, progress=False).set_index("sha1")
    assert df.loc[good, "error"] == "" and df.loc[good, "tables_with_unit"] == 1
    assert f"01_parse/{missing}.json is missing" in df.loc[missing, "error"]
    assert f"{broken}.json: not a valid ParsedReport" in df.loc[broken, "error"]
    out = CleanReport.model_validate(read_json(cfg.run_dir / "02_clean" / f"{good}.json"))
    assert out.company == f"Co {good[:4]}" and out.pages[0].tables[0].scale == 1_000_000
    assert out.pages[0].tables[0].currency == "USD"
    manifest = read_json(cfg.run_dir / "02_clean" / "manifest.json")
    assert manifest["counts"]["cleaned"] == 1 and set(manifest["failures"]) == {missing, broken}
    again = clean.run_clean(cfg, ds, progress=False).set_index("sha1")
    assert bool(again.loc[good, "skipped"]) and again.loc[good, "tables"] == 1
    # a changed clean knob or a changed parse output makes the report stale again
    cfg2 = make_cfg(overrides={"clean.ocr": False, "clean.edge_lines": 3})
    assert not bool(clean.run_clean(cfg2, ds, progress=False).set_index("sha1").loc[good, "skipped"])


def test_serialize_tables_with_fake_llm(tmp_path, make_cfg, monkeypatch):
    import rag.models

    seen = []

    def respond(messages, schema):
        seen.append(messages[-1]["content"])
        return {"sentences": ["Co bbbb revenue in 2023 was $5,000 million (values in millions of USD).", " "]}

    fake = FakeLLM(respond)
    monkeypatch.setattr(rag.models, "get_llm", lambda cfg: fake)
    cfg = make_cfg(overrides={"clean.ocr": False, "clean.serialize_tables": True})
    sha = "b" * 40
    _write_parsed(cfg, _one_table_report(sha))
    df = clean.run_clean(cfg, _dataset(tmp_path, [sha]), progress=False)
    assert df.serialized_tables.tolist() == [1]
    out = CleanReport.model_validate(read_json(cfg.run_dir / "02_clean" / f"{sha}.json"))
    assert out.pages[0].tables[0].serialized == "Co bbbb revenue in 2023 was $5,000 million (values in millions of USD)."
    assert "values in millions of USD" in seen[0] and "| Revenue | $ 5,000 |" in seen[0]
    tokens = read_json(cfg.run_dir / "02_clean" / "manifest.json")["tokens"]
    assert tokens["prompt_tokens"] > 0 and tokens["completion_tokens"] > 0

    # a failing model leaves the table unserialized and is counted, not fatal
    def broken(messages, schema):
        raise RuntimeError("model down")

    rep, _ = clean.clean_report(_one_table_report(sha), "Co", cfg)
    usage = clean.serialize_tables(rep, cfg, llm=FakeLLM(broken))
    assert usage["serialize_failed"] == 1 and rep.pages[0].tables[0].serialized is None


# ---- real parse -> clean on the demo corpus ---------------------------------------------------------------------------
def test_run_clean_on_parsed_demo_corpus(demo_dir, make_cfg):
    from rag.clean import load_clean
    from rag.core.dataset import load_dataset
    from rag.parse import run_parse

    ds = load_dataset(demo_dir)
    cfg = make_cfg(demo_dir)
    assert (run_parse(cfg, ds, progress=False).error == "").all()
    df = clean.run_clean(cfg, ds, progress=False)
    assert (df.error == "").all() and (df.tables == df.tables_with_unit).all() and (df.ocr_pages == 0).all()
    expected = {"Northwind": (1_000, "USD"), "Aurelia": (1_000_000, "EUR"), "Harrow": (1_000_000, "GBP"),
                "Kitsune": (1_000_000, "JPY")}
    for r in ds.reports:
        rep = load_clean(cfg, r.sha1)  # the chunk stage's reader accepts the artifact
        scale_cur = expected[next(k for k in expected if k in r.company)]
        for p in rep.pages:
            assert "| Annual Report 20" not in p.markdown and "| Integrated Report" not in p.markdown
            for t in p.tables:
                assert (t.scale, t.currency) == scale_cur, (r.company, t.table_id, t.markdown[:200])
                assert t.markdown in p.markdown and t.markdown.startswith("Table: ")
    assert clean.run_clean(cfg, ds, progress=False).skipped.all()
    # two worker processes (the offline default; the test preset cleans in turn): the same files
    import shutil

    par = make_cfg(demo_dir, run="par", overrides={"clean.workers": 2})
    shutil.copytree(cfg.run_dir / "01_parse", par.run_dir / "01_parse")
    assert (clean.run_clean(par, ds, progress=False).error == "").all()
    for r in ds.reports:
        assert (par.run_dir / "02_clean" / f"{r.sha1}.json").read_bytes() == \
            (cfg.run_dir / "02_clean" / f"{r.sha1}.json").read_bytes()


def test_running_head_found_by_position_even_out_of_reading_order(make_cfg):
    """Downer EDI's "62 | Downer EDI Limited" comes third in reading order: its box (top 8% of the page)
    marks it as an edge block all the same. Years are never taken for page numbers."""
    cfg = make_cfg(overrides={"clean.ocr": False})
    topics = ["Profit or loss", "Financial position", "Changes in equity", "Cash flows", "Segments", "Leases"]
    pages = []
    for n, topic in enumerate(topics, 1):
        blocks = [TextBlock(text=f"Statement of {topic}", bbox=(50, 100, 300, 115)),
                  TextBlock(text=f"Notes on {topic.lower()}", bbox=(50, 120, 300, 130)),
                  TextBlock(text=f"{n:02d} | Downer EDI Limited", bbox=(50, 20, 200, 30)),
                  TextBlock(text=f"Body about {topic.lower()}.", bbox=(50, 300, 500, 400)),
                  TextBlock(text="2021", bbox=(50, 700, 80, 710))]
        pages.append(_page(n, blocks))
    rep, _ = clean.clean_report(_report(pages), "Downer EDI Limited", cfg)
    for p, topic in zip(rep.pages, topics):
        assert "Downer EDI Limited" not in p.markdown and p.markdown.startswith(f"Statement of {topic}")
        assert p.markdown.endswith("2021")  # a year heading a column, repeated at the bottom edge: kept
    assert not clean.is_page_number("2021") and clean.is_page_number("iv")


# A paragraph of a real report page, and the same text with every letter substituted (a font whose text
# layer maps glyphs to the wrong letters, as on all 180 pages of one round-2 report).
_PLAIN = ("Revenue for the fiscal year ended January 31, 2023 was $1,284.0 million, an increase of 47% compared "
          "to the prior year. Subscription revenue grew as customers expanded their use of the platform, and "
          "services revenue declined slightly. We continue to invest in research and development, sales and "
          "marketing, and the expansion of our cloud offering to new regions around the world.")
_SHIFT = str.maketrans("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
                       "qwertyuiopasdfghjklzxcvbnmQWERTYUIOPASDFGHJKLZXCVBNM")


def test_letter_similarity_separates_substituted_letters_from_english():
    from rag.clean.shifted import letter_similarity

    plain, shifted = letter_similarity(_PLAIN, 200), letter_similarity(_PLAIN.translate(_SHIFT), 200)
    assert plain > 0.9 and shifted < 0.7
    assert letter_similarity("Revenue 1,284.0 947.3", 200) is None  # too few letters to judge


def test_shifted_pages_go_to_ocr_after_garbled_ones(tmp_path, make_cfg, monkeypatch):
    from rag.clean import ocr

    calls = []
    monkeypatch.setattr(ocr, "ocr_page", lambda pdf, page, **kw: calls.append(page) or
                        ocr.OcrPage(page=page, lines=[f"ocr text {page}"], seconds=0.01, ink=0.2))
    glyphs = " ".join(f"GLYPH<c={n},font=/F1>" for n in range(30))
    pages = [_page(1, [TextBlock(text=_PLAIN)]), _page(2, [TextBlock(text=_PLAIN.translate(_SHIFT))]),
             _page(3, [TextBlock(text=glyphs)])]
    rep, info = clean.clean_report(_report(pages), "Acme", make_cfg())
    assert info["garbled_pages"] == [3] and info["shifted_pages"] == [2] and calls == [3, 2]
    assert rep.ocr_pages == [2, 3] and rep.pages[0].markdown == _PLAIN
    calls.clear()
    rep, info = clean.clean_report(_report(pages), "Acme", make_cfg(overrides={"clean.shifted_threshold": 0}))
    assert info["shifted_pages"] == [] and calls == [3]


def _font_shift(text: str, lower: int, upper: int) -> str:
    """What a font with its own glyph codes puts in a text layer: lower case moved by ``lower`` code points,
    capitals by ``upper``, other characters by ``lower`` where that stays printable, else lost (U+FFFD), like
    the scrambled round-2 report."""
    out = []
    for ch in text:
        k = upper if ch.isupper() else lower
        o = ord(ch) + k
        out.append(ch if ch.isspace() else chr(o) if 0x21 <= o <= 0x7E else "\ufffd")
    return "".join(out)


def test_shifted_pages_over_the_ocr_budget_are_decoded(make_cfg):
    from rag.clean.shifted import letter_similarity

    body = _font_shift(_PLAIN + " " + _PLAIN, -44, -38)
    assert letter_similarity(body, 200) < 0.7
    heading = _font_shift("Results of operations", -44, -38)
    pages = [_page(1, [TextBlock(text=heading), TextBlock(text=body)]), _page(2, [TextBlock(text=_PLAIN)])]
    cfg = make_cfg(overrides={"clean.ocr": False})
    rep, info = clean.clean_report(_report(pages), "Acme", cfg)
    assert info["shifted_pages"] == [1] and info["unshifted_pages"] == [1]
    md = rep.pages[0].markdown
    assert "Revenue for the fiscal year ended January" in md and "Subscription revenue grew" in md
    assert "1,284.0" not in md  # lost glyphs (digits here) stay lost: only OCR reads them
    assert "Results of operations" in md  # a short heading: decoded by the words it spells
    rep2, info2 = clean.clean_report(_report(pages), "Acme", make_cfg(overrides={"clean.ocr": False,
                                                                                "clean.unshift": False}))
    assert info2["unshifted_pages"] == [] and "Revenue for the fiscal" not in rep2.pages[0].markdown


def test_the_reports_dollar_from_its_statement_then_its_place_of_filing():
    """A US 10-K never writes "U.S. dollars" and ERC's currency column can be wrong (a US biotech listed under
    AUD): the place of filing decides before the column; a presentation statement before both; counted
    mentions only when neither is there (an ASX report quoting US$ prices stays AUD)."""
    sec = ["UNITED STATES SECURITIES AND EXCHANGE COMMISSION Washington, D.C. 20549 FORM 10-K"] * 3
    assert units.dollar_currency(sec, default="AUD") == "USD"
    asx = ["ABN 12 345 678 901, listed on the ASX"] * 5 + ["US$ revenue from US$ contracts"] * 3
    assert units.dollar_currency(asx, default="USD") == "AUD"
    assert units.dollar_currency(["in thousands of Canadian dollars"] + ["US$ sales"] * 9 + sec) == "CAD"
    assert units.dollar_currency(["listed on the ASX"] * 2 + ["US$ 5m"]) == "USD"  # two mentions: no evidence
    assert units.stated_dollar(["presented in Canadian dollars", "presented in Hong Kong dollars"]) is None  # a tie


def test_ocr_page_cap_reads_the_same_pages_whatever_the_clock(tmp_path, make_cfg, monkeypatch):
    """ocr_max_pages is a count: the pages read do not depend on how fast OCR runs (the seconds budget is only
    a safety valve, and the record says which limit stopped OCR). Blank pages are not counted."""
    from rag.clean import ocr

    calls = []

    def fake_ocr_page(pdf, page, **kw):
        calls.append(page)
        blank = page == 3
        return ocr.OcrPage(page=page, lines=[] if blank else [f"ocr text {page}"], seconds=0.01,
                           ink=0.0 if blank else 0.2)

    monkeypatch.setattr(ocr, "ocr_page", fake_ocr_page)
    pages = [_page(1, [TextBlock(text="Fine text page.")])] + [_page(n, [], chars=0) for n in range(2, 8)]
    read = {}
    for step in (0.001, 3.0):  # a fast and a slow machine, the same page cap
        _ticking_clock(monkeypatch, step)
        calls.clear()
        cfg = make_cfg(overrides={"clean.ocr_max_pages": 3, "clean.ocr_budget_s": 100, "clean.blank_ink_share": 0.01})
        rep, info = clean.clean_report(_report(pages), "Acme", cfg)
        read[step] = (rep.ocr_pages, list(calls), info["ocr_skipped"], info["ocr_stopped_by"])
    # page 2 read, page 3 blank (tried, not counted), 4 and 5 read; 6 and 7 skipped
    assert read[0.001] == read[3.0] == ([2, 4, 5], [2, 3, 4, 5], 2, "pages")
    assert info["ocr_max_pages"] == 3 and info["blank_pages"] == [3]

    # the seconds valve stops first on a slow enough machine, and says so
    _ticking_clock(monkeypatch, 60.0)
    cfg = make_cfg(overrides={"clean.ocr_max_pages": 3, "clean.ocr_budget_s": 100, "clean.blank_ink_share": 0.01})
    rep, info = clean.clean_report(_report(pages), "Acme", cfg)
    assert info["ocr_stopped_by"] == "seconds" and rep.ocr_pages == [2] and info["ocr_skipped"] == 5

    # no cap: every candidate tried
    _ticking_clock(monkeypatch, 0.001)
    cfg = make_cfg(overrides={"clean.ocr_max_pages": 0, "clean.blank_ink_share": 0.01})
    rep, info = clean.clean_report(_report(pages), "Acme", cfg)
    assert rep.ocr_pages == [2, 4, 5, 6, 7] and info["ocr_skipped"] == 0 and info["ocr_stopped_by"] == ""
