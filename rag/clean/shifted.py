"""Shifted text layers (stage 02): a font whose glyph codes are the real characters moved by a constant.

Contracts:
- ``letter_similarity(text, min_letters) -> float | None``: cosine (0..1) of the a-z histogram to English
  letter frequencies; None below ``min_letters`` letters. Below ``clean.shifted_threshold`` a page is
  "shifted" and goes to OCR.
- ``unshift_blocks(texts, max_shift, min_letters, accept, vocab=None)``: decode one page's text blocks (lower
  case by the code-point offset whose histogram reads as English, capitals and short headings by the
  offset that spells the report's words); None when no offset makes the page English.
- ``unshift_pages(parsed, pages, cfg) -> (parsed, decoded pages)``: the report with those pages' blocks
  decoded, short blocks by the words the report's long blocks spell.
"""
from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from ..core.config import RunConfig
from ..core.records import ParsedReport


# ---- shifted characters (a font whose text layer maps glyphs to the wrong letters) ----------------------------
# English letter frequencies in percent (standard corpus counts). A text layer that decodes to substituted
# letters keeps word shapes and digits but its letter histogram no longer looks like any Latin-script
# language: cosine similarity to these frequencies is ~0.97 for English report pages (0.78 the lowest
# of 5,300 pages of 38 round-2 reports, name lists), ~0.5 for a letter-substituted report.
ENGLISH_LETTER_FREQ = {
    "e": 12.7, "t": 9.1, "a": 8.2, "o": 7.5, "i": 7.0, "n": 6.7, "s": 6.3, "h": 6.1, "r": 6.0, "d": 4.3,
    "l": 4.0, "c": 2.8, "u": 2.8, "m": 2.4, "w": 2.4, "f": 2.2, "g": 2.0, "y": 2.0, "p": 1.9, "b": 1.5,
    "v": 1.0, "k": 0.8, "j": 0.15, "x": 0.15, "q": 0.1, "z": 0.07}
_EN_NORM = sum(v * v for v in ENGLISH_LETTER_FREQ.values()) ** 0.5


def letter_similarity(text: str, min_letters: int) -> float | None:
    """Cosine similarity (0..1, higher = more like English) of the a-z letter histogram of ``text``
    (case-folded) to English letter frequencies; ``None`` below ``min_letters`` letters (too few to judge:
    figure-only pages, covers)."""
    counts = Counter(ch for ch in text.lower() if "a" <= ch <= "z")
    n = sum(counts.values())
    if n < min_letters:
        return None
    dot = sum(counts[k] * v for k, v in ENGLISH_LETTER_FREQ.items())
    norm = sum(v * v for v in counts.values()) ** 0.5
    return round(dot / (norm * _EN_NORM), 4)


def _shifted(ch: str, k: int) -> str:
    o = ord(ch)
    if o > 0x7E or ch.isspace() or not 0x21 <= o + k <= 0x7E:
        return ch  # non-ASCII (incl. the parser's U+FFFD for lost glyphs) and whitespace stay
    return chr(o + k)


def shift_text(text: str, k: int) -> str:
    """Every printable ASCII (and control) character moved by ``k`` code points where the result is printable
    ASCII; whitespace and non-ASCII characters unchanged."""
    return "".join(_shifted(ch, k) for ch in text)


# Memoized: unshift_pages reads every shifted page twice (once for the report's words, once to decode),
# and the page's and its long blocks' offsets are the same both times. Bounded (block and page texts).
@lru_cache(maxsize=4096)
def best_shift(text: str, max_shift: int) -> tuple[int, float]:
    """The code-point offset ``k`` (|k| <= max_shift) that turns the most characters of ``text`` into
    lower-case letters with an English a-z histogram, and that histogram's similarity (0..1). Scoring
    lower-case letters only keeps the offset from landing on upper case (the same histogram 32 code points
    away) and from mixing in capitals, which such fonts often encode with another offset."""
    counts = Counter(ch for ch in text if ord(ch) <= 0x7E and not ch.isspace())
    total = sum(counts.values()) or 1
    best, best_score = (0, 0.0), 0.0
    for k in range(-max_shift, max_shift + 1):
        letters: Counter = Counter()
        for ch, n in counts.items():
            d = _shifted(ch, k)
            if "a" <= d <= "z":
                letters[d] += n
        if not letters:
            continue
        dot = sum(letters[c] * v for c, v in ENGLISH_LETTER_FREQ.items())
        sim = dot / ((sum(v * v for v in letters.values()) ** 0.5) * _EN_NORM)
        score = sim * min(1.0, 2 * sum(letters.values()) / total)  # prose is mostly lower-case letters
        if score > best_score + 1e-9:
            best, best_score = (k, round(sim, 4)), score
    return best


_RAW_WORD = re.compile(r"(\S)([a-z]{2,})")


