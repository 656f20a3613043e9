"""Other names of a company, read from its filings' cover pages, for subset.csv's ``aliases`` column (``rag init``
and ``rag import financebench`` write them for the user to correct; rag.retrieve.route matches them).

Contract:
- ``cover_tickers(pages) -> [str]``: the trading symbols on a 10-K / 10-Q cover page: the "Trading Symbol(s)"
  column of "Securities registered pursuant to Section 12(b)", a symbol being 2-5 capitals standing before an
  exchange's name ("Common Stock ... AMZN Nasdaq Global Select Market"); the notes' symbols ("MMM26") are not
  tickers of the company's name. [] when the cover has no such column (10-Ks before 2019 print none).
- ``registrant_name(pages) -> str | None``: the line above "(Exact name of registrant as specified in its
  charter)", as printed ("AMAZON.COM, INC.").
- ``company_aliases(company, covers) -> [str]``: for one company (``covers``: the first pages of each of its
  filings) its tickers (every filing's, first seen first), then the registrant's printed name when it is
  not already a way of writing ``company`` (rag.retrieve.names.name_variants: "3M COMPANY" is "3M"), then the
  brand of a web name ("Amazon" of "Amazon.com, Inc.", as ``rag init`` names the company).
- ``read_covers(pdf) -> [page text]``: the first COVER_PAGES pages (rag.core.pdf).
- ``aliases_cell(aliases) -> str``: the ``;``-joined cell.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Sequence

from .core.pdf import pdf_page_texts
from .retrieve.names import name_variants

COVER_PAGES = 2  # the 10-K cover page is page 1, sometimes continued on page 2
_HEADER = re.compile(r"trading\s+symbol", re.I)
_SECTION_12B = re.compile(r"section\s+12\s*\(b\)", re.I)
_END = re.compile(r"section\s+12\s*\(g\)|indicate\s+by\s+check\s+mark", re.I)
# A symbol stands before its exchange's name in the 12(b) table ("KHC The Nasdaq Stock Market LLC").
_EXCHANGES = (r"New\s+York\s+Stock|NYSE|Nasdaq|NASDAQ|Chicago\s+Stock|Cboe|CBOE|Boston\s+Stock|Toronto|London|"
              r"Euronext|SIX\s+Swiss|Bermuda|The\s+Stock\s+Exchange")
_TICKER = re.compile(r"(?<![\w.$%/-])([A-Z]{2,5}(?:\.[A-Z]{1,2})?)(?=\s+(?:The\s+)?(?:" + _EXCHANGES + r"))")
_WEB = re.compile(r"\.(?:com|net|org|io)\b", re.I)  # "Amazon.com": a web address as a company name
_REGISTRANT = re.compile(r"([^\n]+)\n[ \t(]*exact\s+name\s+of\s+(?:the\s+)?registrant", re.I)


def cover_tickers(pages: Sequence[str]) -> list[str]:
    """Trading symbols from a cover page's 12(b) table (module contract)."""
    text = "\n".join(pages[:COVER_PAGES])
    m = _HEADER.search(text)
    if not m:
        return []
    # The column's header may print below its rows ("Class B Common Stock NKE New York Stock Exchange" then
    # "(Title of each class) (Trading symbol) ..."): the table starts at the section's title when it precedes.
    starts = [s.end() for s in _SECTION_12B.finditer(text, max(0, m.start() - 600), m.start())]
    start = starts[-1] if starts else m.end()
    end = _END.search(text, m.end())
    table = text[start:end.start() if end else m.end() + 1500]
    return list(dict.fromkeys(t for t in _TICKER.findall(table) if t not in ("LLC", "INC", "THE")))


def registrant_name(pages: Sequence[str]) -> str | None:
    """The registrant's name as the cover prints it, or None."""
    m = _REGISTRANT.search("\n".join(pages[:COVER_PAGES]))
    # The line may carry a rule ("____") and the commission file number before the name.
    name = " ".join(re.split(r"_{3,}", m.group(1))[-1].split()).strip(" ,") if m else ""
    # A cover whose name line was lost prints the file number there: that is no name.
    return None if not name or re.match(r"commission\s+file", name, re.I) else name


def company_aliases(company: str, covers: Iterable[Sequence[str]]) -> list[str]:
    """Tickers, then the printed registrant name when it is another way of writing the company, then a web
    name's brand ("Amazon" of "Amazon.com, Inc."), each once (module contract)."""
    covers = list(covers)
    tickers = [t for pages in covers for t in cover_tickers(pages)]
    own = set(name_variants(company))
    names = []
    for pages in covers:
        name = registrant_name(pages)
        if name and not own & set(name_variants(name)):
            names.append(name)
    for name in (company, *names):
        brand = _WEB.sub("", name).split(",")[0].strip()  # people write "Amazon", not "Amazon.com"
        if _WEB.search(name) and brand and not own & set(name_variants(brand)):
            names.append(brand)
    return list(dict.fromkeys(tickers + names))


def read_covers(pdf: Path | str) -> list[str]:
    """The first COVER_PAGES page texts of a PDF."""
    return [text for _, text in pdf_page_texts(pdf, first=COVER_PAGES)]


def aliases_cell(aliases: Iterable[str]) -> str:
    """subset.csv's cell: the aliases joined by "; " (rag.core.subset.parse_aliases reads it back)."""
    return "; ".join(a for a in aliases if a and ";" not in a)
