"""Scale and currency of a table (stage 02): "(in thousands)" -> 1_000, "€m" -> 1_000_000 + EUR…

Contract:
- ``find_scale(text) -> (factor, phrase) | None``: the first *unit statement* in ``text`` ("in
  thousands", "(Dollars in millions, except per share data)", "$'000", "US$m", "EUR million",
  "millions of yen", "(000s)", "百万円"). An amount in running prose ("$5.2 million") is NOT a unit
  statement: a scale word right after a number never counts.
- ``find_currency(text, dollar="USD") -> (iso, phrase) | None``: the earliest currency named in
  ``text`` (ISO code, symbol, or words like "U.S. dollars", "yen"); a bare "$" or "dollars" means
  ``dollar`` (the report's own dollar, see ``dollar_currency``).
- ``detect_unit(context_above, header_cells, caption, page_lines, body_cells, dollar) -> Unit``: scale
  and currency searched in that priority (context above the table, its header cells, its caption,
  nearby short page lines nearest first); currency also from currency signs in the body cells
  (before page lines). Each is taken from the first source that states it.
- ``unit_line(title, unit) -> str``: the first Markdown line of a clean table, e.g.
  ``Table: Consolidated income statement — values in thousands of USD, except per share data
  (as printed: "(in thousands, except per share data)")``; it names the phrase verbatim so a reader
  (and ``rag.answer.common.printed.scale_from_text``) sees the scale, the currency and the exceptions.
- ``dollar_currency(texts, default) -> str``: which dollar a report's bare "$" means (USD, AUD, CAD…): the
  one it says it presents in, else where it is filed or listed, else its most-mentioned explicit dollar,
  else ``default``. ``stated_dollar(texts)``: the first of these alone (None when not stated).
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Sequence

THOUSAND, MILLION, BILLION = 1_000, 1_000_000, 1_000_000_000
SCALE_NAMES = {1: "units", THOUSAND: "thousands", MILLION: "millions", BILLION: "billions"}
_WORD_FACTORS = {"thousand": THOUSAND, "thousands": THOUSAND, "million": MILLION, "millions": MILLION,
                 "billion": BILLION, "billions": BILLION}
_ABBR_FACTORS = {"000": THOUSAND, "000s": THOUSAND, "000's": THOUSAND, "k": THOUSAND, "m": MILLION,
                 "mn": MILLION, "mln": MILLION, "mm": MILLION, "bn": BILLION, "b": BILLION}

ISO = ("USD", "EUR", "GBP", "JPY", "AUD", "CAD", "CHF", "CNY", "RMB", "HKD", "INR", "SEK", "NOK", "DKK", "NZD",
       "SGD", "ZAR", "BRL", "KRW", "RUB", "MXN", "ILS", "TWD", "PLN")
# Symbols, longest first so "US$" wins over "$". "$" alone resolves to the report's dollar.
_SYMBOLS = (("US$", "USD"), ("U.S.$", "USD"), ("AU$", "AUD"), ("A$", "AUD"), ("CA$", "CAD"), ("C$", "CAD"),
            ("NZ$", "NZD"), ("HK$", "HKD"), ("S$", "SGD"), ("R$", "BRL"), ("€", "EUR"), ("£", "GBP"),
            ("¥", "JPY"), ("円", "JPY"), ("₹", "INR"), ("₩", "KRW"), ("$", "$"))
_WORDS = (("u.s. dollars?", "USD"), ("us dollars?", "USD"), ("united states dollars?", "USD"),
          ("australian dollars?", "AUD"), ("canadian dollars?", "CAD"), ("new zealand dollars?", "NZD"),
          ("hong kong dollars?", "HKD"), ("singapore dollars?", "SGD"), ("euros?", "EUR"), ("yen", "JPY"),
          ("pounds? sterling", "GBP"), ("sterling", "GBP"), ("british pounds?", "GBP"), ("swiss francs?", "CHF"),
          ("renminbi", "CNY"), ("yuan", "CNY"), ("rupees?", "INR"), ("dollars?", "$"))

_SYM_RE = "|".join(re.escape(s) for s, _ in _SYMBOLS)
_ISO_ALT = "(?:" + "|".join(ISO) + ")"
_CUR_WORD_RE = "|".join(w for w, _ in _WORDS)
_W = r"(?P<w>thousands?|millions?|billions?)"  # scale word
# Things a table may count in thousands/millions besides money ("in thousands of shares").
_COUNTED = r"shares|units|tonnes|tons|barrels|ounces|customers|employees|vehicles"

# Unit statements. Group "w" = scale word, "a" = abbreviation, "j" = Japanese. An amount in prose
# ("$5.2 million") is rejected afterwards by ``_is_amount``.
_SCALE_PATTERNS = [
    # "in thousands", "in USD thousands", "in $ millions", "(€ in millions)", "amounts in billions"
    # ("in millions of homes" is prose: "of" must be followed by a currency or a counted thing)
    re.compile(r"(?i)\b(?:in|of)\s+(?:" + _ISO_ALT + r"\s+|(?:" + _SYM_RE + r")\s*)?" + _W + r"\b"
               r"(?!\s+of\s+(?!(?:" + _CUR_WORD_RE + "|" + _ISO_ALT + "|" + _SYM_RE + "|" + _COUNTED + r")\b))"),
    # "thousands of dollars", "millions of yen", "millions of USD", "Millions of U.S. dollars"
    re.compile(r"(?i)\b" + _W + r"\s+of\s+(?:" + _CUR_WORD_RE + "|" + _ISO_ALT + r")\b"),
    # "(thousand USD)", "(million JPY)", "millions yen"
    re.compile(r"(?i)\b" + _W + r"\s+(?:" + _ISO_ALT + "|" + _CUR_WORD_RE + r")\b"),
    # "Dollars in thousands", "USD millions", "$ in millions", "EUR million", "€ million", "A$ million"
    re.compile(r"(?i)(?:\b(?:" + _CUR_WORD_RE + "|" + _ISO_ALT + r")|" + _SYM_RE + r")\s*(?:in\s+)?" + _W + r"\b"),
    # "$'000", "$000s", "€m", "US$m", "£bn", "RMB'000", "AUD m", "EURm" — not followed by a digit/letter
    re.compile(r"(?:" + _SYM_RE + r"|\b" + _ISO_ALT + r")\s?'?\s?(?P<a>000's|000s|000|mn|mln|mm|bn|m|b|k)"
               r"(?![\w']|[,.]?\s?\d)"),
    # bare "(000s)", "('000)", "in '000s"
    re.compile(r"(?i)\(\s*'?(?P<a>000s|000)'?\s*\)|\bin\s+'?(?P<a2>000s|000)\b"),
    # a scale word alone on a line or in a header cell: "Millions", "(Thousands)"
    re.compile(r"(?im)^\W*" + _W + r"\W*$"),
    # Japanese reports: 百万円 (millions of yen), 千円 (thousands of yen)
    re.compile(r"(?P<j>百万|千)\s*円"),
]
_EXCEPT = re.compile(r"(?i)\bexcept(?:\s+for)?\s+([^)\n;]+)")


@dataclass(frozen=True)
class Unit:
    scale: int | None = None  # 1_000, 1_000_000… (None: not stated)
    currency: str | None = None  # ISO code (None: not stated)
    text: str = ""  # the unit phrase(s) as printed, e.g. "(in thousands, except per share data)"
    exceptions: str = ""  # "per share data" from an "except …" clause
    scale_source: str = ""  # "context" | "header" | "caption" | "page"
    currency_source: str = ""  # the same, or "cells"


def _is_amount(text: str, start: int) -> bool:
    """True when the match at ``start`` follows a number ("5.2 million" is an amount, not a unit)."""
    before = text[:start].rstrip()
    return bool(before) and (before[-1].isdigit() or (before[-1] in "$€£¥" and len(before) > 1 and before[-2].isdigit()))


def find_scale(text: str) -> tuple[int, str] | None:
    """``(factor, matched phrase)`` of the first unit statement in ``text``; None when there is none."""
    if not text:
        return None
    best: tuple[int, int, str] | None = None  # (position, factor, phrase)
    for rx in _SCALE_PATTERNS:
        for m in rx.finditer(text):
            if "a" not in m.groupdict() and _is_amount(text, m.start()):
                continue
            g = m.groupdict()
            if g.get("w"):
                factor = _WORD_FACTORS[g["w"].lower()]
            elif g.get("a") or g.get("a2"):
                factor = _ABBR_FACTORS[(g.get("a") or g.get("a2")).lower()]
            else:
                factor = MILLION if g.get("j") == "百万" else THOUSAND
            if best is None or m.start() < best[0]:
                best = (m.start(), factor, m.group(0).strip())
            break
    return (best[1], best[2]) if best else None


_CURRENCY_RE = re.compile(
    r"(?P<iso>\b" + _ISO_ALT + r"\b)|(?P<sym>" + _SYM_RE + r")|(?i:\b(?P<word>" + _CUR_WORD_RE + r")\b)")


def find_currency(text: str, dollar: str = "USD") -> tuple[str, str] | None:
    """``(ISO code, matched text)`` of the earliest currency in ``text``; "$"/"dollars" -> ``dollar``."""
    m = _CURRENCY_RE.search(text or "")
    if not m:
        return None
    if m.group("iso"):
        code = m.group("iso")
        return ("CNY" if code == "RMB" else code), code
    if m.group("sym"):
        code = dict(_SYMBOLS)[m.group("sym")]
        return (dollar if code == "$" else code), m.group("sym")
    word = m.group("word").lower()
    for pat, code in _WORDS:
        if re.fullmatch(pat, word):
            return (dollar if code == "$" else code), m.group("word")
    return None


def _except_clause(text: str) -> str:
    m = _EXCEPT.search(text or "")
    return m.group(1).strip(" ,.") if m else ""


def _line_of(text: str, phrase: str) -> str:
    """The (stripped) line of ``text`` that holds ``phrase``."""
    for ln in text.splitlines():
        if phrase in ln:
            return ln.strip()
    return phrase


def detect_unit(context_above: str = "", header_cells: Sequence[str] = (), caption: str = "",
                page_lines: Sequence[str] = (), body_cells: Sequence[str] = (), dollar: str = "USD") -> Unit:
    """Scale and currency of one table from its surroundings (priority order in the module doc)."""
    header = "\n".join(c for c in header_cells if c and c.strip())
    sources = [("context", context_above or ""), ("header", header), ("caption", caption or "")]
    sources += [("page", ln) for ln in page_lines if ln and ln.strip()]
    scale = cur = None
    scale_src = cur_src = ""
    phrases: list[str] = []
    exceptions = ""
    for name, text in sources:
        if scale is None:
            s = find_scale(text)
            if s:
                scale, scale_src = s[0], name
                line = _line_of(text, s[1])
                phrases.append(line)
                exceptions = _except_clause(line)
        if cur is None:
            c = find_currency(text, dollar)
            if c:
                cur, cur_src = c[0], name
                line = _line_of(text, c[1])
                if not any(c[1] in p for p in phrases):
                    phrases.append(line)
        if cur is None and name == "caption":
            # Currency signs printed in the amounts ("$ 1,234"): the most common one.
            signs = Counter(sym for cell in body_cells for sym, _ in _SYMBOLS if sym in (cell or ""))
            if signs:
                sym = max(signs, key=lambda s: (signs[s], len(s)))
                code = dict(_SYMBOLS)[sym]
                cur, cur_src = (dollar if code == "$" else code), "cells"
        if scale is not None and cur is not None:
            break
    return Unit(scale, cur, "; ".join(dict.fromkeys(p for p in phrases if p)), exceptions, scale_src, cur_src)


def unit_phrase(unit: Unit) -> str:
    """"values in thousands of USD, except per share data" ("" when neither scale nor currency is known)."""
    if unit.scale is None and unit.currency is None:
        return ""
    if unit.scale is not None and unit.currency:
        s = f"values in {SCALE_NAMES.get(unit.scale, str(unit.scale))} of {unit.currency}"
    elif unit.scale is not None:
        s = f"values in {SCALE_NAMES.get(unit.scale, str(unit.scale))}"
    else:
        s = f"values in {unit.currency}"
    return s + (f", except {unit.exceptions}" if unit.exceptions else "")


def unit_line(title: str, unit: Unit) -> str:
    """First line of a clean table: ``Table: <title> — <unit phrase> (as printed: "<phrase>")``."""
    phrase = unit_phrase(unit)
    parts = [p for p in (title.strip(), phrase) if p]
    line = "Table: " + (" — ".join(parts) if parts else "(untitled)")
    if unit.text and unit.text not in line:
        line += f' (as printed: "{unit.text}")'
    return line


_DOLLAR_HINTS = (
    (r"\bUS\$|\bUSD\b|(?i:\bU\.S\.\s?dollars?|\bUS dollars?|\bUnited States dollars?)", "USD"),
    (r"\bA\$|\bAU\$|\bAUD\b|(?i:\bAustralian dollars?)", "AUD"),
    (r"\bC\$|\bCA\$|\bCAD\b|(?i:\bCanadian dollars?)", "CAD"),
    (r"\bNZ\$|\bNZD\b|(?i:\bNew Zealand dollars?)", "NZD"),
    (r"\bHK\$|\bHKD\b|(?i:\bHong Kong dollars?)", "HKD"),
    (r"\bS\$|\bSGD\b|(?i:\bSingapore dollars?)", "SGD"),
)


# "presented in Australian dollars", "in thousands of Canadian dollars": the report names its own dollar.
STATED_DOLLAR = re.compile(
    r"(?i)(?:presented|expressed|stated|reported|denominated|are|is|in (?:thousands|millions|billions) of)\s+"
    r"(?:in\s+)?(canadian|australian|new zealand|hong kong|singapore|u\.\s?s\.|us|united states) dollars?\b")
_DOLLAR_NAMES = {"canadian": "CAD", "australian": "AUD", "newzealand": "NZD", "hongkong": "HKD", "singapore": "SGD",
                 "us": "USD", "unitedstates": "USD"}
# Where a report is filed or listed says which dollar its bare "$" means when it never says so (a US 10-K
# rarely writes "U.S. dollars"); case-sensitive names of the regulator, exchange or companies law.
_FILED_UNDER = (
    (r"(?i:\bForm 10-K\b)|SECURITIES AND EXCHANGE COMMISSION|Washington, D\.C\. 20549", "USD"),
    (r"\bABN\b|\bASX\b|Corporations Act 2001|Australian Securities", "AUD"),
    (r"\bTSX\b|\bSEDAR\b|Canada Business Corporations|Canadian Securities", "CAD"),
    (r"\bNZX\b|Companies Act 1993", "NZD"),
    (r"Stock Exchange of Hong Kong|\bHKEX\b|Hong Kong Companies Ordinance", "HKD"),
    (r"\bSGX\b|Singapore Exchange", "SGD"),
)
FILED_UNDER_MIN = 5  # mentions that make a place of filing evidence (a report may name another exchange once)


def stated_dollar(texts: Iterable[str]) -> str | None:
    """The dollar the texts say the figures are presented in ("presented in Australian dollars", "in
    thousands of Canadian dollars"): the most stated one; None when none is stated or two tie."""
    seen = Counter(_DOLLAR_NAMES[m.group(1).lower().replace(".", "").replace(" ", "")]
                   for t in texts for m in STATED_DOLLAR.finditer(t or ""))
    return _most(seen, 1)


def _most(counts: Counter[str], least: int) -> str | None:
    """The most counted code when it is counted at least ``least`` times and alone at the top; else None."""
    top = counts.most_common(2)
    if not top or top[0][1] < least or (len(top) == 2 and top[0][1] == top[1][1]):
        return None
    return top[0][0]


def dollar_currency(texts: Iterable[str], default: str = "USD") -> str:
    """The dollar a report's bare "$" most likely means, from the strongest evidence there is: the dollar
    the report says it presents in; else where it is filed or listed (:data:`_FILED_UNDER`, at least
    FILED_UNDER_MIN mentions: a US 10-K never says "U.S. dollars", an ASX report often quotes US$ prices);
    else its most-mentioned explicit dollar; else ``default`` (the dataset's currency column, which can be
    wrong: ERC lists a US biotech under AUD)."""
    texts = [t or "" for t in texts]
    return (stated_dollar(texts) or _most(_counts(_FILED_UNDER, texts), FILED_UNDER_MIN)
            or _most(_counts(_DOLLAR_HINTS, texts), 1) or default)


def _counts(patterns: tuple[tuple[str, str], ...], texts: list[str]) -> Counter[str]:
    """Mentions per code of (pattern, code) pairs over the texts."""
    return Counter({code: sum(len(re.findall(pat, t)) for t in texts) for pat, code in patterns})