def capital_shift(decoded: str, k_lower: int, vocab: set[str], max_shift: int) -> int | None:
    """The offset of capitals in text whose lower case was decoded with ``k_lower``: the offset that makes
    most "<raw char><lower-case word>" spellings a known word (``vocab``: lower-case words of the decoded
    text); None when none makes at least two."""
    pairs = Counter((m.group(1), m.group(2)) for m in _RAW_WORD.finditer(decoded)
                    if not m.group(1).isalpha() or m.group(1).isupper())
    best, hits = None, 1
    for k in range(-max_shift, max_shift + 1):
        n = 0
        for (ch, rest), c in pairs.items():
            cap = chr(ord(ch) + k) if 0x21 <= ord(ch) + k <= 0x7E and ord(ch) <= 0x7E else ""
            if "A" <= cap <= "Z" and (cap.lower() + rest) in vocab:
                n += c
        if n > hits:
            best, hits = k, n
    return best


def _known(text: str, k: int, vocab: set[str]) -> int:
    # lower-case spellings only: the same word in upper case sits 32 code points away and would tie
    return sum(1 for w in re.findall(r"[a-z]{3,}", shift_text(text, k)) if w in vocab)


def vocab_shift(text: str, vocab: set[str], max_shift: int, default: int) -> int:
    """The offset that makes more words of a short ``text`` (a heading in a font of its own) known lower-case
    words of the report (``vocab``) than ``default`` does; else ``default``."""
    best, hits = default, _known(text, default, vocab)
    for k in range(-max_shift, max_shift + 1):
        n = _known(text, k, vocab)
        if n > hits:
            best, hits = k, n
    return best


def unshift_blocks(texts: list[str], max_shift: int, min_letters: int, accept: float,
                   vocab: set[str] | None = None) -> tuple[list[str], int] | None:
    """Decode the text blocks of one "shifted" page (a font whose text layer is the real text moved by a
    constant code-point offset): lower case by the page's best offset (a block long enough to judge,
    ``min_letters``, by its own when that reads as English, >= ``accept``), then capitals by the offset that
    spells known words (``capital_shift``). Returns (decoded blocks, the page's lower-case offset), or None
    when no offset makes the page read as English: such a page keeps its text (only OCR can read it)."""
    k_page, sim = best_shift("\n".join(texts), max_shift)
    if k_page == 0 or sim < accept:
        return None
    lower = []
    for t in texts:
        k = k_page
        if sum(1 for ch in t if not ch.isspace()) >= min_letters:
            kb, sb = best_shift(t, max_shift)
            if sb >= accept:
                k = kb
        elif vocab:  # too short for a histogram: the offset that spells more of the report's words
            k = vocab_shift(t, vocab, max_shift, k_page)
        lower.append((t, k))

    def dec_lower(t: str, k: int) -> str:  # only characters that become lower-case letters move
        return "".join(d if "a" <= (d := _shifted(ch, k)) <= "z" else ch for ch in t)

    first = [dec_lower(t, k) for t, k in lower]
    words = vocab or {w for t in first for w in re.findall(r"\b[a-z]{3,}\b", t)}
    k_cap = capital_shift("\n".join(first), k_page, words, max_shift)
    out = []
    for (t, k), d in zip(lower, first):
        chars = []
        for ch, dc in zip(t, d):
            if dc != ch:
                chars.append(dc)  # became a lower-case letter
                continue
            cap = _shifted(ch, k_cap) if k_cap is not None else ch
            if "A" <= cap <= "Z" and cap != ch:
                chars.append(cap)
                continue
            other = _shifted(ch, k)  # digits and punctuation: the lower-case offset
            chars.append(other if not other.isalpha() else ch)
        out.append("".join(chars))
    return out, k_page


def unshift_pages(parsed: ParsedReport, pages: list[int], cfg: RunConfig) -> tuple[ParsedReport, list[int]]:
    """``parsed`` with the text blocks of ``pages`` (shifted, not OCR'd) decoded where an offset makes them
    English (:func:`unshift_blocks`); the pages decoded."""
    c = cfg.clean
    want, done, new_pages = set(pages), [], []
    min_chars = c.shifted_min_letters // 4  # a block this long is judged by its own letter histogram
    # First pass: the report's words as decoded from its long blocks, to decode short ones (headings in
    # fonts of their own) by the words they spell.
    vocab: set[str] = set()
    for p in parsed.pages:
        if p.page in want:
            dec = unshift_blocks([b.text for b in p.blocks], c.shift_max, min_chars, c.shift_accept)
            if dec:
                vocab.update(w for t in dec[0] for w in re.findall(r"\b[a-z]{3,}\b", t))
    for p in parsed.pages:
        dec = unshift_blocks([b.text for b in p.blocks], c.shift_max, min_chars, c.shift_accept,
                             vocab) if p.page in want else None
        if dec is None:
            new_pages.append(p)
            continue
        texts, _ = dec
        new_pages.append(p.model_copy(update={"blocks": [b.model_copy(update={"text": t})
                                                         for b, t in zip(p.blocks, texts)]}))
        done.append(p.page)
    return (parsed.model_copy(update={"pages": new_pages}) if done else parsed), done
