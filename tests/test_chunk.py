"""Stage 03 (chunking): boundaries, pages, overlap, tables, token limits, currency."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from rag.core.artifacts import read_json, read_jsonl, write_json_atomic
from rag.chunk import atoms, chunk_report, pack, run_chunk, split_page, table_pieces, token_counter
from rag.core.dataset import Dataset, Report
from rag.core.records import Chunk, CleanPage, CleanReport, CleanTable


WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
         "quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()


def sentences(page: int, n: int) -> list[str]:
    """``n`` distinct sentences tagged with their page (``pg<page>s<i>``)."""
    return [f"Sentence pg{page}s{i} says {WORDS[i % 26]} {WORDS[(i * 7) % 26]} grew by {i}.{page} percent."
            for i in range(n)]


UNIT = "(in thousands of USD)"
HEADER = "| Item | 2023 | 2022 |"
SEP = "|---|---|---|"


def table_md(n_rows: int, page: int) -> tuple[str, list[str]]:
    rows = [f"| Line item {page}-{i} {WORDS[i % 26]} | {1000 + i:,} | {900 + i:,} |" for i in range(n_rows)]
    return "\n".join([UNIT, HEADER, SEP, *rows]), rows


def make_report(pages: int = 3, n_sent: int = 24, n_rows: int = 30, company: str = "Acme Corp") -> CleanReport:
    out = []
    for p in range(1, pages + 1):
        sents = sentences(p, n_sent)
        tmd, _ = table_md(n_rows, p)
        heading = f"# Section {p}\n\n" if p != 2 else ""  # page 2 has no heading: carries page 1's
        body = " ".join(sents[: n_sent // 2]) + "\n\n" + " ".join(sents[n_sent // 2:])
        md = f"{heading}{body}\n\n{tmd}\n\nClosing line pg{p}."
        out.append(CleanPage(page=p, markdown=md, tables=[
            CleanTable(table_id=f"{p}-0", page=p, markdown=tmd, html="", unit_text=UNIT, scale=1000,
                       currency="USD")]))
    return CleanReport(sha1="ab" * 20, company=company, pages=out)


def body(c: Chunk, with_header: bool = True) -> str:
    return c.text.split("\n", 1)[1] if with_header else c.text


@pytest.fixture
def cfg(make_cfg):
    return make_cfg(overrides={"chunk.sizes": [80], "chunk.overlap": 25})


@pytest.fixture
def count(cfg):
    return token_counter(cfg)


def test_chunks_stay_on_their_page_and_cover_every_sentence(cfg, count):
    rep = make_report()
    chunks = chunk_report(rep, 80, cfg, count)
    assert [c.page for c in chunks] == sorted(c.page for c in chunks)
    for c in chunks:
        tags = set(re.findall(r"pg(\d+)", c.text))
        assert tags <= {str(c.page)}, f"{c.chunk_id} mixes pages {tags}"
        assert c.text.startswith(f"Acme Corp | page {c.page}")
        assert c.chunk_id.startswith(f"{rep.sha1[:8]}-s80-p{c.page}-")
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    for p in range(1, 4):
        text = "\n".join(c.text for c in chunks if c.page == p and c.kind == "text")
        for s in sentences(p, 24) + [f"Closing line pg{p}."]:
            assert s in text


def test_token_limit_and_token_counts(cfg, count):
    chunks = chunk_report(make_report(), 80, cfg, count)
    assert chunks
    for c in chunks:
        assert c.tokens == count(c.text)  # header included in the count
        assert c.tokens <= 80, c.chunk_id


def test_overlap_repeats_whole_trailing_sentences(cfg, count):
    chunks = [c for c in chunk_report(make_report(pages=1, n_sent=40), 80, cfg, count) if c.kind == "text"]
    assert len(chunks) >= 3
    overlapped = 0
    for a, b in zip(chunks, chunks[1:]):
        first_b = re.split(r"(?<=\.)\s+", body(b).strip())[0]
        if first_b in body(a):
            overlapped += 1
            assert count(first_b) <= 25
            assert body(a).rstrip().endswith(first_b) or first_b in body(a)
    assert overlapped >= len(chunks) - 2  # paragraph ends may leave no room; the rest overlap


def test_overlap_zero_gives_disjoint_chunks(make_cfg):
    cfg = make_cfg(overrides={"chunk.sizes": [80], "chunk.overlap": 0})
    count = token_counter(cfg)
    chunks = [c for c in chunk_report(make_report(pages=1, n_sent=40), 80, cfg, count) if c.kind == "text"]
    seen: list[str] = []
    for c in chunks:
        for s in re.findall(r"pg1s\d+", c.text):
            assert s not in seen
            seen.append(s)


def test_tables_are_own_chunks_split_by_whole_rows_with_unit_and_header(cfg, count):
    rep = make_report(pages=1)
    chunks = [c for c in chunk_report(rep, 80, cfg, count) if c.kind == "table"]
    _, rows = table_md(30, 1)
    assert len(chunks) > 1
    got = []
    for c in chunks:
        lines = body(c).split("\n")
        assert lines[:3] == [UNIT, HEADER, SEP]
        assert all(ln in rows for ln in lines[3:]), "a row was cut"
        got += lines[3:]
        assert c.table_id == "1-0" and c.tokens <= 80
    assert got == rows  # every row exactly once, in order
    text_chunks = [c for c in chunk_report(rep, 80, cfg, count) if c.kind == "text"]
    assert not any("|" in body(c) for c in text_chunks)


def test_unit_text_added_when_table_markdown_lacks_it(count):
    md = "\n".join([HEADER, SEP] + [f"| r{i} | {i} | {i} |" for i in range(40)])
    pieces = table_pieces(md, "(in millions)", 40, count)
    assert len(pieces) > 1
    assert all(p.split("\n")[:3] == ["(in millions)", HEADER, SEP] for p in pieces)


def test_single_overlong_row_exceeds_limit_but_is_never_cut(cfg, count):
    """Documented exception: a row longer than the chunk size stays whole in a piece of its own."""
    long_row = "| " + " ".join(WORDS * 6) + " | 1 | 2 |"
    md = "\n".join([UNIT, HEADER, SEP, "| a | 1 | 2 |", long_row, "| b | 3 | 4 |"])
    rep = CleanReport(sha1="cd" * 20, company="X", pages=[CleanPage(page=1, markdown=md, tables=[
        CleanTable(table_id="1-0", page=1, markdown=md, html="", unit_text=UNIT)])])
    chunks = chunk_report(rep, 80, cfg, count)
    over = [c for c in chunks if c.tokens > 80]
    assert len(over) == 1 and long_row in over[0].text
    assert body(over[0]).split("\n") == [UNIT, HEADER, SEP, long_row]
    assert all(c.tokens <= 80 for c in chunks if c is not over[0])


def test_stray_grid_in_page_text_is_a_table_chunk(cfg, count):
    md = "Intro sentence here.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nAfter text."
    segs, _ = split_page(md, [], "")
    assert [s.kind for s in segs] == ["text", "table", "text"]
    chunks = chunk_report(CleanReport(sha1="ef" * 20, company="Y", pages=[CleanPage(page=4, markdown=md)]),
                          80, cfg, count)
    assert [c.kind for c in chunks] == ["text", "table", "text"]
    assert chunks[1].table_id is None and "| 1 | 2 |" in chunks[1].text


def test_serialized_table_chunks(cfg, count):
    tmd, _ = table_md(3, 1)
    ser = "Revenue was 1,000 thousand USD in 2023. Costs were 900 thousand USD in 2022."
    rep = CleanReport(sha1="aa" * 20, company="Z", pages=[CleanPage(page=1, markdown=tmd, tables=[
        CleanTable(table_id="1-0", page=1, markdown=tmd, html="", serialized=ser)])])
    chunks = chunk_report(rep, 80, cfg, count)
    st = [c for c in chunks if c.kind == "serialized_table"]
    assert len(st) == 1 and ser in st[0].text and st[0].table_id == "1-0"


def test_heading_carries_over_pages_and_header_can_be_off(make_cfg, cfg, count):
    chunks = chunk_report(make_report(), 80, cfg, count)
    p2 = [c for c in chunks if c.page == 2]
    assert all(c.heading == "Section 1" for c in p2)
    assert p2[0].text.startswith("Acme Corp | page 2 | Section 1\n")
    off = make_cfg(overrides={"chunk.sizes": [80], "chunk.context_header": False})
    plain = chunk_report(make_report(), 80, off, count)
    assert not any(c.text.startswith("Acme Corp |") for c in plain)
    assert plain[0].text.startswith("# Section 1")


def test_long_sentence_split_into_words_and_long_word_cut(count):
    sent = " ".join(WORDS * 5) + "."
    parts = atoms(sent, 20, count)
    assert len(parts) > 5 and all(count(t) <= 20 for _, t in parts)
    texts = pack(parts, 20, 0, count)
    assert all(count(t) <= 20 for t in texts)
    assert " ".join(texts) == sent
    url = "http://" + "x1y2" * 100
    assert "".join(t for _, t in atoms(url, 10, count)) == url


def _write_clean(cfg, rep: CleanReport) -> None:
    write_json_atomic(cfg.run_dir / "02_clean" / f"{rep.sha1}.json", rep.model_dump(mode="json"))


def _ds(tmp_path: Path, reps: list[CleanReport]) -> Dataset:
    return Dataset(root=tmp_path, name="t", questions=(), gold={},
                   reports=tuple(Report(sha1=r.sha1, company=r.company, currency="USD", pdf=tmp_path / "x.pdf")
                                 for r in reps))


def test_run_chunk_writes_each_size_and_skips_current_items(make_cfg, tmp_path):
    cfg = make_cfg(overrides={"chunk.sizes": [80, 300]})
    a, b = make_report(), make_report(company="Beta Inc").model_copy(update={"sha1": "cd" * 20})
    for r in (a, b):
        _write_clean(cfg, r)
    ds = _ds(tmp_path, [a, b])
    df = run_chunk(cfg, ds, progress=False)
    assert len(df) == 4 and set(df["size"]) == {80, 300}
    out = cfg.run_dir / "03_chunk"
    small = read_jsonl(out / f"{a.sha1}.s80.jsonl")
    big = read_jsonl(out / f"{a.sha1}.s300.jsonl")
    assert len(small) > len(big) and all(Chunk.model_validate(r).size == 300 for r in big)
    mtimes = {p.name: p.stat().st_mtime_ns for p in out.glob("*.jsonl")}
    df2 = run_chunk(cfg, ds, progress=False)
    assert (df2["seconds"] == 0).all() and list(df2["chunks"]) == list(df["chunks"])
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("*.jsonl")} == mtimes
    _write_clean(cfg, b.model_copy(update={"pages": b.pages[:1]}))  # b changed: only b is redone
    df3 = run_chunk(cfg, ds, progress=False)
    redone = df3[df3["seconds"] > 0]
    assert set(redone["sha1"]) == {b.sha1}
    assert (out / f"{a.sha1}.s80.jsonl").stat().st_mtime_ns == mtimes[f"{a.sha1}.s80.jsonl"]
    assert (cfg.run_dir / "03_chunk" / "manifest.json").exists()
    more = make_cfg(overrides={"chunk.sizes": [80, 300, 1000]})  # a new size: only it is chunked
    df4 = run_chunk(more, ds, progress=False)
    assert set(df4.loc[df4["seconds"] > 0, "size"]) == {1000}


def test_bad_clean_file_names_the_file(make_cfg, tmp_path):
    cfg = make_cfg()
    rep = make_report()
    path = cfg.run_dir / "02_clean" / f"{rep.sha1}.json"
    write_json_atomic(path, {"sha1": rep.sha1, "pages": "nope"})
    # one bad input is that item's failure (named with its file), not the stage's: the others go on
    df = run_chunk(cfg, _ds(tmp_path, [rep]), progress=False)
    assert df["error"].str.contains(re.escape(str(path))).all()
    man = read_json(cfg.run_dir / "03_chunk" / "manifest.json")
    assert man["counts"]["failed"] == len(cfg.chunk.sizes) and str(path) in str(man["failures"])
    os.remove(path)
    with pytest.raises(FileNotFoundError, match="02_clean"):
        run_chunk(cfg, _ds(tmp_path, [rep]), progress=False)


def test_chunk_browser_filters_and_shows_neighbours(make_cfg, tmp_path):
    from rag.views.widgets.chunk_browser import chunk_browser

    cfg = make_cfg(overrides={"chunk.sizes": [80]})
    rep = make_report()
    _write_clean(cfg, rep)
    run_chunk(cfg, _ds(tmp_path, [rep]), progress=False)
    ui = chunk_browser(cfg)
    (report_dd, size_dd), (page_dd, kind_dd) = ui.children[0].children, ui.children[1].children
    listing, detail = ui.children[2], ui.children[4]
    assert report_dd.value == rep.sha1 and size_dd.value == 80
    page_dd.value, kind_dd.value = 2, "table"
    chunks = read_jsonl(cfg.run_dir / "03_chunk" / f"{rep.sha1}.s80.jsonl")
    want = [i for i, c in enumerate(chunks) if c["page"] == 2 and c["kind"] == "table"]
    assert [v for _, v in listing.options] == want
    i = listing.value
    assert chunks[i]["chunk_id"] in detail.value and chunks[i - 1]["chunk_id"] in detail.value
    assert f"<b>{chunks[i]['tokens']}</b> tokens" in detail.value
    ui.children[3].children[1].click()  # next
    assert listing.value == want[1]
