"""Company names as a question may write them: tokens, name variants, short forms, acronyms and the aliases
subset.csv lists (rag.retrieve.route matches them; rag.init_guess reads the tokens).

Contract:
- ``normalize_tokens(text, lower=True) -> [token]``: case-folded word tokens (NFKC, invisible format
  characters removed, quotes and punctuation dropped, possessive "'s" dropped, "&" read as "and", dots inside
  abbreviations joined); ``lower=False`` keeps the case (same tokens, same positions).
- ``name_variants(company)``: the full name, then trailing legal suffixes stripped one at a time.
- ``short_forms(reports)``: leading parts of names that name exactly one company.
- ``acronym_of(token, company)``: an all-capitals acronym built from the company's words ("AMEX").
- ``spelling_spans(q, q_orig, reports)``: where the question spells a name another way (words run together or
  split: "CocaCola", "JP Morgan"; initials around an "&": "J&J").
- ``alias_spans(q, q_orig, reports) -> [(length, level, start, end, sha1)]``: where the question writes one
  of a report's ``aliases`` (subset.csv's ``aliases`` column: tickers, short names, abbreviations). A code
  (one token of at most CODE_MAX characters, all capitals: "AMZN", "AXP", "MMM") counts only where the
  question writes it in capitals; a one-word alias otherwise must be written as a name (capitalized); a
  longer alias matches in any case. Aliases of one character never match (too many words are one letter).
"""
from __future__ import annotations

import re
import unicodedata
from typing import Iterable, Mapping, Sequence

# Trailing tokens treated as legal form / group words (normalized: lowercase, dots removed).
LEGAL_SUFFIXES = frozenset({
    "inc", "incorporated", "ltd", "limited", "plc", "corp", "corporation", "co", "company", "llc", "lp",
    "ag", "sa", "se", "nv", "bv", "gmbh", "kgaa", "spa", "asa", "ab", "oyj", "kk", "bhd", "pty", "pte",
    "holding", "holdings", "group",
})
# Short forms never end on these (a prefix "Bank of" of "Bank of Ireland" names nobody).
_CONNECTIVES = frozenset({"of", "and", "the", "for", "de", "du", "des", "la", "le", "van", "von", "y", "e"})
# One-word leading parts too generic to name a company on their own ("First" of "First Bancorp").
_GENERIC_FIRST = frozenset({
    "first", "national", "american", "united", "general", "international", "global", "new", "china", "bank",
    "royal", "great", "central", "southern", "northern", "eastern", "western", "north", "south", "east", "west",
    "pacific", "atlantic", "capital", "standard", "premier", "consolidated", "community", "federal", "world",
})
# Strip level of a short form: above any suffix-stripped variant, so those win on the same span.
_SHORT_FORM_LEVEL = 1000
_MIN_ONE_WORD_SHORT_FORM = 4  # characters
MIN_ACRONYM = 3  # letters of an all-capitals company acronym ("AMEX"); two letters are too often other words
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00b4": "'", "`": "'"})


def normalize_tokens(text: str, lower: bool = True) -> list[str]:
    """Word tokens; dots inside abbreviations joined ("N.V." -> "nv"), "'s" and quotes dropped.

    ``lower=False`` keeps the original case (same tokens, same positions) for the capitalization check.
    """
    # Format characters (zero-width space/joiners, soft hyphen, BOM, word joiner: category Cf) are
    # invisible in a question but split or glue tokens; casefold() also folds "Straße" to "strasse".
    t = "".join(ch for ch in unicodedata.normalize("NFKC", text) if unicodedata.category(ch) != "Cf")
    t = t.translate(_QUOTES)
    t = t.casefold() if lower else t
    t = re.sub(r"'[sS]\b", "", t)  # possessive: "Downer EDI Limited's" -> "... limited"
    t = t.replace("&", " and ")
    t = re.sub(r"(?<=\w)\.(?=\w)", "", t)  # "n.v." -> "nv.", "s.a." -> "sa."
    t = re.sub(r"[^\w\s]", " ", t)
    return t.split()


