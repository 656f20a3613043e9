"""Company of a report, guessed from its text (``rag init`` fills subset.csv with it; the currency:
rag.clean.currency; rag.init_filing guesses the filing type and period).

Contract: ``guess_company(pages) -> str | None`` (the currency: :mod:`rag.clean.currency`): heuristics on the
text of the pages (``page_texts``; the first FIRST_PAGES, and a stated currency on any page), measured by
benchmarks/init_guess.py; None when nothing is found. ``page_texts(pdf, n=MAX_PAGES) -> [text]`` of the first
``n`` pages (pypdfium2).
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path

from .core.pdf import pdf_page_texts
from .retrieve.route import normalize_tokens

FIRST_PAGES = 20  # company and currency are read here: cover, contents, letters, 10-K cover page
MAX_PAGES = 400  # ... and a stated presentation currency ("presented in Australian dollars") anywhere up to here


def page_texts(pdf: Path, n: int = MAX_PAGES) -> list[str]:
    """Text of the first ``n`` pages (pypdfium2: fast, no layout analysis). Raises pypdfium2's
    PdfiumError (or OSError) on a file that is not a readable PDF."""
    texts = [text for _, text in pdf_page_texts(pdf, first=n)]
    if not texts:
        raise ValueError("the PDF has no pages")
    return texts



# ---- company name ---------------------------------------------------------------------------------
# Legal forms that end a company name. Group/Holdings also end names ("Epson Group") but mostly of the
# group, not the issuer: they count less (WEAK).
_FORMS = ("Inc Incorporated Corp Corporation Ltd Limited plc Plc LLC L.P. LP AG SE SA S.A. N.V. NV B.V. "
          "S.p.A. SpA GmbH KGaA ASA AB Oyj K.K. Bhd Berhad Co Company Group Holdings Holding").split()
_SUFFIX = "(?:" + "|".join(sorted({re.escape(v) for f in _FORMS for v in (f, f.upper())}, key=len, reverse=True)) + ")"
_SUF = rf"{_SUFFIX}\.?(?![\w.])"
_WORD = r"(?:[A-Z][\w'’.&-]*|\d+[A-Za-z][\w-]*|&|\([A-Z][\w .&-]*\))"  # capitalized, "3M", "&", "(HOLDINGS)"
# A name inside running text: up to 7 capitalized words, then the legal form(s) ("Co., Ltd.").
_NAME_RE = re.compile(rf"(?:{_WORD}[ \t]+){{0,6}}{_WORD},?[ \t]+{_SUF}(?:,?[ \t]+{_SUF})*")
_PARTICLE = r"(?:of|and|de|du|des|la|le|di|del|der|van|von|for|the)"  # "Bank of America Corporation"
# A line that is nothing but a name may start in lower case ("abrdn Japan Investment Trust plc").
_LINE_NAME_RE = re.compile(rf"[\w(][\w'’.&()-]*(?:[ \t]+(?:{_WORD}|{_PARTICLE})){{0,6}},?[ \t]+{_SUF}"
                           rf"(?:,?[ \t]+{_SUF})*")
# Running headers add the document title and a page number around the name.
_HEADER_NOISE = re.compile(r"(?i)^\s*\d{1,3}\s+|\s+\d{1,3}\s*$|\s*(?:annual|integrated|sustainability)?\s*"
                           r"report(?:\s+and\s+(?:accounts|financial\s+statements))?(?:\s+20\d\d(?:/\d\d)?)?\s*$")
_REGISTRANT = re.compile(r"([^\n]+)\n[ \t(]*exact name of (?:the )?registrant", re.IGNORECASE)
# "X Inc. (the "Company")", "X Limited (referred to hereafter as the 'Company'", "“Company” X (Holdings) Limited".
_DEFINES = re.compile(r"\s*\([^()]{0,50}?\b(?:the\s+)?[“\"‘']?(?:Company|Registrant|Issuer)\b", re.IGNORECASE)
_DEFINED = re.compile(r"(?:[“\"‘']Company[”\"’']|parent company,|Company name)\s*$", re.IGNORECASE)
_CANON = {"ltd": "limited", "corp": "corporation", "inc": "incorporated", "co": "company", "holding": "holdings"}
_WEAK = {"group", "holdings", "company"}
_LEGAL = {f.lower().replace(".", "") for f in _FORMS} | set(_CANON.values())
# Words that make a match a phrase, not a name ("The Company", "Notes to the Group", "Stock Exchange ... Limited").
_NOT_NAME = {"the", "our", "its", "this", "annual", "report", "statements", "notes", "directors", "auditor",
             "auditors", "exchange", "item", "form", "section", "consolidated", "parent", "subsidiaries",
             "contents"}


def _key(name: str) -> tuple[str, ...] | None:
    """Grouping key: case-folded tokens, "Ltd"/"Limited" alike, a leading "The" dropped; None when the
    phrase has no word of its own besides legal forms and generic words."""
    toks = [_CANON.get(t, t) for t in normalize_tokens(name)]
    if toks[:1] == ["the"]:
        toks = toks[1:]
    if not any(t not in _LEGAL for t in toks) or _NOT_NAME & set(toks):
        return None
    return tuple(toks)


def guess_company(pages: list[str]) -> str | None:
    """The issuer's name as printed, or None. Every name ending in a legal form in the first pages scores
    per occurrence: 1 (x2 as a line of its own: titles and running headers; x0.4 when it ends in
    Group/Holdings/Company or is an Australian "Pty" subsidiary), +1 on pages 1-3, +10 as a line of the
    cover (first page with text) or where the text defines it as "the Company", +50 on a 10-K/20-F
    "exact name of registrant" line; then +1 per page it is on and +0.5 per mention of its short form
    ("Microsoft" of "Microsoft Corporation", up to 40). Spellings group by :func:`_key` ("Ltd" = "Limited");
    the most frequent spelling in mixed case wins (covers often print the name in capitals)."""
    score: dict[tuple, float] = defaultdict(float)
    spellings: dict[tuple, Counter] = defaultdict(Counter)
    on_pages: dict[tuple, set] = defaultdict(set)
    pages = pages[:FIRST_PAGES]
    cover = next((i for i, t in enumerate(pages, 1) if t.strip()), 0)

    def add(name: str, page: int, weight: float) -> None:
        name = name.strip(" ,_")
        key = _key(name)
        if key is None:
            return
        weak = key[-1] in _WEAK or "pty" in key
        score[key] += weight * (0.4 if weak else 1.0) + (1.0 if page <= 3 else 0.0)
        spellings[key][name] += 1
        on_pages[key].add(page)

    for page, text in enumerate(pages, 1):
        for m in _REGISTRANT.finditer(text):
            add(m.group(1), page, 50.0)
        for m in _NAME_RE.finditer(text):
            if _DEFINES.match(text, m.end()) or _DEFINED.search(text[max(0, m.start() - 30):m.start()]):
                add(m.group(0), page, 10.0)
        for line in text.splitlines():
            for seg in re.split(r"\s+[|–—]\s+|\t", line):  # "02 | Downer EDI Limited"
                seg = _HEADER_NOISE.sub("", seg).strip()
                if _LINE_NAME_RE.fullmatch(seg) and len(seg.split()) <= 8:
                    add(seg, page, 10.0 if page == cover else 2.0)
                else:
                    for m in _NAME_RE.finditer(seg):
                        add(m.group(0), page, 1.0)
    if not score:
        return None
    words = " " + " ".join(normalize_tokens(" ".join(pages))) + " "
    best = max(score, key=lambda k: score[k] + len(on_pages[k]) + 0.5 * min(40, words.count(f" {_short(k)} ")))
    forms = spellings[best].most_common()
    mixed = [s for s, _ in forms if s != s.upper()]
    return (mixed or [forms[0][0]])[0]


def _short(key: tuple[str, ...]) -> str:
    """The key without its trailing legal forms, as text ("microsoft" of microsoft corporation)."""
    toks = list(key)
    while len(toks) > 1 and toks[-1] in _LEGAL:
        toks.pop()
    return " ".join(toks)
