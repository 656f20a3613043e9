"""The currency a report states, guessed from its text (``rag init`` fills subset.csv with it; stage 06 reads it
with ``answer.currency_source = "text"``, rag.answer.common.report_currency).

Contract: ``guess_currency(pages) -> str | None``: ISO code from the text of a report's pages in page order (a
stated presentation currency on any page, else the most printed one of the first FIRST_PAGES); None when the
text names none. Measured by benchmarks/init_guess.py.
"""
from __future__ import annotations

import re
from collections import Counter

FIRST_PAGES = 20  # cover, contents, letters, 10-K cover page: where a report's own currency is printed most

_CURRENCY = {cur: re.compile(rx) for cur, rx in {
    "USD": r"\bUSD\b|\bUS\$|\bU\.S\.\s?\$|(?i:\bU\.\s?S\.? dollars?\b|\bUnited States dollars?\b)",
    "AUD": r"\bAUD\b|\bA\$|\bAU\$|(?i:\bAustralian dollars?\b)",
    "CAD": r"\bCAD\b|\bC\$|\bCDN\$|(?i:\bCanadian dollars?\b)",
    "NZD": r"\bNZD\b|\bNZ\$|(?i:\bNew Zealand dollars?\b)",
    "HKD": r"\bHKD\b|\bHK\$|(?i:\bHong Kong dollars?\b)",
    "SGD": r"\bSGD\b|\bS\$|(?i:\bSingapore dollars?\b)",
    "EUR": r"\bEUR\b|€|(?i:\beuros?\b)",
    "GBP": r"\bGBP\b|£|(?i:\bpounds? sterling\b|\bsterling\b)",
    "JPY": r"\bJPY\b|[¥￥]|(?i:\byen\b)",
    "CHF": r"\bCHF\b|(?i:\bSwiss francs?\b)",
    "CNY": r"\bCNY\b|\bRMB\b|(?i:\brenminbi\b)",
    "INR": r"\bINR\b|₹|(?i:\brupees?\b)",
    "SEK": r"\bSEK\b", "NOK": r"\bNOK\b", "DKK": r"\bDKK\b", "ZAR": r"\bZAR\b", "BRL": r"\bBRL\b|R\$",
}.items()}
_STATED = re.compile(r"(?i)\b(?:presented|expressed|reported|stated)\s+in\s+"
                     r"(?:(?:thousands|millions|billions)\s+of\s+)?([^.,;()\n]{2,40})"
                     r"|presentation currency[^.]{0,30}?\bis\s+([^.,;\n]{2,30})")
_DOLLARS = ("USD", "AUD", "CAD", "NZD", "HKD", "SGD")
_BARE_DOLLAR = re.compile(r"(?<![A-Za-z.$])\$")
# Where a report prints only "$": the exchange or business number names the country.
_DOLLAR_HINTS = {"AUD": re.compile(r"\bABN\b|\bASX\b|\bPty\.? Ltd\b"), "CAD": re.compile(r"\bTSX\b"),
                 "NZD": re.compile(r"\bNZX\b"), "SGD": re.compile(r"\bSGX\b")}


def guess_currency(pages: list[str]) -> str | None:
    """The currency the report says it is presented in ("presented in pounds sterling", "expressed in
    thousands of Canadian dollars": the most stated one on any page), else the most mentioned currency
    (ISO codes, symbols, "US$"/"A$", "Australian dollars", "yen"...) of the first pages, or None. A bare "$"
    counts for the dollar the text names most, or else the one its exchange or business number implies
    (ASX/ABN: AUD, TSX: CAD), or else USD. Narrative often quotes other currencies (a UK miner's US$
    deals), hence the statement first."""
    stated = Counter(cur for t in pages for m in _STATED.finditer(t)
                     for cur, rx in _CURRENCY.items() if rx.search(m.group(1) or m.group(2)))
    if stated:
        return stated.most_common(1)[0][0]
    text = "\n".join(pages[:FIRST_PAGES])
    counts = Counter({cur: len(rx.findall(text)) for cur, rx in _CURRENCY.items()})
    dollars = {c: counts[c] for c in _DOLLARS if counts[c]}
    hinted = [c for c, rx in _DOLLAR_HINTS.items() if rx.search(text)]
    dollar = max(dollars, key=dollars.get) if dollars else (hinted[0] if hinted else "USD")
    if hinted and counts[hinted[0]] and counts[hinted[0]] >= counts[dollar] / 4:
        dollar = hinted[0]  # an Australian report quoting US$ prices still prints its own figures in "$"
    counts[dollar] += len(_BARE_DOLLAR.findall(text))
    cur, n = counts.most_common(1)[0]
    return cur if n else None

