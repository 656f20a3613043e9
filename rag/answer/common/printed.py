"""Number parsing, units/scales and the power-of-1,000 sanity check (stage 06).

Why in code: the small local model copies numbers well but multiplies badly, so it returns the
figure *as printed* plus the scale it saw, and this module does the arithmetic.

Contracts:
- ``parse_printed(s) -> ParsedNumber | None``: "(1,234.5)" -> -1234.5; "12.5%" -> 12.5 with
  ``percent``; "$1.2 billion" -> 1.2 with ``word_scale`` 1e9 (not applied). ``None`` for "N/A" or text
  without a number.
- ``scale_from_text(text) -> Scale``: the unit phrase of a table/line ("values in thousands of USD",
  "(in millions, except per share data)", "$'000") -> factor (1, 1e3, 1e6, 1e9 or None when not
  stated), its currency and the "except ..." clause.
- ``table_unit_for_value(page_text, printed) -> Scale``: the unit line of the table that holds the
  printed value on a page (the clean stage writes one unit line on top of each table).
- Currencies (``currency_in``, ``resolve_dollar``, ``question_currency``, the codes and symbols):
  :mod:`rag.answer.common.currencies`, re-exported here.
- ``scale_sanity(value, pages) -> dict``: flags an answer that is a power-of-1,000 multiple of a value
  printed on its cited pages when no unit on that page explains the factor.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace

from .currencies import (CURRENCY_WORDS, DOLLAR_CODES, ISO_CODES, SYMBOLS,  # noqa: F401 - re-exported
                         currency_in, question_currency, resolve_dollar)

NA = "N/A"

# Scale words and their factors (a "scale" is what a printed number must be multiplied by).
SCALE_WORDS = {
    "units": 1, "unit": 1, "ones": 1,
    "thousand": 1_000, "thousands": 1_000, "k": 1_000, "000": 1_000, "000s": 1_000, "'000": 1_000,
    "million": 1_000_000, "millions": 1_000_000, "mn": 1_000_000, "mln": 1_000_000, "mm": 1_000_000,
    "m": 1_000_000,
    "billion": 1_000_000_000, "billions": 1_000_000_000, "bn": 1_000_000_000, "b": 1_000_000_000,
}

# Digits with separators; thin/no-break spaces may separate thousands, a plain space never does
# ("2023 406" is two numbers).
_NUM_RE = re.compile(r"\d[\d,.'\u202f\u00a0]*\d|\d")
_MINUS = "-\u2212\u2013\u2014"
_SCALE_PHRASE = re.compile(
    r"(?i:(?:\bin|\bof|amounts?\s+in|figures?\s+in|values?\s+in|expressed\s+in)\s+(?:[A-Z]{3}\s+|[$€£¥]\s*)?"
    r"(thousands?|millions?|billions?|units)\b)"
    r"|(?i:\b(thousands?|millions?|billions?)\s+of\b)"
    r"|(?:[$€£¥]|US\$|A\$|C\$|\b[A-Z]{3})\s?'?(000s?|m|mn|bn|b)\b"
    r"|(?i:\(0{3}s?\)|'0{3}|\bin\s+(0{3})s?\b)")


@dataclass(frozen=True)
class ParsedNumber:
    value: float  # sign applied; scale NOT applied
    percent: bool = False
    word_scale: int | None = None  # "1.2 billion" -> 1e9
    currency: str | None = None  # ISO code, "$" (some dollar) or None


@dataclass(frozen=True)
class Scale:
    factor: int | None = None  # None: the text states no unit
    currency: str | None = None
    exceptions: tuple[str, ...] = field(default=())  # "per share", "percent", "ratio"…
    text: str = ""
    where: str = ""  # "table" (unit line above its table) or "line" (the figure's own sentence)


def _to_float(digits: str) -> float | None:
    s = re.sub(r"[\s'\u202f\u00a0]", "", digits)
    if "," in s and "." in s:
        # The later separator is the decimal one ("1.234,5" European, "1,234.5" English).
        if s.rfind(",") > s.rfind("."):
            s = s.replace(".", "").replace(",", ".")
        else:
            s = s.replace(",", "")
    elif "," in s:
        parts = s.split(",")
        # "1,234" / "1,234,567": thousands separators; "12,5": a decimal comma.
        if all(len(p) == 3 for p in parts[1:]):
            s = s.replace(",", "")
        elif len(parts) == 2:
            s = s.replace(",", ".")
        else:
            return None
    elif s.count(".") > 1:
        parts = s.split(".")
        if all(len(p) == 3 for p in parts[1:]):
            s = s.replace(".", "")
        else:
            return None
    try:
        return float(s)
    except ValueError:
        return None


def parse_printed(text: str | float | int | None) -> ParsedNumber | None:
    """The number in a printed figure, sign from "-" or parentheses; scale words reported, not applied."""
    if text is None:
        return None
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return None if math.isnan(float(text)) else ParsedNumber(float(text))
    s = str(text).strip()
    if not s or s.upper().replace(" ", "") in {"N/A", "NA", "NONE", "NULL", "-"}:
        return None
    m = _NUM_RE.search(s)
    if not m:
        return None
    value = _to_float(m.group(0))
    if value is None:
        return None
    before, after = s[: m.start()], s[m.end():]
    negative = ("(" in before and ")" in after) or any(c in before.replace(" ", "")[-2:] for c in _MINUS)
    percent = "%" in after[:3] or "percent" in after.lower()[:12]
    word_scale = None
    w = re.match(r"\s*([A-Za-z']+)", after)
    if w and w.group(1).lower() in SCALE_WORDS and w.group(1).lower() not in {"units", "unit", "ones"}:
        word_scale = SCALE_WORDS[w.group(1).lower()]
    return ParsedNumber(-value if negative else value, percent, word_scale, currency_in(before + after[:8]))


def normalize_scale(word: str | None) -> int | None:
    """Model's scale word ("thousands", "Millions", "000") -> factor; None when unknown/empty."""
    if not word:
        return None
    w = str(word).strip().lower().strip("()'\" ")
    if w.startswith("in "):
        w = w[3:]
    return SCALE_WORDS.get(w)