def name_variants(company: str) -> list[tuple[str, ...]]:
    """Token tuples a company may be written as: full name, then trailing legal suffixes stripped.

    A leading "the" is always dropped (it is also dropped from the question text side by matching
    on tokens: "the" before a name is simply not part of the span). A variant never becomes empty.
    """
    toks = normalize_tokens(company)
    if toks and toks[0] == "the" and len(toks) > 1:
        toks = toks[1:]
    variants = [tuple(toks)]
    while len(toks) > 1 and toks[-1] in LEGAL_SUFFIXES:
        toks = toks[:-1]
        variants.append(tuple(toks))
    return [v for v in variants if v]


def short_forms(reports) -> dict[tuple[str, ...], tuple[str, tuple[str, ...]]]:
    """``{leading tokens: (sha1, the same tokens as the company writes them)}`` for the leading parts of names that name exactly one company.

    Parts of the most-stripped variant only (without its last word); a part that is any other company's
    variant, or the start of one, is shared and dropped. Reports with identically normalized names count
    as one company (all of them are routed by the caller's equal-name rule, so the first sha1 stands in).
    """
    by_name: dict[tuple[str, ...], list[str]] = {}
    written: dict[tuple[str, ...], list[str]] = {}  # the name's tokens in the company's own case
    for sha1, company in _as_pairs(reports):
        by_name.setdefault(tuple(normalize_tokens(company)), []).append(sha1)
        orig = normalize_tokens(company, lower=False)
        written.setdefault(tuple(normalize_tokens(company)), orig[1:] if orig[:1] and orig[0].lower() == "the" else orig)
    owners: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
    for name in by_name:
        variants = name_variants(" ".join(name))
        for v in variants:
            for k in range(1, len(v) + 1):
                owners.setdefault(v[:k], set()).add(name)
    out: dict[tuple[str, ...], str] = {}
    for name, sha1s in by_name.items():
        base = name_variants(" ".join(name))[-1]
        for k in range(1, len(base)):
            part = base[:k]
            if len(owners.get(part, ())) != 1 or part[-1] in _CONNECTIVES or part[0] in LEGAL_SUFFIXES:
                continue
            if k == 1 and (part[0] in _GENERIC_FIRST or (len(part[0]) < _MIN_ONE_WORD_SHORT_FORM
                                                         and not _is_code(written[name][0]))):
                continue  # a short one-word part only when the company writes it in capitals ("CVS", "MGM")
            out[part] = (sha1s[0], tuple(written[name][:k]))
    return out


def _as_pairs(reports: Sequence | Mapping[str, str]) -> list[tuple[str, str]]:
    if isinstance(reports, Mapping):
        return [(str(k), str(v)) for k, v in reports.items()]
    return [(r.sha1, r.company) for r in reports]


def _find(seq: Sequence[str], sub: tuple[str, ...]) -> Iterable[int]:
    n = len(sub)
    for i in range(len(seq) - n + 1):
        if tuple(seq[i:i + n]) == sub:
            yield i


def _as_name(word: str) -> bool:
    """Written as a name: capitalized, or starting with a digit ("3M")."""
    return word[:1].isupper() or word[:1].isdigit()


def acronym_of(token: str, company: str) -> bool:
    """Whether an all-capitals ``token`` ("AMEX", "IBM") is built from leading letters of the company's words in
    order, every word used ("AM"+"EX" of "American Express"); legal suffixes are not needed."""
    words = list(name_variants(company)[-1])
    t = token.lower()
    if len(t) < MIN_ACRONYM or len(words) < 2:
        return False

    def fits(t: str, ws: list[str]) -> bool:
        if not ws:
            return not t
        return any(t[:k] == ws[0][:k] and fits(t[k:], ws[1:]) for k in range(1, min(len(t), len(ws[0])) + 1))
    return fits(t, words)



