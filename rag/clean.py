"""Stage 02: parsed reports -> ``outputs/<run>/02_clean/<sha1>.json`` (:class:`rag.records.CleanReport`).

Contract:
- ``run_clean(cfg, ds, progress=True) -> DataFrame``: one row per report (columns ``COLUMNS``): pages,
  tables, tables_with_unit, garbled_pages, textless_pages, ocr_pages (pages re-read by OCR),
  ocr_skipped (over ``cfg.clean.ocr_max_pages``), removed_blocks (headers/footers/page numbers),
  serialized_tables, seconds, ocr_seconds, skipped, error. Reads ``01_parse/<sha1>.json``; a report
  whose parse output is missing or invalid gets an ``error`` naming the file, the others still finish.
- Currency key per report = sha256 of ``01_parse/<sha1>.json`` + the clean config (minus speed-only
  knobs) + company + dataset currency + :data:`CODE_VERSION` (+ the llm section when tables are
  serialized): unchanged reports are skipped, a killed run resumes with the unfinished ones.
- Page Markdown (``CleanPage.markdown``) in reading order: headings as ``# `` lines, text blocks as
  paragraphs, list items as ``- `` lines, each table at its ``block_index`` as ``CleanTable.markdown``
  (first line ``Table: <title> — values in <scale> of <currency>``, see :mod:`rag.units`, then the
  grid rebuilt from the cleaned cells). Parser-labelled page headers/footers are dropped.
- Text cleanup is pure functions (``clean_text``, ``normalize_glyphs``, ``fix_broken_words``,
  ``garbled_ratio``, ``repeated_edge_keys``…) tested on real glyph samples.
- A page is re-read with OCR (:mod:`rag.ocr`) when its garbled ratio (max of the parse metric and
  ``garbled_ratio`` of its raw text) exceeds ``cfg.clean.garbled_threshold``, or when it has at most
  ``textless_max_chars`` characters and its image is not blank; most garbled first, then text-less
  pages in page order, at most ``ocr_max_pages`` per report. Pages are 1-based physical pages.
"""
from __future__ import annotations

import re
import time
from collections import Counter
from typing import Any, Iterable

import pandas as pd
from pydantic import BaseModel

from . import tables as tb
from . import units
from .artifacts import Stage, file_sha256, hash_key, read_json
from .config import RunConfig
from .records import CleanPage, CleanReport, CleanTable, ParsedPage, ParsedReport, ParsedTable

# Bump when the clean output changes for the same input and config (invalidates every report).
CODE_VERSION = "clean-1"
STAGE = "02_clean"
# Knobs that change how fast, not what comes out: kept out of the currency key.
_EXECUTION_ONLY = ("ocr_threads",)
COLUMNS = ["sha1", "company", "pages", "tables", "tables_with_unit", "garbled_pages", "textless_pages",
           "ocr_pages", "ocr_skipped", "removed_blocks", "serialized_tables", "seconds", "ocr_seconds",
           "skipped", "error"]

# ---- glyph artefacts ---------------------------------------------------------------------------------
# Tokens left by PDFs whose fonts lack a Unicode map (docling: GLYPH<…>, pdfminer: (cid:N)).
_ARTEFACT = re.compile(r"/?glyph<[^>]*>|GLYPH<[^>]*>|\(cid:\d+\)", re.IGNORECASE)
_UNI_NAME = re.compile(r"/uni([0-9A-Fa-f]{4})")
_BAD_CHAR = re.compile(r"[\ufffd\ue000-\uf8ff\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_LIGATURES = {"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl", "\ufb05": "st",
              "\ufb06": "st"}
# Symbol-font private-use code points U+F020..U+F0FF = ASCII + 0xF000; punctuation maps back.
_PUA_PUNCT = set(":;,.()[]-/'\"!?&%+=*")
_BULLETS = "•●▪■◦‣◆➢➤►"
_SPACES = re.compile(r"[\u00a0\u2000-\u200a\u202f\u205f\u3000\t]")
_ZERO_WIDTH = re.compile(r"[\u200b-\u200d\u2060\ufeff]")
# Wingdings check boxes printed on 10-K cover pages ("Yes ¨ No þ"), only as standalone tokens.
_CHECKBOX = {"¨": "☐", "þ": "☒", "ý": "☒"}
_BREAK_MARK = "\ufffe"  # pdfium's mark for a hyphen at a line end (the break itself is gone)