def scale_from_text(text: str) -> Scale:
    """Unit phrase of a table or line; ``factor`` None when no unit is stated."""
    m = _SCALE_PHRASE.search(text or "")
    factor = None
    if m:
        word = next((g for g in m.groups() if g), "000")  # bare "('000)" / "(000s)" forms
        factor = SCALE_WORDS.get(word.lower().strip("'"), None)
    exceptions: list[str] = []
    ex = re.search(r"except(?:\s+for)?\s+(.+)", text or "", re.IGNORECASE)
    if ex:
        clause = ex.group(1).lower()
        if "share" in clause:
            exceptions.append("per share")
        if "percent" in clause or "%" in clause:
            exceptions.append("percent")
        if "ratio" in clause:
            exceptions.append("ratio")
        if "employee" in clause or "number" in clause or "unit" in clause:
            exceptions.append("count")
    return Scale(factor, currency_in(text or ""), tuple(exceptions), (text or "").strip())


def _digits(s: str) -> str:
    return re.sub(r"\D", "", s)


def table_unit_for_value(page_text: str, printed: str, lookback: int = 3) -> Scale:
    """Unit of the table holding ``printed`` on this page.

    Finds the first line containing the printed digits, walks up over the table's rows (Markdown
    lines starting with "|") and reads the ``lookback`` lines above the table for a unit phrase.
    A value found outside any table takes the unit of its own line (e.g. "$406.1 million").
    Returns ``Scale()`` (factor None) when the value or a unit cannot be found.
    """
    target = _digits(printed)
    if not target:
        return Scale()
    lines = (page_text or "").splitlines()
    for i, line in enumerate(lines):
        hit = next((m for m in _NUM_RE.finditer(line) if _digits(m.group(0)) == target), None)
        if hit is None:
            continue
        if not line.lstrip().startswith("|"):
            # Running text: the figure's own words ("$406.1 million"), else the line's unit phrase.
            p = parse_printed(line[hit.start():])
            if p is not None and p.word_scale:
                cur = currency_in(line[max(0, hit.start() - 4): hit.start()])
                return Scale(p.word_scale, cur, (), line.strip(), "line")
            return replace(scale_from_text(line), where="line")
        j = i
        while j > 0 and lines[j - 1].lstrip().startswith("|"):
            j -= 1
        above = [ln for ln in lines[max(0, j - lookback): j] if ln.strip()]
        # The clean stage's "Table: <title> — values in <scale> of <currency>" line first, then the
        # nearest lines; a line with a scale wins over one with a currency only (a printed unit phrase
        # may wrap over two lines, so the lines joined are tried last).
        canon = [ln for ln in reversed(above) if ln.lstrip().startswith("Table:")]
        currency = None
        for ln in canon + list(reversed(above)):
            sc = scale_from_text(ln)
            if sc.factor is not None:
                return replace(sc, currency=sc.currency or currency, where="table")
            currency = currency or sc.currency
        joined = scale_from_text(" ".join(above))
        if joined.factor is not None:
            return replace(joined, currency=joined.currency or currency, where="table")
        return Scale(None, currency, (), "", "table") if currency else Scale()
    return Scale()


