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

Aliases: subset.csv's ``aliases`` column (``;``-separated: the ticker from the 10-K cover, short names,
abbreviations; ``rag init`` and ``rag import financebench`` write them for the user to correct) names the
company too (rag.retrieve.names.alias_spans: a ticker-like code only in capitals, "AMZN's" as "AMZN"). A
question naming no company in a dataset that holds one company goes to it (by its period among several
filings). ``given`` (the question's own filing, ``retrieve.given_filing``: FinanceBench's per-filing
setting) routes to that filing alone. Each Routed says ``how`` the company was found; ``Routed.reason``
is the reason records and messages print.

Short forms: a leading part of a name ("Downer" for "Downer EDI Limited", "Poste Italiane" for "Poste
Italiane S.p.A.") also routes when every word of it is capitalized in the question (or written as the
company writes it, "abrdn"), no other company's
name starts with it (a word starting with a digit, "3M", counts as capitalized), it does not end on a connective ("Bank of") and a one-word short form is not a
generic word ("First", "National"...; a one-word part under four letters only as the company writes it in
capitals: "CVS" of "CVS Health"). Such a span loses to any full or suffix-stripped name it overlaps.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from .filing import choose_filings, only_filing_of_period

from .names import (ALIAS_LEVEL, LEGAL_SUFFIXES, MIN_ACRONYM, SPELLING_LEVEL, _MIN_ONE_WORD_SHORT_FORM,  # noqa: F401
                    _SHORT_FORM_LEVEL, _as_name, _as_pairs, _find, acronym_of, alias_spans, name_variants,
                    normalize_tokens, short_forms, spelling_spans)


def _spans(question_text: str, reports) -> list[tuple[int, int, str, str]]:
    """Accepted (start, end, sha1, how) spans in token positions, longest-first without overlaps; ``how`` is
    "name" (full or suffix-stripped), "short form", "alias" (subset.csv), "spelling" (rag.retrieve.names.spelling_spans)
    or "acronym"."""
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
            if len(part[0]) < _MIN_ONE_WORD_SHORT_FORM and len(part) == 1 and q_orig[i] != as_written[0]:
                continue  # a short capitals form ("CVS" of "CVS Health") only as the company writes it
            # Written as a name: each word capitalized, or exactly as the company writes it ("abrdn").
            if all(_as_name(w) or w == c for w, c in zip(q_orig[i:i + len(part)], as_written)):
                for t in twins:
                    cands.append((len(part), _SHORT_FORM_LEVEL, i, i + len(part), t))
    cands += alias_spans(q, q_orig, reports)  # subset.csv's aliases: tickers, short names (ALIAS_LEVEL)
    cands += spelling_spans(q, q_orig, reports)  # "CocaCola", "JP Morgan", "J&J" (SPELLING_LEVEL)
    # Longest first; on the same span a full name beats a suffix-stripped one ("Kelly Partners" is the
    # company of that name, not "Kelly Partners Group Holdings Limited"); equal names are all kept.
    cands.sort(key=lambda c: (-c[0], c[1], c[2]))
    taken: dict[tuple[int, int], int] = {}  # accepted span -> its strip level
    out: list[tuple[int, int, str, str]] = []
    for length, n, s, e, sha1 in cands:
        how = {_SHORT_FORM_LEVEL: "short form", ALIAS_LEVEL: "alias", SPELLING_LEVEL: "spelling"}.get(n, "name")
        if (s, e) in taken:
            if taken[(s, e)] == n and not any(o[:3] == (s, e, sha1) for o in out):
                out.append((s, e, sha1, how))
            continue
        if any(s < te and ts < e for ts, te in taken):
            continue
        taken[(s, e)] = n
        out.append((s, e, sha1, how))
    if not out:  # no name written: an all-capitals acronym of exactly one company ("AMEX")
        for i, w in enumerate(q_orig):
            if w.isupper() and w.isalpha():
                names = {tuple(normalize_tokens(c)) for s, c in _as_pairs(reports) if acronym_of(w, c)}
                if len(names) == 1:
                    out.extend((i, i + 1, s, "acronym") for s, c in _as_pairs(reports)
                               if tuple(normalize_tokens(c)) in names)
    return sorted(out)


# How the company was found, as the routing reason says it (Routed.how -> words before the filing's why).
HOW_WORDS = {"name": "", "short form": "short form of the name", "alias": "alias (subset.csv aliases)",
             "acronym": "acronym of the name", "spelling": "the name spelled another way", "one company": "no company named: the dataset holds one company",
             "period only": "", "given": ""}