def _pua(m: re.Match) -> str:
    ch, text, i = m.group(0), m.string, m.start()
    code = ord(ch)
    if 0xF020 <= code <= 0xF0FF and chr(code - 0xF000) in _PUA_PUNCT:
        return chr(code - 0xF000)
    before = text[i - 1] if i else "\n"
    after = text[i + 1] if i + 1 < len(text) else " "
    # A symbol glyph standing alone (line start or between spaces) is a bullet; inside a word, noise.
    return "•" if before.isspace() and (after.isspace() or not after) else ""


def _control(m: re.Match) -> str:
    ch, text, i = m.group(0), m.string, m.start()
    if ch == "\x02":  # pdfium: hyphen at a line end
        return _BREAK_MARK
    if "\x80" <= ch <= "\x9f":  # C1 code from a symbol font: a bullet when it stands alone
        before = text[i - 1] if i else "\n"
        after = text[i + 1] if i + 1 < len(text) else " "
        return "•" if before.isspace() and after.isspace() else ""
    return ""


def normalize_glyphs(text: str) -> str:
    """Glyph-level repairs: ligatures, /uniXXXX names, GLYPH<…>/(cid:N) removal, symbol-font private
    codes (punctuation back to ASCII, stand-alone ones to "•"), stray control codes, check boxes,
    zero-width and odd spaces. Hyphen marks (\\ufffe, \\x02, soft hyphen) are left for
    ``fix_broken_words``."""
    if not text:
        return ""
    for lig, rep in _LIGATURES.items():
        text = text.replace(lig, rep)
    text = _UNI_NAME.sub(lambda m: chr(int(m.group(1), 16)) if not 0xE000 <= int(m.group(1), 16) <= 0xF8FF else "", text)
    text = _ARTEFACT.sub("", text)
    text = re.sub(r"[\ue000-\uf8ff]", _pua, text)
    text = re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]", _control, text)
    text = text.replace("\ufffd", "")
    text = re.sub(r"(?<!\S)([¨þý])(?!\S)", lambda m: _CHECKBOX[m.group(1)], text)
    text = _ZERO_WIDTH.sub("", text)
    return _SPACES.sub(" ", text.replace("\r\n", "\n").replace("\r", "\n"))


def garbled_ratio(text: str) -> float:
    """Share (0..1) of non-space characters that are glyph artefacts, private-use/replacement/control
    codes: the "non-word glyph" share that sends a page to OCR."""
    chars = sum(1 for c in text if not c.isspace())
    if not chars:
        return 0.0
    bad = sum(len(m.group(0)) for m in _ARTEFACT.finditer(text)) + sum(len(m.group(0)) for m in _UNI_NAME.finditer(text))
    bad += len(_BAD_CHAR.findall(_UNI_NAME.sub("", _ARTEFACT.sub("", text))))
    return round(min(1.0, bad / chars), 4)


# ---- broken words ------------------------------------------------------------------------------------
_L = r"[^\W\d_]"  # a letter (any script)
# "manage-\nment", "manage- ment" (docling joins lines with a space), "manage\ufffement" (pdfium).
_HYPHEN_BREAK = re.compile(rf"({_L}+)(?:-[ \t]*\n[ \t]*|- (?=[a-z])|\ufffe\s*)({_L}+)")
_SUSPENDED = {"and", "or", "nor", "to", "und", "et"}  # "pre- and post-tax" keeps its space
_LIG = r"(?:ffi|ffl|fi|fl|ff)"
_LIG_GAP = re.compile(rf"(?<![\w-])(?:({_L}+) )?({_LIG}) ({_L}+)\b", re.IGNORECASE)  # "signi fi cant", "fi nancial"
_LIG_TAIL = re.compile(rf"\b({_L}*{_LIG}) ({_L}+)\b", re.IGNORECASE)  # "signifi cant", "benefi ts"
_LIG_HEAD = re.compile(rf"\b({_L}+) ({_LIG}{_L}+)\b", re.IGNORECASE)  # "signi ficant", "pro fit"
_STOP = {"a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "by", "at", "as", "is", "be", "our", "its",
         "their", "with", "from", "this", "that", "no", "new", "per", "net", "all", "any", "each", "first"}