def page_scales(page_text: str) -> set[int]:
    """Every scale stated anywhere on a page (always contains 1: unscaled figures exist everywhere)."""
    out = {1}
    for line in (page_text or "").splitlines():
        f = scale_from_text(line).factor
        if f:
            out.add(f)
    return out


def asks_percent(question: str) -> bool:
    """A percentage/ratio metric ("Gross margin (%)", "NPL ratio", "Return on equity"): as printed, never scaled.
    "margin"/"ratio"/"rate" count only when the question names no currency ("Gross margin (in USD)")."""
    q = question.lower()
    if "%" in q or "percent" in q:
        return True
    # Whole words: "generation" and "operations" hold "ratio".
    # "Return on equity (ROE)", "return on average assets": a return on something is a ratio too.
    return bool(re.search(r"\b(?:ratios?|margins?|rates?|returns? on)\b", q)) and question_currency(question) is None


def value_spans(text: str, printed: str) -> list[tuple[int, int]]:
    """(start, end) of each number in ``text`` whose digits are the printed figure's ("1,312,400" ~ "1312400")."""
    target = _digits(printed)
    return [m.span() for m in _NUM_RE.finditer(text or "") if target and _digits(m.group(0)) == target]


def contains_value(text: str, printed: str) -> bool:
    """Do the printed figure's digits appear as one number in ``text``?"""
    return bool(value_spans(text, printed))


_PER_SHARE_Q = re.compile(r"(?i)\bper (?:ordinary |common |class [a-z] )?share\b|\bEPS\b|\bearnings per\b")


def asks_per_share(question: str) -> bool:
    """"per share", "per Ordinary share", "EPS": a figure per share (never scaled)."""
    return bool(_PER_SHARE_Q.search(question))


def printed_numbers(text: str) -> list[float]:
    """Every number printed in ``text`` (sign from parentheses/minus), for the sanity check."""
    out = []
    for m in re.finditer(r"\(?[-\u2212]?\d[\d,.'\u202f\u00a0]*\d\)?|\d", text or ""):
        p = parse_printed(m.group(0))
        if p is not None and p.value != 0:
            out.append(p.value)
    return out


def scale_sanity(value: float, pages: dict[int, str], rel_tol: float = 1e-6, max_power: int = 3) -> dict:
    """Is ``value`` a printed figure of its cited pages times a power of 1,000 that the page explains?

    ``pages``: {page (1-based): text}. For each printed number ``p`` with ``value / p == 1000**k``
    (|k| <= ``max_power``) a match is recorded. Status:
    - "ok": some match's factor is a scale stated on that page (1 always counts);
    - "suspect": matches exist, but every one is off by a power of 1,000 that no unit on its page
      states (the answer was probably scaled wrongly);
    - "no_match": no printed number relates to the value (computed or copied from elsewhere).
    """
    matches = []
    for page, text in pages.items():
        scales = page_scales(text)
        for p in printed_numbers(text):
            for k in range(-max_power, max_power + 1):
                f = 1000.0 ** k
                if math.isclose(value, p * f, rel_tol=rel_tol):
                    matches.append({"page": page, "printed": p, "factor": f, "explained": f in scales})
    if not matches:
        status = "no_match"
    elif any(m["explained"] for m in matches):
        status = "ok"
    else:
        status = "suspect"
    return {"status": status, "matches": matches[:10]}
