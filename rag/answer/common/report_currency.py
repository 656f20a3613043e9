"""The currency a report's figures are in, as stage 06 uses it (``answer.currency_source``).

Contract: ``report_currency(cfg, sha1, listed) -> str | None``: with ``currency_source = "subset"`` the
dataset's value (``listed``, subset.csv's currency column); with ``"text"`` the currency the report itself
states (:func:`rag.clean.currency.guess_currency` on its clean pages from ``02_clean``: "presented in Australian
dollars", else the most printed one), falling back to ``listed`` when 02's file is missing or names none.
Memoised per (02 file, version).

Why: ERC's subset.csv (which the question generator asked in) names a currency its report does not use for
14 of the 39 round-2 reports here (a Nasdaq company listed as CAD, a Japanese one as AUD). A table printing no
currency took the listed one, so "in CAD" found the report's US dollars, where the gold (read from the report)
is N/A.
"""
from __future__ import annotations

import threading
from typing import Any

_MEMO: dict[tuple[str, int], str | None] = {}
_LOCK = threading.Lock()


def report_currency(cfg: Any, sha1: str, listed: str | None) -> str | None:
    if cfg.answer.currency_source != "text":
        return listed
    from ...clean import page_texts, report_path
    from ...clean.currency import guess_currency

    try:  # no 02 folder or file (a run made without 02's text): the listed currency
        path = report_path(cfg, sha1)
        key = (str(path), path.stat().st_mtime_ns)
    except FileNotFoundError:
        return listed
    with _LOCK:
        if key not in _MEMO:
            _, pages = page_texts(cfg, sha1)
            _MEMO[key] = guess_currency([pages[p] for p in sorted(pages)])
        return _MEMO[key] or listed
