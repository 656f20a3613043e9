"""BM25 words of stage 04 (chunks when indexing, queries when searching: both must tokenise alike).

Contract: ``bm25_tokens(text, stemmer="none") -> list[str]``: lowercased words and numbers, English stopwords
and one-letter words dropped, thousands separators out of numbers ("1,234.5" -> "1234.5"); words stemmed
(numbers never) when ``stemmer`` is a Snowball language ("english", ``index.bm25_stemmer``).
"""
from __future__ import annotations

import re
from functools import lru_cache

# Numbers keep their digits and decimal point; thousands separators go ("1,234.5" -> "1234.5").
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+")


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


@lru_cache(maxsize=2)
def _stemmer(name: str):
    """A Snowball stemmer (PyStemmer) for ``name``; ImportError names the package when it is missing."""
    try:
        import Stemmer
    except ImportError as e:  # an optional speed/quality extra, not a core dependency of the default
        raise ImportError("index.bm25_stemmer needs the PyStemmer package (pip install PyStemmer)") from e
    return Stemmer.Stemmer(name)


def bm25_tokens(text: str, stemmer: str = "none") -> list[str]:
    """Lowercased words and numbers, English stopwords and one-letter words dropped; words stemmed
    (numbers never) when ``stemmer`` is a Snowball language ("english")."""
    stop = _stopwords()
    out = []
    for tok in _TOKEN.findall(text.lower()):
        if tok[0].isdigit():
            out.append(tok.replace(",", ""))
        elif len(tok) > 1 and tok not in stop:
            out.append(tok)
    if stemmer != "none":
        stem = _stemmer(stemmer)
        out = [t if t[0].isdigit() else stem.stemWord(t) for t in out]
    return out
