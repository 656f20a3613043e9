"""Row labels of a table naming the metric a number question asks for (stage 06, :mod:`rag.answer.numbers.figures`).

Contracts:
- ``label_score(label, terms, aliases, qualifiers) -> float``: how well a row label names the metric: the share
  of the metric's word stems (:mod:`rag.answer.numbers.figure_check`, synonyms included) less
  :data:`EXTRA_WORD_PENALTY` per other word of the label (``qualifiers``, from ``label_qualifiers(question)``:
  words generic in a question but not on a label, "current"); at least :data:`ALIAS_SCORE` for a label of
  :data:`LABEL_ALIASES` of the question's metric (``aliases_for(question)``).
- ``MONEY_LABEL`` / ``PER_SHARE_LABEL``: labels of an amount of money (never a count question's row) / of a
  per-share figure (a per-share question's only rows).
- ``named_row(label, named, terms, context) -> (score, names it)``: a row naming one of the question's named
  things (``distinct`` words of ``figure_check.named_words``: "CDX-585", "barzolvolimab"), scored by the
  metric's other words in the label and its grid's ``context`` (title and the lines above).
"""
from __future__ import annotations

import re

from . import figure_check
from ...core.questions import search_text

EXTRA_WORD_PENALTY = 0.1  # per label word that is not a word of the metric ("Cost of revenue" vs "Revenue")
ALIAS_SCORE = 0.95  # a label in the report's words: below an exact match, so "Cost of revenue" wins its own question
# Label words that ERC questions use as boilerplate ("current period") and so are no metric words, yet on a row
# label name a part of the metric: "Total current assets" is not "Total assets". They count as extra label
# words unless the question's metric says them.
LABEL_QUALIFIERS = frozenset({"current", "net"})  # "Net assets" is not "Total assets" either
# A qualifier names another figure (a part, or what is left after a deduction), not a wording of the same one:
# it costs more than an extra word, so two other tables printing the part's value (SUPPORT_BONUS x
# SUPPORT_MAX) cannot lift "Total current assets" over the statement's own "Total assets".
QUALIFIER_PENALTY = 0.2
# Row labels that name a metric in a report's words although they share few of the question's words.
# (question regex, label regexes); labels are lower-cased with punctuation other than "%"/"&" removed.
LABEL_ALIASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (r"cash flows? from operati|operating cash flow|cash from operations|cash generated from operations",
     (r"^net cash (?:\w+ ){0,4}(?:from|by|in) operating activities",
      r"^cash (?:generated|provided) (?:from|by) operations", r"^net cash (?:inflows?|outflows?) from operating",
      r"^net cash from operations", r"^cash flows? from operating activities$")),
    (r"\brevenues?\b|\bsales\b|\bturnover\b",
     (r"^(?:total )?(?:net )?(?:operating )?(?:revenues?|sales|turnover)(?: and other income)?"
      r"(?: from contracts with customers)?(?: net)?$", r"^revenue from (?:contracts with )?customers$")),
    (r"\bnet (?:income|profit|earnings|loss)\b",
     (r"^net (?:income|profit|earnings|loss)(?: loss| income)?(?: for the (?:year|period))?$",
      r"^(?:profit|loss|profit loss|loss profit) for the (?:year|period)$",
      r"^net (?:income|loss|profit) attributable to")),
    (r"\boperating (?:income|profit)\b|\bincome from operations\b",
     (r"^operating (?:income|profit|loss)(?: loss| income)?$",
      r"^(?:income|loss|income loss|loss income) from operations$",
      r"^results from operating activities$")),
    (r"\bcapital expenditures?\b|\bcapex\b",
     (r"^(?:net )?(?:purchases?|acquisitions?|payments? (?:for|on)|additions to) (?:of )?(?:property|plant|ppe|"
      r"premises|real estate|investment propert|rental propert|fixed assets)",
      r"^capital expenditures?$")),
    (r"\blong-term debt\b|\blong term debt\b",
     (r"^long-term debt", r"^long term debt", r"^non-current borrowings", r"^borrowings non-current")),
    (r"\btotal assets\b", (r"^total assets$",)),
    (r"\beps\b|\bearnings per share\b",
     (r"^(?:basic |diluted |basic and diluted )?(?:net )?"
      r"(?:earnings|loss|income|profit|earnings loss|loss earnings|income loss|loss income)"
      r" per (?:ordinary |common )?share", r"^basic (?:earnings|loss) per share")),
    (r"\bdividends? per share\b", (r"^(?:total )?dividends? (?:declared |paid )?per (?:ordinary |common )?share",)),
    (r"\bgross margin\b", (r"^gross (?:profit )?margin",)),
    (r"\b(?:shareholders|stockholders)'? equity\b|\btotal equity\b",
     (r"^total (?:shareholders|stockholders)? ?equity", r"^total equity")),
    (r"\bemployees\b|\bheadcount\b|\bworkforce\b",
     (r"^(?:total )?(?:number of )?(?:employees|headcount|staff|fte|full-time employees)",)),
)


