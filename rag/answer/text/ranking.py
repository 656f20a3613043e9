"""Which row of a table ranks first, answered in code (stage 06, ``answer.text_ranking``): "the largest liability
in the balance sheet", "which product category performed the best", "which activity brought in the most cash".

Why: asked for a free answer over whole pages, the 1.5B reader named the row it read first or the one with the
biggest figure of another table (FinanceBench tuning half, RESULTS.md). Picking the largest of five figures is
arithmetic; which table holds the rows asked about is the judgement, made here by the words the table's heading,
title and section print (the reader's choice among groups and the embedder's cosine alone chose worse there).

Contracts:
- ``ranking_ask(question, company) -> Ask | None``: a question asking which row ranks first: a superlative (most,
  largest, highest, best / least, lowest, smallest, worst) outside the company's name ("Best Buy");
  ``by_change`` when it asks about a change or a performance (growth, decline, increase... or "perform"); the
  most of a decrease ("the biggest drop", "declined the most") is the smallest change; None otherwise.
- The groups of rows a table offers (``row_groups``, ``listed_candidates``, ``listed_groups``):
  :mod:`rag.answer.text.row_groups`.
- ``answer_ranking(cfg, question, pages, company) -> dict | None``: the groups of the first
  ``answer.text_ranking_pages`` pages (row groups and classes across subtotals, :func:`class_groups`; only those on
  a statement page 05 added for a statement the question names, "in its Balance Sheet", when any has rows) with at
  least 2 rows that have the figures (the first value cell, and for a change the second, one printed figure each),
  each scored by the question's topic words (:func:`rag.answer.common.focus.topic_terms_for`) it prints: 1 for each
  in where it is printed (the page's first heading, the table's title, the section, the statement 05 found the page
  to be), or printed where another table of the filing holds the same names and said by the question to be what
  the rows are ("which segment"), LABEL_CREDIT for each only in its row labels; a search-lexicon topic the question
  matches counts once however many of its words are printed ("by top line" is revenue, "Net sales" one revenue):
  :mod:`rag.answer.text.ranking_score`. Ties: for a change a group of amounts before a group of
  rates, then the embedder's cosine between the group and the question (:func:`rag.index.query_cosines`), then the
  page's rank. The best group is taken when its score is at least ``answer.text_ranking_min_terms``; a class group
  scoring as much and holding all its rows replaces it. Its rows (only those the question names, when it names two
  or more; those of the group's more common unit) are ranked by the first value column (the question's year's column
  when a header names it) or, for a change, by the change from the next column to it (in percent; a rate's in
  percentage points; with dated headers, between the question's (or the latest) year's column and the year before's
  with the same header words). The answer names the first row, its figures and the rows it was ranked among, citing
  the group's page. A question listing its candidates ("among operations, investing, and financing activities":
  :func:`listed_candidates`) is answered only from a table with a row for every one of them (:func:`listed_groups`);
  with no such table, from the groups as above.
  The :func:`rag.answer.fuse.answer_pages` result shape (``interpretation["ranking"]`` says how,
  with the best groups scored); ``value`` None (and ``taken`` false) when no group scores enough; None when the
  question asks no ranking or no group has the figures.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...core.config import RunConfig
from ...core.questions import without_company
from ..common.context import CtxPage
from ..common.focus import _segment_terms, topic_terms_for
from ..common.md_tables import column_year
from ..common.printed import parse_printed
from ..computed.formulas import question_years
from ...retrieve.statements import asked_statements
from .evidence_math import CHANGE, LEAST, MOST
from .ranking_score import asked_row_words, group_scores, topic_keys, where_printed
from .row_groups import Group, class_groups, listed_candidates, listed_groups, row_groups

PERFORM = re.compile(r"\bperform", re.I)  # "performed the best": a performance is a change over the period
DECREASE = re.compile(r"\b(drop|declin|decreas|fell|fall|shr[iau]nk|contract)", re.I)  # "the biggest drop"
_ONE_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
SHOWN = 6  # groups kept in the debug record, best first


@dataclass(frozen=True)
class Ask:
    least: bool  # the smallest (lowest, worst) rather than the largest
    by_change: bool  # ranked by the change between two columns, not by one column's figure


def ranking_ask(question: str, company: str = "") -> Ask | None:
    """See module docstring."""
    question = without_company(question, company)
    most, least = MOST.search(question), LEAST.search(question)
    if not (most or least):
        return None
    by_change = bool(CHANGE.search(question) or PERFORM.search(question))
    # "the biggest drop", "declined the most": the most of a decrease is the smallest (most negative) change
    falls = by_change and bool(most) and not least and bool(DECREASE.search(question))
    return Ask(least=(bool(least) and not most) or falls, by_change=by_change)


def _figure(cell: str) -> float | None:
    if len(_ONE_NUMBER.findall(cell)) != 1:
        return None
    p = parse_printed(cell)
    return None if p is None else p.value


def _column(group: Group, question: str) -> int:
    """The value column of the question's year when a header names it, else the first."""
    years = question_years(question)
    for i, head in enumerate(group.columns):
        if years and column_year(head) in years:
            return i
    return 0


