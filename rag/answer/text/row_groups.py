"""The groups of sibling rows a clean page's tables offer, for the open-text answers that read table rows in code
(stage 06; :mod:`rag.answer.text.ranking`).

Contracts:
- ``row_groups(page) -> [Group]``: the tables of a clean page cut into groups of sibling rows: a row without a
  figure starts a new group (its label is the group's ``section``, "Domestic:"), a total row ends one and is not
  a member; rows without a letter in their label are left out.
- ``listed_candidates(question) -> Listed | None``: the candidates a question lists after "among" ("operations,
  investing, and financing activities": stems operat, invest, financ and the noun they share, "activities"); None
  when it lists fewer than two.
- ``listed_groups(page, listed) -> [Group]``: per table of the page (one without a year in its headers, of the
  width of the dated one above it, continues that one) that has, for every candidate, a row naming it
  (its stem, no other candidate's, and the shared noun when there is one), one group of those rows: the last such
  row per candidate (a section's total closes it).
- ``class_groups(page) -> [Group]``: the rows of one class across its subtotals: a subtotal ("Total current
  liabilities") and the rows after it, up to the class's total ("Total liabilities") or the table's end with no
  section row between, are one group; its section names the class ("liabilities"); a statement the parser split at a
  subtotal goes on in the next table, and a table without a year in its headers takes those of the dated one above
  it of its width. Only groups of more than one part (what :func:`row_groups` splits at the subtotal).
- ``Group.describe()``: where the rows are printed, then their labels (what the embedder and the debug record see).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..common.context import CtxPage
from ..common.md_tables import column_year, parse_tables

TOTAL = re.compile(r"^\s*(?:total|net total|grand total)\b|\btotals?\s*$", re.I)
_HEADING = re.compile(r"^#+\s+(.+)$", re.M)
LABEL_CHARS = 60  # a long row label is cut here in a group's description


@dataclass
class Group:
    page: CtxPage
    title: str
    section: str
    heading: str  # the page's first heading ("CONSOLIDATED BALANCE SHEETS"), "" when none
    columns: list[str]  # header text of each value column
    rows: list[tuple[str, list[str]]] = field(default_factory=list)  # (label, value cells)

    def describe(self) -> str:
        """Where the rows are printed, then their labels: what the embedder and the debug record see."""
        where = [w for w in (self.heading, self.title, self.section) if w]
        where = [w for i, w in enumerate(where) if w not in where[:i]]
        labels = "; ".join(_cut(label) for label, _ in self.rows)
        return f"{' > '.join(where)}: {labels}"


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 3].rstrip() + "..."


def _page_heading(page: CtxPage) -> str:
    """The page's first heading ("CONSOLIDATED BALANCE SHEETS"), cut; "" when none."""
    m = _HEADING.search(page.text)
    return _cut(m.group(1).strip()) if m else ""


@dataclass
class _Part:
    """The rows of one table between two of its boundaries: a section row, a total row, the table's end."""
    title: str
    columns: list[str]
    section: str  # the section row above it ("Domestic"), "" when none
    rows: list[tuple[str, list[str]]]  # (label, value cells) of rows with a figure and a letter in their label
    ends: str  # "section", "end" (of the table) or the closing total row's label


def _parts(page: CtxPage, carry_years: bool = False) -> list[_Part]:
    """The page's tables cut at section rows (a row without a figure; its label the next part's section) and at
    total rows (no member of the rows they close), in page order. With ``carry_years`` a table without a year in
    its headers takes those of the dated table above it of its width (a statement the parser split)."""
    out: list[_Part] = []
    dated: list[str] = []
    for t in parse_tables(page.text):
        title, cols = t.plain_title(), t.value_columns()
        if any(column_year(c) for c in cols):
            dated = cols
        elif carry_years and dated and len(cols) == len(dated):
            cols = dated
        section, rows = "", []
        for r in t.rows:
            if not r:
                continue
            label, cells = r[0].strip(), [c.strip() for c in r[1:]]
            if not any(re.search(r"\d", c) for c in cells):  # a section heading row ("Domestic:", "Liabilities")
                out.append(_Part(title, cols, section, rows, "section"))
                section, rows = label.rstrip(":"), []
            elif TOTAL.search(label):  # a total closes its rows; it is no member of them
                out.append(_Part(title, cols, section, rows, label))
                section, rows = "", []
            elif re.search(r"[A-Za-z]", label):
                rows.append((label, cells))
        out.append(_Part(title, cols, section, rows, "end"))
    return out


def row_groups(page: CtxPage) -> list[Group]:
    """See module docstring."""
    heading = _page_heading(page)
    return [Group(page, p.title, p.section, heading, p.columns, p.rows) for p in _parts(page) if p.rows]


