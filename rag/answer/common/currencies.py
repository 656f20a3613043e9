"""Currencies as printed and as asked (stage 06; :mod:`rag.answer.common.printed` re-exports them).

Contracts:
- ``currency_in(text) -> str | None``: the first currency named in a text: an ISO code, or "$" for a dollar
  that does not say whose.
- ``resolve_dollar(cur, report_currency)``: "$" is the report's own dollar (AUD in an Australian report), else USD.
- ``question_currency(question) -> str | None``: the ISO code a question asks for ("... (in USD) ...").
"""
from __future__ import annotations

import re

ISO_CODES = ("USD", "EUR", "GBP", "JPY", "AUD", "CAD", "CHF", "CNY", "RMB", "HKD", "INR", "SEK", "NOK",
             "DKK", "NZD", "SGD", "ZAR", "BRL", "KRW", "RUB", "MXN", "ILS", "TWD", "PLN")
DOLLAR_CODES = ("USD", "AUD", "CAD", "NZD", "HKD", "SGD", "TWD", "MXN")
# Longest first: "US$" must win over "$".
SYMBOLS = (("US$", "USD"), ("USD$", "USD"), ("A$", "AUD"), ("AU$", "AUD"), ("AUD$", "AUD"), ("C$", "CAD"),
           ("CA$", "CAD"), ("NZ$", "NZD"), ("HK$", "HKD"), ("S$", "SGD"), ("€", "EUR"), ("£", "GBP"),
           ("¥", "JPY"), ("円", "JPY"), ("₹", "INR"), ("$", "$"))
CURRENCY_WORDS = {"euro": "EUR", "euros": "EUR", "yen": "JPY", "sterling": "GBP", "rupees": "INR",
                  "dollars": "$", "dollar": "$"}

_ISO_RE = re.compile(r"\b(" + "|".join(ISO_CODES) + r")\b")


def currency_in(text: str) -> str | None:
    """First currency named in ``text``: ISO code, or "$" for an unspecified dollar."""
    m = _ISO_RE.search(text)
    if m:
        return "CNY" if m.group(1) == "RMB" else m.group(1)
    for sym, code in SYMBOLS:
        if sym in text:
            return code
    for w in re.findall(r"[a-z]+", text.lower()):
        if w in CURRENCY_WORDS:
            return CURRENCY_WORDS[w]
    return None


def resolve_dollar(cur: str | None, report_currency: str | None) -> str | None:
    """"$" means the report's own dollar currency (AUD in an Australian report), else USD."""
    if cur != "$":
        return cur
    rc = (report_currency or "").upper()
    return rc if rc in DOLLAR_CODES else "USD"


def question_currency(question: str) -> str | None:
    """The currency a question asks for: "(in USD)", "in EUR", "(USD)" -> ISO code; None if none."""
    m = re.search(r"\(\s*(?:in\s+)?([A-Z]{3})\s*\)|\bin\s+([A-Z]{3})\b", question)
    if not m:
        return None
    code = (m.group(1) or m.group(2)).upper()
    return code if code in ISO_CODES else None