# Strip level of an alias: between the suffix-stripped names and the short forms (a short form of another
# company written the same way loses to the alias the user wrote).
ALIAS_LEVEL = 500
CODE_MAX = 5  # characters of a code: tickers are 1-5 letters ("MMM", "AMZN"); longer capitals are words


def _is_code(word: str) -> bool:
    """A ticker-like code: 2..CODE_MAX characters, capitals (digits allowed), at least one letter ("AXP", "3M"
    is a name: it starts with a digit and is read as a name anyway)."""
    return 2 <= len(word) <= CODE_MAX and word.isupper() and word.isalnum() and not word[:1].isdigit()


def alias_spans(q: Sequence[str], q_orig: Sequence[str], reports) -> list[tuple[int, int, int, int, str]]:
    """``(length, ALIAS_LEVEL, start, end, sha1)`` for every place the question writes an alias (module
    contract); ``q`` / ``q_orig`` are the question's tokens from :func:`normalize_tokens` (lower / as written)."""
    if isinstance(reports, Mapping):
        return []
    # Aliases are per company: one written on any filing of it routes to all its filings (twins by name).
    by_name: dict[tuple[str, ...], tuple[list[str], dict[str, None]]] = {}
    for r in reports:
        sha1s, aliases = by_name.setdefault(tuple(normalize_tokens(r.company)), ([], {}))
        sha1s.append(r.sha1)
        aliases.update(dict.fromkeys(getattr(r, "aliases", ()) or ()))
    out = []
    for sha1s, aliases in by_name.values():
        for alias in aliases:
            orig = normalize_tokens(alias, lower=False)
            # "AMAZON.COM, INC." also as "Amazon.com": its legal suffixes stripped, as company names are
            for toks in name_variants(alias):
                if len("".join(toks)) < 2 or (len(toks) == 1 and toks[0] in LEGAL_SUFFIXES | {"the", "and"}):
                    continue
                for i in _find(q, toks):
                    if len(toks) == 1 and _is_code(orig[0]) and len(orig) == 1 and q_orig[i] != orig[0]:
                        continue  # "AXP" written in capitals; "axp" or "Axp" is not the ticker
                    if len(toks) == 1 and not _as_name(q_orig[i]):
                        continue  # a one-word alias ("Kraft") written as a name, not a common word
                    out += [(len(toks), ALIAS_LEVEL, i, i + len(toks), sha1) for sha1 in sha1s]
    return out


# Strip level of a name spelled another way: below aliases (the user's words win), above short forms.
SPELLING_LEVEL = 700
MIN_JOINED = 5  # characters of a name compared without its spaces ("cocacola"): shorter ones collide


def spelling_spans(q: Sequence[str], q_orig: Sequence[str], reports) -> list[tuple[int, int, int, int, str]]:
    """``(length, SPELLING_LEVEL, start, end, sha1)`` where the question spells a company's name another way:
    its words run together or split differently ("CocaCola", "Coca Cola" for "Coca-Cola"; "JP Morgan" for
    "JPMorgan"; compared without spaces, at least MIN_JOINED characters, one to three question words, the first
    written as a name), or the initials of the words around an "&" ("J&J" for "Johnson & Johnson", "P&G" for
    "Procter & Gamble"; written in capitals)."""
    out = []
    for sha1, company in _as_pairs(reports):
        for v in name_variants(company):
            joined = "".join(v)
            if len(joined) >= MIN_JOINED:
                for i in range(len(q)):
                    for n in range(1, 4):
                        if i + n <= len(q) and "".join(q[i:i + n]) == joined and tuple(q[i:i + n]) != v \
                                and _as_name(q_orig[i]):
                            out.append((n, SPELLING_LEVEL, i, i + n, sha1))
            if "and" in v[1:-1]:
                initials = tuple(w if w == "and" else w[0] for w in v)
                for i in _find(q, initials):
                    if all(w == "and" or w.isupper() for w in q_orig[i:i + len(initials)]):
                        out.append((len(initials), SPELLING_LEVEL, i, i + len(initials), sha1))
    return out