@dataclass(frozen=True)
class Routed:
    """One routed report: its sha1, the question span naming its company, and why this filing (empty when
    its company has one report, or the reports carry no period: all are searched). ``how`` the company was
    found: "name", "short form", "alias", "spelling", "acronym", "one company" (nothing named, the dataset holds one
    company), "period only" (nothing named, a period only one filing has) or "given" (the question's own
    filing, ``retrieve.given_filing``)."""
    sha1: str
    span: tuple[int, int]
    why: str = ""
    how: str = "name"
    written: str = ""  # the question's words that named it ("AMZN"), "" when nothing was named

    @property
    def reason(self) -> str:
        """The routing reason as records and messages print it: how the company was found (when not by its
        name) and why this filing."""
        how = HOW_WORDS.get(self.how, self.how)
        how = f"{how} {self.written!r}" if how and self.written else how
        return "; ".join(x for x in (how, self.why) if x)


def _given(reports, given: str) -> list[Routed]:
    """The question's own filing (FinanceBench's per-filing setting); [] when ``given`` is not a report."""
    r = next((r for r in ([] if isinstance(reports, Mapping) else reports) if r.sha1 == given), None)
    if r is None:
        return []
    return [Routed(sha1=r.sha1, span=(0, 0), how="given",
                   why=f"the question's filing is given: {r.filing} (retrieve.given_filing)")]


def route_filings(question_text: str, reports, given: str = "") -> list[Routed]:
    """Every routed report with its reason (order of appearance). A company with several filings that carry
    a period (subset.csv ``period``) gets the filing(s) the question's period names
    (:func:`rag.retrieve.filing.choose_filings`); otherwise all reports of a named company are kept.
    ``given`` (a report's sha1: the question's own filing, when ``retrieve.given_filing`` is on) is routed
    alone, whatever the question names. A question naming no company in a dataset of one company goes to
    that company's filing(s) (by the question's period when there are several)."""
    if given and (only_given := _given(reports, given)):
        return only_given
    groups: dict[tuple[int, int], list[str]] = {}
    hows: dict[tuple[int, int], str] = {}
    for s, e, sha1, how in _spans(question_text, reports):
        groups.setdefault((s, e), []).append(sha1)
        hows.setdefault((s, e), how)
    by_sha = {} if isinstance(reports, Mapping) else {r.sha1: r for r in reports}
    one = _one_company(reports) if not groups else []
    if one:  # nothing named, one company in the dataset: its filings, as if it had been named
        groups, hows = {(0, 0): [r.sha1 for r in one]}, {(0, 0): "one company"}
    q_orig = normalize_tokens(question_text, lower=False)
    out: list[Routed] = []
    seen: set[str] = set()
    for span, sha1s in groups.items():
        filings = [by_sha[x] for x in sha1s if x in by_sha]
        picked = [(x, "") for x in sha1s]
        if len(filings) > 1 and any(getattr(f, "period", "") for f in filings):
            choice = choose_filings(question_text, filings)
            picked = [(x, choice.why) for x in choice.sha1s]
        written = " ".join(q_orig[span[0]:span[1]]) if hows[span] != "name" else ""
        for x, why in picked:
            if x not in seen:
                seen.add(x)
                out.append(Routed(sha1=x, span=span, why=why, how=hows[span], written=written))
    if not out and not isinstance(reports, Mapping):  # no company named: a period only one filing has?
        only = only_filing_of_period(question_text, list(reports))
        if only is not None:
            out.append(Routed(sha1=only.sha1s[0], span=(0, 0), why=only.why, how="period only"))
    return out


def _one_company(reports) -> list:
    """The reports when they all belong to one company (names equal once normalized), else []."""
    if isinstance(reports, Mapping):
        return []
    reports = list(reports)
    return reports if reports and len({tuple(normalize_tokens(r.company)) for r in reports}) == 1 else []


def route(question_text: str, reports, given: str = "") -> list[str]:
    """The sha1s of the reports the question names (order of appearance); [] if none. Several filings of
    one company: the one(s) its period names (see route_filings)."""
    return [r.sha1 for r in route_filings(question_text, reports, given)]


def routing_status(question_text: str, kind: str, reports, given: str = "") -> str:
    """How the question was routed: "unrouted" (no known company named), "ambiguous" (a non-comparative
    question names several companies, or one name matches several reports that no period tells apart:
    all of them are searched), else "ok" (a filing chosen by period counts as ok; its reason is recorded).
    Recorded with every retrieval so a silent N/A has its reason."""
    routed = route_filings(question_text, reports, given)
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


def split_comparative(question_text: str, kind: str, reports, given: str = "") -> dict[str, str]:
    """``{sha1: text}`` per routed report: sub-questions for comparative ones, else the question itself."""
    routed = route(question_text, reports, given)
    if kind != "comparative" or len(routed) < 2:
        return {sha1: question_text for sha1 in routed}
    names = dict(_as_pairs(reports))
    return {sha1: sub_question(question_text, names[sha1]) for sha1 in routed}
