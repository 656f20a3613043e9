"""Which securities a filing registers on an exchange, read from its cover page in code (stage 06,
``answer.text_registered``): "Which debt securities are registered to trade on a national securities exchange under
American Express' name as of 2022?".

Why: a US filing's cover prints them in one table, "Securities registered pursuant to Section 12(b) of the Act"
(title of each class, trading symbol, exchange). The 1.5B reader, given the cover among other pages, quoted an
exhibit list instead (FinanceBench tuning half, RESULTS.md). Reading the table is parsing, not judgement.

Contracts:
- ``registered_ask(question) -> Ask | None``: a question about the securities registered on an exchange (it says
  "registered" and "exchange" or "12(b)", and names securities, notes, stock or shares); ``debt`` when it asks for
  debt (debt, notes, bonds, debentures). None otherwise.
- ``registered_securities(text) -> Registered | None``: the 12(b) section of a cover page's text (from its title to
  the 12(g) section, the first "Indicate by check mark" or a "Note:"), its debt classes (a rate or "Floating Rate",
  notes / debentures / bonds, "due" and a year) and its equity classes (common or ordinary stock or shares,
  preferred, depositary shares), each as printed, in order. None when the text has no such section.
- ``answer_registered(cfg, question, pages, company) -> dict | None``: for such a question, the section of the first
  of ``pages`` printing one, else of the filing's first two pages (stage 02's clean text); the answer lists the
  asked classes (for debt: "There are none" when the section lists no debt class, naming the classes it lists),
  citing the cover. The :func:`rag.answer.fuse.answer_pages` result shape (``interpretation["registered"]``); None
  when the question asks something else or no section is found (the reader answers then).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...core.config import RunConfig
from ..common.context import CtxPage

COVER_PAGES = 2  # the cover is the filing's first page, sometimes continued on the second

_REGISTERED = re.compile(r"\bregistered\b", re.I)
_EXCHANGE = re.compile(r"\bexchange\b|\b12\s*\(\s*b\s*\)", re.I)
_SECURITIES = re.compile(r"\b(?:securit(?:y|ies)|notes?|bonds?|debentures?|stocks?|shares?)\b", re.I)
_DEBT_ASKED = re.compile(r"\b(?:debt|notes?|bonds?|debentures?)\b", re.I)
_SECTION = re.compile(r"section\s+12\s*\(\s*b\s*\)", re.I)
_SECTION_END = re.compile(r"section\s+12\s*\(\s*g\s*\)|indicate\s+by\s+check\s+mark|\bnote:", re.I)
_DEBT = re.compile(r"(?:(?:\d+(?:\.\d+)?\s*%|floating\s+rate)\s+)(?:senior\s+|subordinated\s+)*"
                   r"(?:notes?|debentures?|bonds?)\s+due\s+(?:\w+\s+\d{1,2},?\s+)?\d{4}", re.I)
_EQUITY = re.compile(r"(?:class\s+[A-Z]\s+)?(?:common|ordinary|preferred)\s+(?:stock|shares)"
                     r"(?:,?\s*(?:\(?\s*(?:no\s+)?par\s+value[^)\n#]*?(?:per\s+share\)?|\)|$)))?"
                     r"|american\s+depositary\s+shares", re.I | re.M)


@dataclass(frozen=True)
class Ask:
    debt: bool  # the question asks for debt classes only


@dataclass(frozen=True)
class Registered:
    debt: tuple[str, ...]
    equity: tuple[str, ...]


def registered_ask(question: str) -> Ask | None:
    """The question asks which securities are registered on an exchange (see the contract), else None."""
    if not (_REGISTERED.search(question) and _EXCHANGE.search(question) and _SECURITIES.search(question)):
        return None
    return Ask(debt=bool(_DEBT_ASKED.search(question)))


def _clean(s: str) -> str:
    return " ".join(s.replace("#", " ").split()).strip(" ,;")


def registered_securities(text: str) -> Registered | None:
    """The debt and equity classes of the 12(b) section of a cover page's text (see the contract)."""
    m = _SECTION.search(text)
    if not m:
        return None
    end = _SECTION_END.search(text, m.end())
    section = text[m.end():end.start() if end else m.end() + 3000]
    debt = tuple(dict.fromkeys(_clean(d.group(0)) for d in _DEBT.finditer(section)))
    equity = tuple(dict.fromkeys(_clean(e.group(0)) for e in _EQUITY.finditer(section)))
    return Registered(debt=debt, equity=equity)


def _cover(cfg: RunConfig, pages: list[CtxPage]) -> tuple[CtxPage, Registered] | None:
    """The first of ``pages`` printing a 12(b) section, else the filing's first pages (stage 02's text)."""
    for p in pages:
        got = registered_securities(p.text)
        if got is not None and (got.debt or got.equity):
            return p, got
    if not pages:
        return None
    from ...clean import page_texts

    _, texts = page_texts(cfg, pages[0].sha1)
    for n in range(1, COVER_PAGES + 1):
        got = registered_securities(texts.get(n, ""))
        if got is not None and (got.debt or got.equity):
            return CtxPage(sha1=pages[0].sha1, page=n, text=texts[n], rank=len(pages)), got
    return None


def _listed(items: tuple[str, ...]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def answer_registered(cfg: RunConfig, question: str, pages: list[CtxPage], company: str = "") -> dict[str, Any] | None:
    """The securities a filing registers under Section 12(b), from its cover (see the contract)."""
    ask = registered_ask(question)
    if ask is None:
        return None
    found = _cover(cfg, pages)
    if found is None:
        return None
    page, reg = found
    where = f"Securities registered pursuant to Section 12(b), page {page.page}"
    if ask.debt:
        value = (f"{_listed(reg.debt)} ({where})." if reg.debt else
                 f"There are none: the only securities registered are {_listed(reg.equity)} ({where}).")
    else:
        value = f"{_listed(reg.equity + reg.debt)} ({where})."
    return {"value": value, "cited": [page], "calls": [], "answering_part": [page],
            "interpretation": {"registered": {"page": page.page, "debt": list(reg.debt), "equity": list(reg.equity),
                                              "asked": "debt" if ask.debt else "all"}}}