_AMONG = re.compile(r"\bamong\s+(?:the\s+)?(?P<items>[^?.;:]+)", re.I)
_LIST_SPLIT = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", re.I)
_STEM = 6  # letters a candidate and a label word share: "operations" and "operating" (operat)
_WORD = re.compile(r"[A-Za-z]+")
_FILLER = {"the", "its", "their", "our", "his", "her", "a", "an"}


@dataclass(frozen=True)
class Listed:
    stems: tuple[tuple[str, ...], ...]  # per candidate the stems of its words, lower case ("north", "americ")
    noun: str  # the words the last candidate adds, shared by all ("activities"), "" when none


def listed_candidates(question: str) -> Listed | None:
    """See module docstring."""
    m = _AMONG.search(question)
    if not m:
        return None
    items = [i for i in _LIST_SPLIT.split(m.group("items").strip()) if i]
    # The list ends where a clause starts ("..., which brought in the most"): cut at the first clause word.
    for n, item in enumerate(items):
        if re.match(r"(?:which|what|who|brought|had|has|was|is|did)\b", item, re.I):
            items = items[:n]
            break
    words = [[w for w in _WORD.findall(i) if w.lower() not in _FILLER] for i in items]
    if len(words) < 2 or any(not w for w in words):
        return None
    noun = ""
    if all(len(w) == 1 for w in words[:-1]) and len(words[-1]) > 1:
        # "operations, investing, and financing activities": one word each, the last with the noun they share
        noun, words[-1] = " ".join(words[-1][1:]).lower(), words[-1][:1]
    stems = tuple(tuple(w[:_STEM].lower() for w in ws) for ws in words)
    return Listed(stems, noun) if len(set(stems)) == len(stems) else None


def _names(label: str, stems: tuple[str, ...]) -> bool:
    words = [w.lower() for w in _WORD.findall(label)]
    return all(any(w.startswith(s) for w in words) for s in stems)


def _logical_tables(page: CtxPage) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, value column headers, rows) per table of the page, a table without a year in its headers and of the
    width of the dated one above it joined to that one (the parser split a statement at a text line)."""
    out: list[tuple[str, list[str], list[list[str]]]] = []
    for t in parse_tables(page.text):
        cols = t.value_columns()
        dated = any(column_year(c) for c in cols)
        if out and not dated and len(cols) == len(out[-1][1]) and any(column_year(c) for c in out[-1][1]):
            out[-1][2].extend(t.rows)
            continue
        out.append((t.plain_title(), cols, list(t.rows)))
    return out


def _noun(total: str) -> str:
    """The class a total row counts: its label's last word, lower case ("Total current liabilities": liabilities)."""
    words = _WORD.findall(total)
    return words[-1].lower() if len(words) > 1 else ""


def _subtotal(total: str, noun: str) -> bool:
    """A total of part of the class: a word between "Total" and the class ("Total current liabilities")."""
    return bool(re.search(r"\w+\s+\w+\s+" + re.escape(noun), total, re.I))


def class_groups(page: CtxPage) -> list[Group]:
    """See module docstring."""
    heading = _page_heading(page)
    parts = _parts(page, carry_years=True)
    out: list[Group] = []
    i = 0
    while i < len(parts):
        noun = _noun(parts[i].ends) if parts[i].ends not in ("section", "end") else ""
        if noun and not _subtotal(parts[i].ends, noun):
            noun = ""  # the class's own total ("Total liabilities"): nothing of it follows
        j = i
        # after a subtotal of the noun ("Total current liabilities"): the parts up to its total ("Total
        # liabilities"), or to the end of a table (the next table too when the subtotal closed the one before)
        while noun and j + 1 < len(parts) and (_noun(parts[j + 1].ends) == noun or parts[j + 1].ends == "end"):
            j += 1
            if parts[j].ends == "end" and not parts[j].rows:
                continue  # the subtotal was its table's last row: the statement goes on in the next table
            if parts[j].ends == "end" or not _subtotal(parts[j].ends, noun):
                break  # a table's end, or the class's own total
        if sum(1 for part in parts[i: j + 1] if part.rows) > 1:
            joined = [m for part in parts[i: j + 1] for m in part.rows]
            out.append(Group(page, parts[i].title, noun.capitalize(), heading, parts[i].columns, joined))
        i = j + 1
    return out


def listed_groups(page: CtxPage, listed: Listed) -> list[Group]:
    """See module docstring."""
    out: list[Group] = []
    heading = _page_heading(page)
    for title, cols, rows in _logical_tables(page):
        last: dict[tuple[str, ...], tuple[str, list[str]]] = {}
        for r in rows:
            if not r or not any(re.search(r"\d", c) for c in r[1:]):
                continue
            label = r[0].strip()
            hits = [s for s in listed.stems if _names(label, s)]
            if len(hits) == 1 and (not listed.noun or listed.noun in label.lower()):
                last[hits[0]] = (label, [c.strip() for c in r[1:]])
        if len(last) == len(listed.stems):
            out.append(Group(page, title, "", heading, cols, [last[s] for s in listed.stems]))
    return out