_WORD = re.compile(rf"{_L}+(?:-{_L}+)*")


def build_vocab(texts: Iterable[str]) -> Counter:
    """Lower-cased words and hyphenated compounds of a report, fragments at line breaks left out.

    Used to decide "manage- ment" -> "management" but "cost- effective" -> "cost-effective"."""
    vocab: Counter = Counter()
    for t in texts:
        t = _HYPHEN_BREAK.sub(" ", normalize_glyphs(t).replace("\xad", ""))
        for w in _WORD.findall(t.lower()):
            vocab[w] += 1
            if "-" in w:
                vocab.update(w.split("-"))
    return vocab


# Prefixes that form hyphenated compounds ("non-attended", "high-profile") even with unseen second parts.
_PREFIXES = {"non", "pre", "post", "self", "co", "re", "multi", "cross", "semi", "anti", "ex", "inter", "intra",
             "sub", "over", "under", "well", "long", "short", "mid", "high", "low", "full", "part", "half",
             "year", "third", "first", "second", "one", "two", "three", "five", "ten"}


def _join_hyphen(a: str, b: str, vocab: Counter) -> str:
    """"a-b" or "ab" for a word broken at a line end: whichever form the report uses elsewhere; else a
    compound when both parts are words of the report (or ``a`` is a compound prefix); else joined."""
    joined, hyph = a + b, f"{a}-{b}"
    al, bl = a.lower(), b.lower()
    if vocab[joined.lower()] > vocab[hyph.lower()]:
        return joined
    if vocab[hyph.lower()] or b[:1].isupper() or al in _PREFIXES:
        return hyph
    if vocab[bl] and (vocab[al] or len(bl) >= 5):
        return hyph  # "cost- effective", "sustainability- related"
    return joined  # "manage- ment", "finan- cial"


def fix_broken_words(text: str, vocab: Counter | None = None) -> str:
    """Soft hyphens, hyphenation at line ends and ligature gaps ("fi nancial"), decided with ``vocab``
    (``build_vocab`` of the whole report; without it: classic rules)."""
    vocab = vocab if vocab is not None else Counter()
    text = re.sub(r"\xad\s*", "", text)

    def hyphen(m: re.Match) -> str:
        a, b = m.group(1), m.group(2)
        sep = m.group(0)[len(a):-len(b)]
        if sep.startswith("- ") and b.lower() in _SUSPENDED and not m.string[m.end():m.end() + 1] == "-":
            return m.group(0)
        return _join_hyphen(a, b, vocab)

    text = _HYPHEN_BREAK.sub(hyphen, text)

    def gap(m: re.Match) -> str:
        prev, lig, nxt = m.group(1), m.group(2), m.group(3)
        whole, right = f"{prev or ''}{lig}{nxt}", f"{lig}{nxt}"
        if prev and (vocab[whole.lower()] > vocab[right.lower()] or (not vocab[right.lower()] and prev.lower() not in _STOP)):
            return whole
        return (prev + " " if prev else "") + right

    text = _LIG_GAP.sub(gap, text)
    if vocab:
        def merge(m: re.Match) -> str:  # only when the report prints the whole word more often
            w = m.group(1) + m.group(2)
            return w if vocab[w.lower()] > vocab[m.group(2).lower()] else m.group(0)

        text = _LIG_HEAD.sub(merge, _LIG_TAIL.sub(merge, text))
    return text.replace(_BREAK_MARK, "-")