def _change_columns(group: Group, question: str) -> tuple[int, int]:
    """The columns a change is read between (now, before): when headers date the columns, the question's year's
    (else the latest year's) and the year before's with the same header words ("2022 Net Sales" and "2021 Net
    Sales", not the "% of Total" beside it; Amazon prints 2018 left of 2019); else the first column and the one to
    its right."""
    dated = [(i, y) for i, h in enumerate(group.columns) if (y := column_year(h))]
    if not dated:
        return 0, 1
    years = [y for y in question_years(question) if any(y == d for _, d in dated)]
    year = max(years) if years else max(y for _, y in dated)
    now = next(i for i, y in dated if y == year)
    words = _header_words(group.columns[now])
    before = [i for i, y in dated if y == year - 1]
    same = [i for i in before if _header_words(group.columns[i]) == words]
    return (now, (same or before)[0]) if before else (0, 1)


def _header_words(head: str) -> frozenset[str]:
    """A column header's words, years left out."""
    return frozenset(w.lower() for w in re.findall(r"[A-Za-z]+", head))


def _percent(cell: str) -> bool:
    return "%" in cell


def _ranked(group: Group, ask: Ask, question: str) -> list[tuple[str, list[str], float]]:
    """(label, the cells used, the ranking figure) of each row that has the figures, in the group's order; rows
    of the group's more common unit only (percentages or amounts), so a share is not ranked against an amount."""
    col, prev = _change_columns(group, question) if ask.by_change else (_column(group, question), None)
    out = []
    for label, cells in group.rows:
        if len(cells) <= max(col, prev or 0):
            continue
        now = _figure(cells[col])
        if now is None:
            continue
        if prev is None:
            out.append((label, [cells[col]], now))
            continue
        before = _figure(cells[prev])
        if before is None:
            continue
        if _percent(cells[col]) or _percent(cells[prev]):  # a rate's change, in percentage points
            out.append((label, [cells[col], cells[prev]], now - before))
        elif before:  # an amount's change in percent from the earlier period's column
            out.append((label, [cells[col], cells[prev]], (now - before) / abs(before) * 100))
    pct = [r for r in out if _percent(r[1][0])]
    return pct if len(pct) * 2 > len(out) else [r for r in out if not _percent(r[1][0])]


def _is_percent(rows: list[tuple[str, list[str], float]]) -> bool:
    return bool(rows) and _percent(rows[0][1][0])


def _named(rows: list[tuple[str, list[str], float]], group: Group,
           terms: tuple[str, ...]) -> list[tuple[str, list[str], float]]:
    """The rows the question names ("among operations, investing and financing activities"), when it names at
    least two: those whose label prints a question word that the group's heading, title and section do not."""
    where = _segment_terms(where_printed(group), terms)
    named = [r for r in rows if _segment_terms(r[0], terms) - where]
    return named if len(named) >= 2 else rows


