"""Route a question to the report(s) it names, and split comparative questions per company.

Contract:
- ``route(question_text, reports) -> list[sha1]``: the reports whose company the question names, in
  the order the names appear in the question. ``reports`` is a sequence of objects with ``.sha1`` and
  ``.company`` (``rag.core.dataset.Report``) or a mapping ``{sha1: company}``. No known company -> ``[]``
  (the caller answers N/A), never an exception.
- ``routing_status(question_text, kind, reports) -> "ok" | "unrouted" | "ambiguous"``, recorded in every
  05 record (``RetrievalRecord.routing``) and counted in 05's manifest.
- ``split_comparative(question_text, kind, reports) -> {sha1: sub_question}``: for a comparative
  question one rule-based sub-question per routed company ("What was the <metric> of <company> <tail>?");
  for any other kind every routed report maps to the question itself.

Matching: names and question are normalized to case-folded word tokens (NFKC, invisible format
characters removed, quotes, punctuation, possessive
"'s" and a leading "The" dropped, "&" read as "and"). Each company is tried as its full name and as
the name with trailing legal suffixes stripped one at a time (Inc., Ltd, plc, Corporation, AG, N.V.,
Holdings, Group...). Every contiguous occurrence in the question is a candidate span; spans are accepted
longest first and a span overlapping an accepted one is dropped, so "Kelly Partners Group Holdings
Limited" wins over a shorter "Kelly Partners" name inside it, and two companies sharing one word
("Harrow Group" / "Harrow Foods") never collide (a shared word alone matches nothing). Reports whose
names normalize identically (e.g. two years of one company) are all routed.

Filings: a company with several reports whose subset.csv rows carry ``period`` (and ``doc_type``) is routed
to the filing(s) the question's period and document type name (rag.retrieve.filing); ``route_filings``
returns each routed report with that reason. An all-capitals acronym of one company ("AMEX" for American
Express) routes when no name is written. A question naming no company at all but a fiscal quarter or date
that is the own period of exactly one filing of the dataset routes to that filing (``span`` (0, 0), the
reason in ``why``; rag.retrieve.filing.only_filing_of_period): ERC datasets carry no periods, so never there.

Short forms: a leading part of a name ("Downer" for "Downer EDI Limited", "Poste Italiane" for "Poste
Italiane S.p.A.") also routes when every word of it is capitalized in the question (or written as the
company writes it, "abrdn"), no other company's
name starts with it (a word starting with a digit, "3M", counts as capitalized), it does not end on a connective ("Bank of") and a one-word short form is not a
generic word ("First", "National"...). Such a span loses to any full or suffix-stripped name it overlaps.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from .filing import choose_filings, only_filing_of_period

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
            if k == 1 and (len(part[0]) < _MIN_ONE_WORD_SHORT_FORM or part[0] in _GENERIC_FIRST):
                continue
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


def _spans(question_text: str, reports) -> list[tuple[int, int, str]]:
    """Accepted (start, end, sha1) spans in token positions, longest-first without overlaps."""
    q = normalize_tokens(question_text)
    q_orig = normalize_tokens(question_text, lower=False)
    cands: list[tuple[int, int, int, int, str]] = []  # (length, strip level, start, end, sha1)
    for sha1, company in _as_pairs(reports):
        for n, v in enumerate(name_variants(company)):
            if len(v) == 1 and v[0] in LEGAL_SUFFIXES | {"the", "and"}:
                continue  # a name that is only a legal word would match everywhere
            for i in _find(q, v):
                # A one-word short form ("Harrow" of "Harrow Group plc") must be written as a name
                # (capitalized) in the question, so a common word does not route.
                if n > 0 and len(v) == 1 and not _as_name(q_orig[i]):
                    continue
                cands.append((len(v), n, i, i + len(v), sha1))
    by_sha1 = dict(_as_pairs(reports))
    for part, (sha1, as_written) in short_forms(reports).items():
        twins = [s for s, c in by_sha1.items() if normalize_tokens(c) == normalize_tokens(by_sha1[sha1])]
        for i in _find(q, part):
            # Written as a name: each word capitalized, or exactly as the company writes it ("abrdn").
            if all(_as_name(w) or w == c for w, c in zip(q_orig[i:i + len(part)], as_written)):
                for t in twins:
                    cands.append((len(part), _SHORT_FORM_LEVEL, i, i + len(part), t))
    # Longest first; on the same span a full name beats a suffix-stripped one ("Kelly Partners" is the
    # company of that name, not "Kelly Partners Group Holdings Limited"); equal names are all kept.
    cands.sort(key=lambda c: (-c[0], c[1], c[2]))
    taken: dict[tuple[int, int], int] = {}  # accepted span -> its strip level
    out: list[tuple[int, int, str]] = []
    for length, n, s, e, sha1 in cands:
        if (s, e) in taken:
            if taken[(s, e)] == n and (s, e, sha1) not in out:
                out.append((s, e, sha1))
            continue
        if any(s < te and ts < e for ts, te in taken):
            continue
        taken[(s, e)] = n
        out.append((s, e, sha1))
    if not out:  # no name written: an all-capitals acronym of exactly one company ("AMEX")
        for i, w in enumerate(q_orig):
            if w.isupper() and w.isalpha():
                names = {tuple(normalize_tokens(c)) for s, c in _as_pairs(reports) if acronym_of(w, c)}
                if len(names) == 1:
                    out.extend((i, i + 1, s) for s, c in _as_pairs(reports) if tuple(normalize_tokens(c)) in names)
    return sorted(out)


@dataclass(frozen=True)
class Routed:
    """One routed report: its sha1, the question span naming its company, and why this filing (empty when
    its company has one report, or the reports carry no period: all are searched)."""
    sha1: str
    span: tuple[int, int]
    why: str = ""


def route_filings(question_text: str, reports) -> list[Routed]:
    """Every routed report with its reason (order of appearance). A company with several filings that carry
    a period (subset.csv ``period``) gets the filing(s) the question's period names
    (:func:`rag.retrieve.filing.choose_filings`); otherwise all reports of a named company are kept."""
    groups: dict[tuple[int, int], list[str]] = {}
    for s, e, sha1 in _spans(question_text, reports):
        groups.setdefault((s, e), []).append(sha1)
    by_sha = {} if isinstance(reports, Mapping) else {r.sha1: r for r in reports}
    out: list[Routed] = []
    seen: set[str] = set()
    for span, sha1s in groups.items():
        filings = [by_sha[x] for x in sha1s if x in by_sha]
        picked = [(x, "") for x in sha1s]
        if len(filings) > 1 and any(getattr(f, "period", "") for f in filings):
            choice = choose_filings(question_text, filings)
            picked = [(x, choice.why) for x in choice.sha1s]
        for x, why in picked:
            if x not in seen:
                seen.add(x)
                out.append(Routed(sha1=x, span=span, why=why))
    if not out and not isinstance(reports, Mapping):  # no company named: a period only one filing has?
        only = only_filing_of_period(question_text, list(reports))
        if only is not None:
            out.append(Routed(sha1=only.sha1s[0], span=(0, 0), why=only.why))
    return out


def route(question_text: str, reports) -> list[str]:
    """The sha1s of the reports the question names (order of appearance); [] if none. Several filings of
    one company: the one(s) its period names (see route_filings)."""
    return [r.sha1 for r in route_filings(question_text, reports)]


def routing_status(question_text: str, kind: str, reports) -> str:
    """How the question was routed: "unrouted" (no known company named), "ambiguous" (a non-comparative
    question names several companies, or one name matches several reports that no period tells apart:
    all of them are searched), else "ok" (a filing chosen by period counts as ok; its reason is recorded).
    Recorded with every retrieval so a silent N/A has its reason."""
    routed = route_filings(question_text, reports)
    if not routed:
        return "unrouted"
    spans = {r.span for r in routed}
    unchosen = [sum(1 for r in routed if r.span == sp and not r.why) for sp in spans]
    if any(n > 1 for n in unchosen) or (kind != "comparative" and len(spans) > 1):
        return "ambiguous"
    return "ok"


# ---- comparative questions -------------------------------------------------------------------
_SUPERLATIVE = (r"(?:highest|lowest|largest|smallest|greatest|least|biggest|most|fewest|higher|lower|"
                r"larger|smaller|greater|better|worse|best|worst)")
# "Which of the companies had the highest total revenue in EUR at the end of ...: "A", "B"?"
_WHICH = re.compile(
    r"^\s*(?:which|what)\s+(?:of\s+the\s+(?:following\s+)?)?(?:compan(?:y|ies)|one)\b.*?\b(?:the\s+)?"
    + _SUPERLATIVE + r"\s+(?:amount\s+of\s+|number\s+of\s+|value\s+of\s+)?(?P<rest>.+)$", re.I | re.S)
# Where the metric ends and the period phrase begins.
_TAIL = re.compile(r"\s+(?=(?:at\s+the\s+end\s+of|as\s+of|as\s+at|in\s+the\s+(?:fiscal|financial|last|most)|"
                   r"for\s+the\s+(?:fiscal|financial|last|year|period)|during|within|in\s+(?:fy\s*)?\d{4})\b)",
                   re.I)
# The trailing company list: ': "A", "B" and "C"?' (straight or curly quotes).
_LIST = re.compile(r"""\s*[:,]?\s*(?:(?:["\u201c][^"\u201d]+["\u201d])\s*(?:,|\band\b|\bor\b)?\s*)+(?=\?|$)""", re.I)


def _strip_list(text: str) -> tuple[str, str]:
    """(question before the quoted company list, everything after the list's '?')."""
    m = _LIST.search(text)
    if not m:
        head, sep, after = text.partition("?")
        return head, after.strip() if sep else ""
    head = text[:m.start()]
    after = text[m.end():].lstrip("?").strip()
    return head, after


def sub_question(question_text: str, company: str) -> str:
    """One company's rewrite of a comparative question (rule-based; falls back to a prefixed form)."""
    head, _ = _strip_list(question_text)
    head = head.strip().rstrip(":").strip()
    m = _WHICH.match(head)
    if m:
        rest = m.group("rest").strip().rstrip("?.:").strip()
        parts = _TAIL.split(rest, maxsplit=1)
        metric = parts[0].strip()
        tail = (" " + parts[1].strip()) if len(parts) > 1 else ""
        metric = re.sub(r"^the\s+", "", metric, flags=re.I)
        return f"What was the {metric} of {company}{tail}? If data is not available, return 'N/A'."
    return f"For {company}: {head.rstrip('?')}? If data is not available, return 'N/A'."


def split_comparative(question_text: str, kind: str, reports) -> dict[str, str]:
    """``{sha1: text}`` per routed report: sub-questions for comparative ones, else the question itself."""
    routed = route(question_text, reports)
    if kind != "comparative" or len(routed) < 2:
        return {sha1: question_text for sha1 in routed}
    names = dict(_as_pairs(reports))
    return {sha1: sub_question(question_text, names[sha1]) for sha1 in routed}