# Row labels of an amount of money: never the answer to a count question ("Number of employees").
MONEY_LABEL = re.compile(r"(?i)\b(?:expenses?|costs?|contributions?|salar(?:y|ies)|wages|benefits|compensation|"
                          r"payables?|revenues?|income|remuneration|\$)")
PER_SHARE_LABEL = re.compile(r"(?i)\bper\b|\beps\b|\bpence\b|\(p\)|\bcents?\b")  # a per-share row names it
NAMED_MIN_CHARS = 8  # a capitalized question word this long names a thing (a drug, a programme)


# ---- labels -----------------------------------------------------------------------------------------------
def _norm_label(label: str) -> str:
    s = re.sub(r"[^\w\s%&'-]", " ", label.lower().replace("’", "'"))
    s = re.sub(r"\b\d+\b", " ", s)  # footnote numbers
    return re.sub(r"\s+", " ", s.replace("'", "")).strip()


def aliases_for(question: str, company: str = "") -> tuple[str, ...]:
    """Label patterns of :data:`LABEL_ALIASES` for the metric the question asks for."""
    q = search_text(question, company)  # the question without its ERC boilerplate and company
    return tuple(a for rx, labels in LABEL_ALIASES if re.search(rx, q, re.IGNORECASE) for a in labels)


def label_qualifiers(question: str, company: str = "") -> frozenset[str]:
    """:data:`LABEL_QUALIFIERS` the question's metric does not say (these count against a row label)."""
    said = set(re.findall(r"[a-z]+", search_text(question, company).lower()))
    return frozenset(LABEL_QUALIFIERS - said)


def label_score(label: str, terms: set[str], aliases: tuple[str, ...] = (),
                qualifiers: frozenset[str] = frozenset()) -> float:
    """Share of ``terms`` matched less EXTRA_WORD_PENALTY per other word and QUALIFIER_PENALTY per word of
    ``qualifiers`` (generic words that on a label name another figure); at least ALIAS_SCORE for an alias."""
    norm = _norm_label(label)
    if not norm:
        return 0.0
    alias = ALIAS_SCORE if any(re.search(a, norm) for a in aliases) else 0.0
    if not terms:
        return alias
    stems = figure_check._stems(norm)
    matched = figure_check._matched(stems, terms)
    extra = sum(1 for s in stems if not any(s.startswith(t) or t.startswith(s) for t in terms))
    quals = sum(1 for w in norm.split() if w in qualifiers)
    return max(alias, matched / len(terms) - EXTRA_WORD_PENALTY * extra - QUALIFIER_PENALTY * quals)


def asks_total(question: str, company: str = "") -> bool:
    """The question's metric (ERC boilerplate and company removed) says "total" ("Total revenue", "Total assets")."""
    return bool(re.search(r"\btotal\b", search_text(question, company), re.IGNORECASE))


def distinct(word: str) -> bool:
    """A named word that identifies a thing: a code with digits ("vp-102"), or a long word ("barzolvolimab")."""
    return any(c.isdigit() for c in word) or len(word) >= NAMED_MIN_CHARS


def named_row(label: str, named: list[str], terms: set[str], context: str) -> tuple[float, bool]:
    """(score, names it) of a row whose label names one of the question's ``named`` things: the share of the
    metric's other words found in the label plus the table's title and the lines above it; (0, False) when the
    label names none of them."""
    words = set(re.split(r"[\s/]+", label.lower()))
    hit = [w for w in named if w in words or any(part in words for part in w.split("/"))]
    if not hit:
        return 0.0, False
    rest = terms - figure_check._stems(" ".join(hit))
    if not rest:
        return 1.0, True
    return figure_check._matched(figure_check._stems(f"{context} {label}"), rest) / len(rest), True