def normalize_whitespace(text: str) -> str:
    """Single spaces, no trailing spaces, at most one blank line, no leading/trailing blank lines."""
    text = re.sub(r"[ ]{2,}", " ", text)
    text = "\n".join(ln.strip() for ln in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def clean_text(text: str, vocab: Counter | None = None) -> str:
    """``normalize_glyphs`` -> ``fix_broken_words`` -> bullets as "- " lines -> ``normalize_whitespace``."""
    text = fix_broken_words(normalize_glyphs(text), vocab)
    # Bullets: one "- " item per line (docling's native path joins bullet lines into one block).
    text = re.sub(rf"(^|\s)[{_BULLETS}]\s+", lambda m: ("" if m.start() == 0 else "\n") + "- ", text)
    return normalize_whitespace(text)


# ---- headers, footers, page numbers ---------------------------------------------------------------------
# "12", "Page 4 of 10", "iv" — not 4-digit numbers (years like "2021" head table columns).
_PAGE_NUMBER = re.compile(r"(?i)^(?:page\s+)?(?:\d{1,3}|[ivx]{1,6})(?:\s*(?:of|/)\s*\d{1,3})?$")


def edge_key(line: str) -> str:
    """Comparison key of a header/footer candidate: lower case, digits as "#", single spaces."""
    return re.sub(r"\s+", " ", re.sub(r"\d", "#", line.lower())).strip(" .|-–—:")


def is_page_number(line: str) -> bool:
    return bool(_PAGE_NUMBER.match(line.strip()))


def edge_indices(p: ParsedPage, n_edge: int, zone: float) -> list[int]:
    """Blocks that may be running heads/feet: the first/last ``n_edge`` in reading order, and any block
    whose box lies in the top or bottom ``zone`` share of the page height (reading order can put a
    header third)."""
    n = len(p.blocks)
    idx = set(range(min(n_edge, n))) | set(range(max(0, n - n_edge), n))
    if p.height > 0 and zone > 0:
        for i, b in enumerate(p.blocks):
            if b.bbox and (b.bbox[3] <= zone * p.height or b.bbox[1] >= (1 - zone) * p.height):
                idx.add(i)
    return sorted(idx)


def repeated_edge_keys(pages: list[list[str]], share: float, min_pages: int, max_chars: int = 150) -> set[str]:
    """Keys (``edge_key``) of edge lines (each page's list, see ``edge_indices``) at most ``max_chars``
    long that occur on at least ``share`` of the pages, counted over all pages and over odd and even
    pages apart (running heads often alternate: "12 | Company" left, "Section | 13" right); 2 pages at least."""
    if len(pages) < min_pages:
        return set()
    keys = set()
    for group in (pages, pages[0::2], pages[1::2]):
        seen: Counter = Counter()
        for lines in group:
            seen.update({edge_key(x) for x in lines if edge_key(x) and len(x) <= max_chars})
        keys |= {k for k, n in seen.items() if n >= max(2, share * len(group))}
    # A bare 4-digit number is a year heading a column, not a running head ("##" page numbers stay).
    return {k for k in keys if not re.fullmatch(r"[#\W]*#{4,}[#\W]*", k)}


def _drop_indices(texts: list[str], edge: list[int], keys: set[str]) -> set[int]:
    """Edge blocks to drop: repeated keys, then a page number as the first or last block left."""
    drop = {i for i in edge if edge_key(texts[i]) in keys}
    left = [i for i in range(len(texts)) if i not in drop and texts[i].strip()]
    for i in {left[0], left[-1]} if left else ():
        if is_page_number(texts[i]):
            drop.add(i)
    return drop


# ---- tables and pages -----------------------------------------------------------------------------------
# Words of a unit statement that say nothing about the table ("All amounts are expressed in …").
_UNIT_FILLER = {"all", "amounts", "amount", "figures", "values", "in", "of", "are", "is", "expressed", "stated",
                "unless", "otherwise", "indicated", "noted", "shown", "presented", "and", "the", "except", "for"}


def _unit_only(line: str) -> bool:
    """True for a line that states a unit and nothing else ("(In thousands, except per share data)")."""
    s = units.find_scale(line)
    c = units.find_currency(line)
    if not s and not c:
        return False
    rest = re.sub(r"(?i)\bexcept\b.*", "", line)
    for phrase in (s[1] if s else "", c[1] if c else ""):
        rest = rest.replace(phrase, " ") if phrase else rest
    words = [w for w in re.findall(r"[^\W\d_]+", rest.lower()) if w not in _UNIT_FILLER and len(w) > 1]
    return not words or (len(words) == 1 and units.find_currency(words[0]) is not None)


def _title_like(line: str, skip: set[str]) -> bool:
    """A line that can name a table: mostly words, not a sentence tail, header row or running header."""
    tokens = line.split()
    words = [t for t in tokens if re.search(r"[^\W\d_]{3}", t)]
    return (bool(tokens) and 2 * len(words) >= len(tokens) and not line[0].islower() and line[-1] not in ",;."
            and edge_key(line) not in skip and not _unit_only(line))


def _title(context: str, caption: str, heading: str, max_chars: int, skip: set[str] = frozenset()) -> str:
    """Nearest context line that can name the table (``_title_like``), else the caption, else the
    heading in effect; ``skip`` holds header/footer keys (``edge_key``) never used as a title."""
    lines = [x.strip() for x in context.splitlines() if x.strip()]
    title = next((ln for ln in reversed(lines) if _title_like(ln, skip)), "")
    title = re.sub(r"\s+", " ", title or caption or (heading if heading and _title_like(heading, skip) else "")).strip()
    return title if len(title) <= max_chars else title[: max_chars - 1].rstrip() + "…"


def _columns(markdown: str) -> int:
    sep = next((ln for ln in markdown.splitlines() if re.fullmatch(r"\|(?:\s*:?-{3,}:?\s*\|)+", ln.strip())), "")
    return sep.count("---")


def clean_table(t: ParsedTable, vocab: Counter, *, caption: str, heading: str, page_lines: list[str],
                dollar: str, cfg: RunConfig, skip: set[str] = frozenset(), carry: CleanTable | None = None) -> CleanTable:
    """Cleaned cells -> Markdown grid under a unit line; scale/currency from :func:`rag.units.detect_unit`.

    ``carry``: the previous page's last table when this one opens its page; a table that states no
    unit and has as many columns continues it and takes its unit (a statement split over pages)."""
    cells = [[normalize_whitespace(clean_text(c, vocab)).replace("\n", " ") for c in row] for row in t.cells]
    context = clean_text(t.context_above, vocab)
    head = cells[: max(1, t.header_rows)] if cells else []
    body = cells[max(1, t.header_rows):]
    unit = units.detect_unit(context, [c for r in head for c in r], caption, page_lines,
                             [c for r in body for c in r], dollar)
    grid = tb.to_markdown(cells, t.header_rows) if cells else clean_text(t.markdown, vocab)
    title = _title(context, caption, heading, cfg.clean.table_title_max_chars, skip)
    if (carry is not None and unit.scale is None and unit.currency is None and (carry.scale or carry.currency)
            and _columns(grid) == _columns(carry.markdown)):
        again = units.detect_unit(carry.unit_text, dollar=dollar)
        unit = units.Unit(carry.scale, carry.currency, carry.unit_text, again.exceptions, "previous page", "previous page")
    line = units.unit_line(title, unit)
    return CleanTable(table_id=t.table_id, page=t.page, markdown=line + "\n" + grid, html=t.html,
                      scale=unit.scale, currency=unit.currency, unit_text=unit.text)


def raw_page_text(p: ParsedPage) -> str:
    return "\n".join([b.text for b in p.blocks] + [c for t in p.tables for r in t.cells for c in r])


def page_markdown(p: ParsedPage, vocab: Counter, drop: set[int], heading: str, dollar: str, cfg: RunConfig,
                  skip: set[str] = frozenset(), carry: CleanTable | None = None,
                  cleaned: list[str] | None = None) -> tuple[str, list[CleanTable], str]:
    """Markdown of one parsed page (blocks in ``drop`` left out) -> (markdown, tables, heading after).
    ``carry`` (the previous page's last table) goes to a table printed before any text of this page;
    ``cleaned``: the blocks' texts already passed through ``clean_text`` (computed here when None)."""
    cleaned = cleaned if cleaned is not None else [clean_text(b.text, vocab) for b in p.blocks]
    blocks = [(i, b, txt) for i, (b, txt) in enumerate(zip(p.blocks, cleaned))]
    keep = [(i, b, txt) for i, b, txt in blocks if i not in drop and txt and b.kind not in ("header", "footer")]
    short = [(i, txt) for i, _, txt in keep if len(txt) <= cfg.clean.unit_line_max_chars]
    parts: list[str] = []
    out_tables: list[CleanTable] = []
    by_index: dict[int, list[ParsedTable]] = {}
    for t in p.tables:
        by_index.setdefault(min(t.block_index, len(p.blocks)), []).append(t)
    kinds = {i: b.kind for i, b in enumerate(p.blocks)}
    texts = {i: txt for i, _, txt in blocks}
    kept = {i for i, _, _ in keep}
    for i in range(len(p.blocks) + 1):
        for t in by_index.get(i, []):
            caption = next((texts[j] for j in (i - 1, i) if kinds.get(j) == "caption" and texts.get(j)), "")
            near = [txt for _, txt in sorted(short, key=lambda x: (x[0] >= i, abs(x[0] - i)))]
            opens_page = not parts
            ct = clean_table(t, vocab, caption=caption, heading=heading, page_lines=near, dollar=dollar, cfg=cfg,
                             skip=skip, carry=carry if opens_page else None)
            out_tables.append(ct)
            parts.append(ct.markdown)
        if i < len(p.blocks) and i in kept:
            b, txt = p.blocks[i], texts[i]
            if b.kind == "heading":
                heading = txt.replace("\n", " ")
                parts.append("# " + heading)
            elif b.kind == "list_item" and not txt.startswith("- "):
                parts.append("- " + txt)
            else:
                parts.append(txt)
    return "\n\n".join(parts), out_tables, heading


# ---- one report ---------------------------------------------------------------------------------------------
def _ocr_plan(parsed: ParsedReport, cfg: RunConfig) -> tuple[dict[int, float], list[int], list[int]]:
    """(garbled ratio per page, garbled pages most garbled first, text-less pages in page order)."""
    ratios = {p.page: max(p.metrics.garbled_ratio, garbled_ratio(raw_page_text(p))) for p in parsed.pages}
    garbled = sorted((p.page for p in parsed.pages if ratios[p.page] > cfg.clean.garbled_threshold),
                     key=lambda n: (-ratios[n], n))
    textless = [p.page for p in parsed.pages
                if p.metrics.chars <= cfg.clean.textless_max_chars and p.page not in garbled]
    return ratios, garbled, textless


def _ocr_pages(pdf: str, candidates: list[int], cfg: RunConfig, vocab: Counter) -> tuple[dict[int, str], dict[str, Any]]:
    """OCR ``candidates`` in order until ``ocr_max_pages`` pages were read (blank images do not count)."""
    from .ocr import OcrError, ocr_page

    c = cfg.clean
    texts: dict[int, str] = {}
    info: dict[str, Any] = {"ocr_seconds": 0.0, "ocr_errors": [], "blank_pages": [], "ocr_skipped": 0}
    for n, page in enumerate(candidates):
        if len(texts) >= c.ocr_max_pages:
            info["ocr_skipped"] = len(candidates) - n
            break
        try:
            res = ocr_page(pdf, page, scale=c.ocr_scale, threads=c.ocr_threads, min_score=c.ocr_min_score,
                           row_tolerance=c.ocr_row_tolerance, blank_ink_share=c.blank_ink_share)
        except OcrError as e:
            info["ocr_errors"].append(str(e))
            continue
        info["ocr_seconds"] += res.seconds
        if not res.lines and res.ink < c.blank_ink_share:
            info["blank_pages"].append(page)
            continue
        texts[page] = clean_text(res.text, vocab)
    info["ocr_seconds"] = round(info["ocr_seconds"], 3)
    return texts, info


class TableSentences(BaseModel):
    """LLM output of table serialization: standalone sentences, one per value."""
    sentences: list[str]


SERIALIZE_SYSTEM = (
    "You rewrite one table from a company's annual report as standalone factual sentences. Each sentence "
    "names the company or the subject, the line item (metric), the period or date, the value exactly as "
    "printed, and the unit and currency stated in the table's first line. One sentence per value; skip "
    "empty cells; never compute, round, convert or invent values. Answer with JSON: {\"sentences\": [...]}.")


def serialize_tables(report: CleanReport, cfg: RunConfig, llm=None) -> dict[str, int]:
    """Fill ``CleanTable.serialized`` of up to ``serialize_max_tables`` tables (in place) through
    ``rag.models.get_llm(cfg).complete_many``; returns token usage and counts (failed tables stay None)."""
    if llm is None:
        from .models import get_llm

        llm = get_llm(cfg)
    tables = [t for p in report.pages for t in p.tables][: cfg.clean.serialize_max_tables]
    reqs = [{"messages": [{"role": "system", "content": SERIALIZE_SYSTEM},
                          {"role": "user", "content": f"Company: {report.company}\nPage: {t.page}\n\n"
                                                      f"{t.markdown[: cfg.clean.serialize_max_chars]}"}],
             "schema": TableSentences} for t in tables]
    try:
        results: list[Any] = llm.complete_many(reqs)
    except Exception:  # one failure raises for the batch: retry one by one (answers are cached)
        results = []
        for r in reqs:
            try:
                results.append(llm.complete(**r))
            except Exception as e:  # noqa: BLE001 - recorded, the table keeps serialized=None
                results.append(e)
    usage = {"prompt_tokens": 0, "completion_tokens": 0, "serialized_tables": 0, "serialize_failed": 0}
    for t, res in zip(tables, results):
        if isinstance(res, Exception):
            usage["serialize_failed"] += 1
            continue
        usage["prompt_tokens"] += res.usage.prompt_tokens
        usage["completion_tokens"] += res.usage.completion_tokens
        sentences = [s.strip() for s in res.value.sentences if s and s.strip()]
        if sentences:
            t.serialized = "\n".join(sentences)
            usage["serialized_tables"] += 1
    return usage


def clean_report(parsed: ParsedReport, company: str, cfg: RunConfig, pdf: str | None = None,
                 report_currency: str = "") -> tuple[CleanReport, dict[str, Any]]:
    """One ParsedReport -> CleanReport (+ counts for the summary row). OCR reads ``pdf`` (default:
    the path the parser recorded)."""
    raw = [raw_page_text(p) for p in parsed.pages]
    vocab = build_vocab(raw)
    ratios, garbled, textless = _ocr_plan(parsed, cfg)
    ocr_text: dict[int, str] = {}
    info: dict[str, Any] = {"garbled_pages": garbled, "textless_pages": textless, "ocr_seconds": 0.0,
                            "ocr_skipped": 0, "ocr_errors": [], "blank_pages": []}
    if cfg.clean.ocr and (garbled or textless):
        ocr_text, ocr_info = _ocr_pages(pdf or parsed.pdf, garbled + textless, cfg, vocab)
        info.update(ocr_info)
    default_dollar = report_currency.upper() if report_currency.upper() in ("USD", "AUD", "CAD", "NZD", "HKD", "SGD") else "USD"
    dollar = units.dollar_currency(raw, default=default_dollar)
    # Headers/footers: blocks (parser labels aside) at the page edges repeated on many pages.
    c = cfg.clean
    edge_texts = [[clean_text(b.text, vocab) for b in p.blocks] for p in parsed.pages]
    edges = [edge_indices(p, c.edge_lines, c.edge_zone) for p in parsed.pages]
    keys = repeated_edge_keys([[t[i] for i in e] for t, e in zip(edge_texts, edges)], c.repeated_line_share,
                              c.repeated_min_pages, c.edge_line_max_chars)
    pages: list[CleanPage] = []
    heading = ""
    removed = 0
    carry: CleanTable | None = None
    for p, texts, edge in zip(parsed.pages, edge_texts, edges):
        if p.page in ocr_text:
            pages.append(CleanPage(page=p.page, markdown=ocr_text[p.page], ocr=True, garbled_ratio=ratios[p.page]))
            carry = None
            continue
        drop = _drop_indices(texts, edge, keys)
        removed += len(drop) + sum(1 for i, b in enumerate(p.blocks) if b.kind in ("header", "footer") and i not in drop)
        md, tabs, heading = page_markdown(p, vocab, drop, heading, dollar, cfg, keys, carry, texts)
        carry = tabs[-1] if tabs else None
        pages.append(CleanPage(page=p.page, markdown=md, tables=tabs, garbled_ratio=ratios[p.page]))
    report = CleanReport(sha1=parsed.sha1, company=company, pages=pages, ocr_pages=sorted(ocr_text))
    tables = [t for pg in pages for t in pg.tables]
    info.update(removed_blocks=removed, dollar=dollar, repeated_keys=sorted(keys), tables=len(tables),
                tables_with_unit=sum(1 for t in tables if t.scale is not None or t.currency is not None))
    return report, info


def load_parsed(path) -> ParsedReport:
    """Read ``01_parse/<sha1>.json``; a clear error naming the file when missing or invalid."""
    from pathlib import Path

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run stage 01_parse first (or its parse failed)")
    from pydantic import ValidationError

    data = read_json(path)  # ValueError naming the file on bad JSON
    try:
        return ParsedReport.model_validate(data)
    except ValidationError as e:
        first = "; ".join(f"{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in e.errors()[:3])
        raise ValueError(f"{path}: not a valid ParsedReport ({e.error_count()} problem(s): {first})") from None


def clean_key(cfg: RunConfig, parse_hash: str, company: str, currency: str) -> str:
    knobs = {k: v for k, v in cfg.clean.model_dump(mode="json").items() if k not in _EXECUTION_ONLY}
    llm = cfg.section_hash("llm") if cfg.clean.serialize_tables else ""
    return hash_key(parse_hash, knobs, company, currency, llm, CODE_VERSION)


# ---- stage entry point -----------------------------------------------------------------------------------------
def run_clean(cfg: RunConfig, ds, progress: bool = True) -> pd.DataFrame:
    """Clean every report of ``ds`` into ``02_clean/<sha1>.json``; one summary row per report."""
    stage = Stage(cfg, STAGE)
    parse_dir = cfg.run_dir / "01_parse"
    rows: list[dict[str, Any]] = []
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(ds.reports), desc="clean", unit="report")
    for r in ds.reports:
        row: dict[str, Any] = {c: 0 for c in COLUMNS}
        row.update(sha1=r.sha1, company=r.company, skipped=False, error="", seconds=0.0, ocr_seconds=0.0)
        src = parse_dir / f"{r.sha1}.json"
        t0 = time.perf_counter()
        try:
            key = clean_key(cfg, file_sha256(src) if src.exists() else "", r.company, r.currency)
            if src.exists() and stage.is_current(r.sha1, key, f"{r.sha1}.json"):
                old = stage.item_info(r.sha1)
                row.update({c: old[c] for c in COLUMNS if c in old and c not in ("seconds", "skipped", "error")})
                row["skipped"] = True
            else:
                parsed = load_parsed(src)
                with stage.timed(r.sha1):
                    report, info = clean_report(parsed, r.company, cfg, pdf=str(r.pdf), report_currency=r.currency)
                    if cfg.clean.serialize_tables:
                        usage = serialize_tables(report, cfg)
                        stage.add_tokens(prompt_tokens=usage["prompt_tokens"], completion_tokens=usage["completion_tokens"])
                        info.update(serialized_tables=usage["serialized_tables"], serialize_failed=usage["serialize_failed"])
                    stage.write_json(f"{r.sha1}.json", report.model_dump(mode="json"), indent=None)
                row.update(pages=len(report.pages), tables=info["tables"], tables_with_unit=info["tables_with_unit"],
                           garbled_pages=len(info["garbled_pages"]), textless_pages=len(info["textless_pages"]),
                           ocr_pages=len(report.ocr_pages), ocr_skipped=info["ocr_skipped"],
                           removed_blocks=info["removed_blocks"], serialized_tables=info.get("serialized_tables", 0),
                           ocr_seconds=info["ocr_seconds"], seconds=round(time.perf_counter() - t0, 3))
                stage.mark_done(r.sha1, key, **{c: row[c] for c in COLUMNS if c not in ("sha1", "skipped", "error")},
                                ocr_page_list=report.ocr_pages, garbled_page_list=info["garbled_pages"],
                                blank_pages=info["blank_pages"], ocr_errors=info["ocr_errors"], dollar=info["dollar"],
                                repeated_keys=info["repeated_keys"][:50])
        except (FileNotFoundError, ValueError) as e:
            row["error"] = str(e) if str(src) in str(e) else f"{src}: {e}"
        except Exception as e:  # a bug or library error on one report must not stop the others
            row["error"] = f"{src}: {type(e).__name__}: {e}"
        rows.append(row)
        if bar:
            bar.update(1)
            bar.set_postfix(ocr=sum(x["ocr_pages"] for x in rows))
    if bar:
        bar.close()
    df = pd.DataFrame(rows, columns=COLUMNS)
    failures = {x["sha1"]: x["error"] for x in rows if x["error"]}
    stage.finish(counts={"reports": len(rows), "cleaned": int((df.error == "").sum()), "failed": len(failures),
                         "skipped": int(df.skipped.sum()), "pages": int(df.pages.sum()), "tables": int(df.tables.sum()),
                         "ocr_pages": int(df.ocr_pages.sum()), "garbled_pages": int(df.garbled_pages.sum())},
                 inputs={r.sha1: str(parse_dir / f"{r.sha1}.json") for r in ds.reports},
                 extra={"failures": failures})
    return df