def answer_ranking(cfg: RunConfig, question: str, pages: list[CtxPage], company: str = "") -> dict[str, Any] | None:
    """See module docstring."""
    ask = ranking_ask(question, company)
    if ask is None:
        return None
    listed = listed_candidates(question)
    shown_pages = pages[: cfg.answer.text_ranking_pages]
    ranked = []
    if listed:  # a table with a row for every candidate the question lists
        ranked = [(g, rows) for p in shown_pages for g in listed_groups(p, listed)
                  if len(rows := _ranked(g, ask, question)) == len(listed.stems)]
    from_list = bool(ranked)
    if not ranked:  # no table has a row for every listed candidate (or none listed): every group of rows
        ranked = [(g, rows) for p in shown_pages for g in row_groups(p) + class_groups(p)
                  if len(rows := _ranked(g, ask, question)) >= 2]
        asked = set(asked_statements(cfg, question))
        on_statement = [(g, rows) for g, rows in ranked if g.page.statement in asked]
        ranked = on_statement or ranked  # "in its Balance Sheet": the statement 05 added, when it has rows
    if not ranked:
        return None
    from ...index import query_cosines

    terms = tuple(topic_terms_for(cfg, question, company))
    topics = topic_keys(cfg, question, company)
    sims = query_cosines(cfg, question, [g.describe() for g, _ in ranked])
    # Ties: for a change, amounts before rates (a growth is an amount's change, a share's change is not one);
    # then the closest in meaning, then the better-ranked page.
    scores = group_scores(cfg, [g for g, _ in ranked], terms, topics, asked_row_words(question, company, terms))
    scored = sorted(((sc, float(c), g, rows) for (g, rows), c, sc in zip(ranked, sims, scores)),
                    key=lambda x: (-x[0], ask.by_change and _is_percent(x[3]), -x[1], x[2].page.rank))
    seen = [{"describe": g.describe(), "page": g.page.page, "score": sc, "cos": round(c, 4)}
            for sc, c, g, _ in scored[:SHOWN]]
    score, _, group, rows = scored[0]
    # A class across its subtotals ("Total current liabilities" ... "Total liabilities") holding the best group's
    # rows, and printed where the question says as much, is the whole the question ranks.
    wider = [x for x in scored if x[0] >= score and len(x[3]) > len(rows) and
             {r[0] for r in rows} <= {r[0] for r in x[3]}]
    if wider:
        score, _, group, rows = max(wider, key=lambda x: len(x[3]))
    if score < cfg.answer.text_ranking_min_terms:
        return {"value": None, "calls": [], "interpretation": {"ranking": {"groups": seen, "taken": False}}}
    if not from_list:  # (a listed group holds the listed rows only)
        rows = _named(rows, group, terms)
    label, cells, figure = (min if ask.least else max)(rows, key=lambda r: r[2])
    word = ("smallest" if ask.least else "largest") + (" change" if ask.by_change else "")
    unit = " percentage points" if _percent(cells[0]) else "%"
    shown = f"{cells[0]} against {cells[1]} ({figure:+.1f}{unit})" if ask.by_change else cells[0]
    where = f"{group.title}, {group.section}" if group.section else group.title
    value = (f"{label}: {shown}, the {word} among {', '.join(r[0] for r in rows)} "
             f"({where}; page {group.page.page}).")
    interp = {"ranking": {"groups": seen, "taken": True, "label": label, "cells": cells, "figure": round(figure, 4),
                          "by_change": ask.by_change, "least": ask.least, "page": group.page.page,
                          "rows": [r[0] for r in rows]}}
    return {"value": value, "cited": [group.page], "calls": [], "interpretation": interp,
            "answering_part": [group.page]}
