"""Text cleanup of stage 02 (pure functions on strings, tested on real glyph samples).

Contract:
- ``normalize_glyphs(text) -> str``: ligatures, /uniXXXX names, GLYPH<…>/(cid:N) artefacts, symbol-font
  private codes, stray control codes, check boxes, zero-width and odd spaces repaired; hyphen marks are
  left for ``fix_broken_words``.
- ``garbled_ratio(text) -> float``: share (0..1) of non-space characters that are glyph artefacts or
  private-use/replacement/control codes (what sends a page to OCR).
- ``build_vocab(texts) -> Counter`` and ``fix_broken_words(text, vocab) -> str``: words broken at line
  ends and ligature gaps rejoined the way the report itself spells them elsewhere.
- ``clean_text(text, vocab) -> str``: the whole chain (glyphs -> broken words -> bullets as "- " lines
  -> ``normalize_whitespace``), applied to every block, cell and OCR text.
- Running heads and feet: ``edge_indices`` (candidate blocks of a page), ``repeated_edge_keys`` (their
  ``edge_key``s repeated on many pages), ``drop_indices`` (what one page loses), ``is_page_number``.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Iterable

from ..core.records import ParsedPage

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


def drop_indices(texts: list[str], edge: list[int], keys: set[str]) -> set[int]:
    """Edge blocks to drop: repeated keys, then a page number as the first or last block left."""
    drop = {i for i in edge if edge_key(texts[i]) in keys}
    left = [i for i in range(len(texts)) if i not in drop and texts[i].strip()]
    for i in {left[0], left[-1]} if left else ():
        if is_page_number(texts[i]):
            drop.add(i)
    return drop
