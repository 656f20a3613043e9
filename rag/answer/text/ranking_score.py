"""How well a group of table rows fits a ranking question (:mod:`rag.answer.text.ranking`): the question's words
printed where the rows are, a search-lexicon topic counted once, and what the rows are called where another table of
the filing prints the same names.

Why: the question says what the rows are in its own words ("which segment", "by top line"); the table holding the
figures often does not print them ("Net Sales" over General Mills' segments), while another table of the same names
does ("Segment Operating Profit"). Borrowing only the words saying what the rows are keeps a filter ("Domestic"
beside "International") or another metric from passing across.

Contracts:
- ``group_scores(cfg, groups, terms, topics, row_words) -> list[float]``: each group's score: 1 for each question
  term (a lexicon topic once: ``topic_keys(cfg, question, company)``, :func:`terms_printed`) printed where it is
  (:func:`where_printed`), or printed by another table of the same filing over the same names (:func:`_borrowed`)
  when ``row_words`` has it; LABEL_CREDIT for each only in its row labels.
- ``asked_row_words(question, company, terms)``: the question's terms among the ROW_WORDS words after "which" /
  "what": what it says the rows are.
"""
from __future__ import annotations

import re
from typing import Iterable

from ...core.config import RunConfig
from ...core.questions import search_text, without_company
from ..computed.formulas import OperandSpec, lexicon_path, load_lexicon
from ..common.focus import STEM, _segment_terms, _stem
from .row_groups import Group

LABEL_CREDIT = 0.5  # a question word only among the row labels: a filter ("domestic") more than the rows' kind
ROWS_SHARED = 2  # labels two tables share at least for their rows to be the same (segments, categories)
_MARKS = re.compile(r"\(\w{1,2}\)|[^a-z0-9& ]")
ROW_WORDS = 3  # words after "which" that may say what the rows are ("which product category")
_WHICH = re.compile(r"\b(?:which|what)\b((?:\W+[\w&'-]+){1,%d})" % ROW_WORDS, re.I)


def where_printed(group: Group) -> str:
    """Where the group is printed: the page's heading, the table's title, the section; and the statement 05 found
    the page to be ("balance sheet"), which a page's text may not name."""
    return " ".join((group.heading, group.title, group.section, group.page.statement.replace("_", " ")))


def topic_keys(cfg: RunConfig, question: str, company: str) -> dict[str, str]:
    """Each matched key of a search-lexicon topic the question matches (its terms as :func:`_segment_terms` reports
    them: a phrase whole, a word by its stem; the question's own words of the topic among them) -> the topic's
    name: so a topic counts once, however many of its words a group prints ("Net sales" is one revenue, not
    "net sales" and "sales")."""
    from ...retrieve.query import match_lexicon

    keys: dict[str, str] = {}
    for topic in match_lexicon(cfg, search_text(question, company)):
        for t in topic.terms:
            t = t.lower()
            keys.setdefault(t if " " in t else _stem(t) if len(t) >= STEM else t, topic.name)
    return keys


def terms_printed(text: str, terms: tuple[str, ...], topics: dict[str, str]) -> frozenset[str]:
    """The question's terms ``text`` prints, the keys of one lexicon topic counted as that topic."""
    return frozenset(topics.get(hit, hit) for hit in _segment_terms(text, terms))


def _label_key(label: str) -> str:
    """A row label compared across tables: lower case, footnote marks ("(1)", "(a)") and punctuation left out."""
    return " ".join(_MARKS.sub(" ", label.lower()).split())


def asked_row_words(question: str, company: str, terms: tuple[str, ...]) -> frozenset[str]:
    """The question's terms among the (at most ROW_WORDS) words after its "which" / "what", its company's name left
    out: what it says the rows are ("which product category", "which segment")."""
    m = _WHICH.search(without_company(question, company))
    return _segment_terms(m.group(1), terms) if m else frozenset()


def _names(group: Group, operands: Iterable[OperandSpec]) -> set[str]:
    """The group's row labels (:func:`_label_key`) that name something rather than a statement's line item: not
    "Total ...", not a label of a computed figure's operand (``prompts/figures/formulas.toml``: net income,
    provision for income taxes)."""
    keys = {_label_key(label) for label, _ in group.rows}
    return {k for k in keys if not k.startswith("total") and
            not any(k == o.phrase or any(re.search(rx, k) for rx in o.labels) for o in operands)}


def _lenders(cfg: RunConfig, groups: list[Group], where: list[frozenset[str]],
             terms: tuple[str, ...], topics: dict[str, str]) -> list[tuple[str, set[str], frozenset[str]]]:
    """(filing, names, the question's words printed where they are) of each group (:func:`_names`), and of each
    table printing its names as sections over line items (Amazon's segment note: "AWS:", "International:", each
    over net sales, operating expenses and operating income), where being the table's title and heading."""
    operands = load_lexicon(lexicon_path(cfg)).operands.values()  # read once for every group
    out = [(g.page.sha1, _names(g, operands), w) for g, w in zip(groups, where)]
    tables: dict[tuple[str, int, str], list[Group]] = {}
    for g in groups:
        if g.section:
            tables.setdefault((g.page.sha1, g.page.page, g.title), []).append(g)
    for (sha1, _, title), members in tables.items():
        sections = {_label_key(g.section) for g in members}
        if len(sections) >= ROWS_SHARED:
            out.append((sha1, sections, terms_printed(" ".join((members[0].heading, title)), terms, topics)))
    return out


def _borrowed(cfg: RunConfig, groups: list[Group], where: list[frozenset[str]], terms: tuple[str, ...],
              topics: dict[str, str], row_words: frozenset[str]) -> list[frozenset[str]]:
    """For each group, the words the question says its rows are (:func:`asked_row_words`) that another table of the
    same filing prints where its rows, or its sections, are the same names (at least ROWS_SHARED, and half of the
    smaller set; :func:`_lenders`): what those rows are called there. "Which segment performed best": General
    Mills heads its segments' net sales "Net Sales" and their operating profit "Segment Operating Profit"; the rows
    are segments in both. Only those words: a table of the same rows may be another's filter ("Domestic" beside
    "International") or another metric."""
    lenders = _lenders(cfg, groups, where, terms, topics)
    out = []
    for i, g in enumerate(groups):
        names, got = lenders[i][1], set()
        for j, (sha1, other, printed) in enumerate(lenders):
            shared = len(names & other)
            if (j != i and sha1 == g.page.sha1 and shared >= ROWS_SHARED
                    and shared * 2 >= min(len(names), len(other))):
                got |= printed & row_words
        out.append(frozenset(got - where[i]))
    return out


def group_scores(cfg: RunConfig, groups: list[Group], terms: tuple[str, ...], topics: dict[str, str],
                 row_words: frozenset[str]) -> list[float]:
    """Each group's score: 1 for each question term (a lexicon topic once) printed where it is, or where another
    table prints the same rows (:func:`_borrowed`); LABEL_CREDIT for each only in its row labels."""
    where = [terms_printed(where_printed(g), terms, topics) for g in groups]
    borrowed = _borrowed(cfg, groups, where, terms, topics, row_words)
    out = []
    for g, w, b in zip(groups, where, borrowed):
        labels = terms_printed(" ".join(label for label, _ in g.rows), terms, topics)
        out.append(len(w | b) + LABEL_CREDIT * len(labels - w - b))
    return out
