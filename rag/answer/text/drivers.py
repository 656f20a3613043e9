"""What drove a figure's change, answered from the filing's own sentences (stage 06, ``answer.text_drivers``):
"What drove operating margin change as of FY2022 for 3M?".

Why: asked for a free answer, the 1.5B reader stated margins of the wrong rows or years, or called the metric not
useful, on every filing of data/fb-gen's dg17 (0 of 6) and on the tuning half's 3M. A filing explains its own
changes in sentences ("Operating profit increased 11 percent ..., primarily driven by ..."); the change itself is
arithmetic, as :mod:`.change` states it.

Contracts:
- ``drivers_ask(question, company) -> ChangeAsk | None``: an open question whose first sentence asks what drove,
  caused or explains a figure ("what drove", "what caused", "what were the drivers / reasons / factors", "why
  did"), with the figure (its first sentence's words less the company, the years, the ask and change words:
  "operating margin") and the years compared: the one it names and the year before, or the two it names. None
  otherwise, or when it names no year or no figure words are left.
- ``answer_drivers(cfg, question, pages, report_currency, company) -> dict | None``: both years' figures as
  :func:`rag.answer.text.change.year_figures` finds them (printed, else the lexicon's formula from its operands),
  computed from the formula first where the lexicon has one (a filing's printed "operating margin" rows are often
  its segments'), then up to ``DRIVER_SENTENCES`` sentences of the first ``answer.text_drivers_pages`` pages that
  state a change (increased, decreased, fell...) and its cause ("due to", "driven by", "attributable to", "as a
  result of", "reflecting", "offset by"...), name the figure (its formula's patterns or its numerator's operands',
  else its own words) and, if they name years, the later of the two compared and no other; those opening with
  the figure's name first (the company's own figure, not a segment's), then closest in meaning to the
  question's first sentence (:func:`rag.index.query_cosines`), each once. A sentence opening with "This" / "These" /
  "Increases were" ("For fiscal 2020, these decreases ...") carries the sentence before it (and is checked with it).
  The answer: the change sentence, then the quoted sentences with their pages; cited: the figures' and the
  sentences' pages. The :func:`rag.answer.fuse.answer_pages` result shape (``interpretation["drivers"]``); value
  None when the question asks no cause, a year's figure is missing (a metric the filing does not report: the reader
  says so) or no sentence states a cause (the reader answers then, the record says why).
"""
from __future__ import annotations

import ast
import re
from typing import Any

from ...core.config import RunConfig
from ...core.questions import without_company
from ..common.context import CtxPage
from ..computed.formulas import lexicon_path, load_lexicon, plain_formula, question_years
from ..numbers.prose_period import YEAR, page_sentences
from .change import CHANGE_WORDS, FILLER_WORDS, YEAR_WORDS, ChangeAsk, change_words, year_figures
from .quotes import quoted, sentence_key

DRIVER_SENTENCES = 2  # with the change sentence, the answer's three sentences

_ASK = re.compile(r"\bwhat\s+(?:has\s+|have\s+)?(?:drove|driven|drives|caused|causes|led\s+to|explains?)\b|"
                  r"\bwhat\s+(?:were|are|was|is)\s+the\s+(?:\w+\s+)?(?:drivers?|reasons?|causes?|factors?)\b|"
                  r"\bwhy\s+(?:did|has|have|was|were|is|are)\b", re.I)
_ASK_WORDS = re.compile(r"\b(?:drove|driven|drives|drivers?|caused|causes?|led|explains?|reasons?|factors?|why|"
                        r"main|key|primary|as|behind)\b", re.I)
_CAUSE = re.compile(r"\b(?:due\s+to|driven\s+by|attributable\s+to|as\s+a\s+result\s+of|result(?:ed|s|ing)?\s+from|"
                    r"reflect(?:s|ed|ing)?|offset\s+by|because\s+of|caused\s+by|owing\s+to)\b", re.I)
_MOVED = re.compile(r"\b(?:increased|decreased|declined|improved|rose|fell|grew|dropped|expanded|contracted|"
                    r"deteriorated|narrowed|widened|(?:was|were)\s+(?:up|down|higher|lower))\b", re.I)  # a change stated
_OPENING = re.compile(r"^(?:(?:for|in)\s+(?:the\s+)?(?:fiscal\s+)?(?:year\s+)?(?:19|20)\d\d,?\s+)?"
                      r"(?:(?:our|the|total|consolidated)\s+)*", re.I)
_ANAPHOR = re.compile(r"^(?:(?:for|in)\s+(?:fiscal\s+)?(?:year\s+)?(?:19|20)\d\d,\s+)?(?:this|these|such|(?:the\s+)?"
                      r"(?:increases?|decreases?|declines?|changes?|improvements?)\s+(?:was|were|is|are))\b", re.I)


def drivers_ask(question: str, company: str = "") -> ChangeAsk | None:
    """See module docstring."""
    first = question.split("?")[0]
    if not _ASK.search(first):
        return None
    years = sorted(set(question_years(first)))
    if len(years) == 1:
        years = [years[0] - 1, years[0]]
    if len(years) != 2:
        return None
    rest = without_company(first, company, possessive=True)
    rest = _ASK_WORDS.sub(" ", CHANGE_WORDS.sub(" ", YEAR_WORDS.sub(" ", rest)))
    words = FILLER_WORDS.sub(" ", rest).split()
    return ChangeAsk(" ".join(words).lower(), (years[0], years[1])) if words else None


def _names(cfg: RunConfig, question: str, ask: ChangeAsk) -> list[re.Pattern]:
    """Patterns a sentence naming the figure matches: its formula's and its numerator's operands' (lexicon; a
    margin moves with its profit, not with the sales it is a share of), else its own words."""
    lexicon = load_lexicon(lexicon_path(cfg))
    formula = plain_formula(question, lexicon)
    if formula is None:
        return [re.compile(r"\b" + r"\s+".join(map(re.escape, ask.metric.split())) + r"\b", re.I)]
    tree = formula.tree.body if isinstance(formula.tree, ast.Expression) else formula.tree
    top = tree.left if isinstance(tree, ast.BinOp) and isinstance(tree.op, ast.Div) else tree
    pats = list(formula.match)
    for name in (n.id for n in ast.walk(top) if isinstance(n, ast.Name)):
        spec = lexicon.operands.get(name)
        if spec is not None:
            pats += list(spec.asked) or [r"\b" + re.escape(spec.phrase) + r"\b"]
    return [re.compile(p, re.I) for p in pats]


def _subject(sentence: str, names: list[re.Pattern]) -> bool:
    """The sentence is about the figure itself: it opens with its name ("Operating profit increased ...", "Our
    operating income rate decreased ...", "For fiscal 2020, operating income ..."), not a segment's or an adjusted
    figure's ("Segment operating profit ...", "The increase in AWS operating income ...")."""
    head = _OPENING.sub("", sentence, count=1)
    return any(p.match(head) for p in names)


def _sentences(pages: list[CtxPage], names: list[re.Pattern], years: tuple[int, int]) -> list[tuple[str, CtxPage]]:
    """Cause sentences of a change naming the figure, of the later year, each once, in page order."""
    out: list[tuple[str, CtxPage]] = []
    seen: set[str] = set()
    for page in pages:
        sents = page_sentences(page.text, figures_only=False)
        for i, s in enumerate(sents):
            if not _CAUSE.search(s):
                continue
            if _ANAPHOR.match(s) and i:  # "This increase was primarily driven by ...": what increased is before it
                if out and out[-1] == (sents[i - 1], page):  # quoted alone just before: now with its cause
                    seen.discard(sentence_key(sents[i - 1]))
                    out.pop()
                s = f"{sents[i - 1]} {s}"
            if not _MOVED.search(s):
                continue
            named = {int(y) for y in YEAR.findall(s)}
            if not any(p.search(s) for p in names) or named and (years[1] not in named or named - set(years)):
                continue  # another figure, or another year's change
            key = sentence_key(s)
            if key not in seen:
                seen.add(key)
                out.append((s, page))
    return out


def answer_drivers(cfg: RunConfig, question: str, pages: list[CtxPage], report_currency: str | None,
                   company: str = "") -> dict[str, Any] | None:
    """See module docstring."""
    from ...index import query_cosines

    ask = drivers_ask(question, company)
    if ask is None:
        return None
    figures, cited, info = year_figures(cfg, question, ask, pages, report_currency, company, computed_first=True)
    if figures is None:
        return {"value": None, "calls": [], "interpretation": {"drivers": info}}
    names = _names(cfg, question, ask)
    found = _sentences(pages[: cfg.answer.text_drivers_pages], names, ask.years)
    if not found:
        info["sentences"] = "no sentence of the first pages states a cause and names the figure"
        return {"value": None, "calls": [], "interpretation": {"drivers": info}}
    cos = query_cosines(cfg, question.split("?")[0], [s for s, _ in found])
    best = sorted(range(len(found)), key=lambda i: (not _subject(found[i][0], names), -float(cos[i])))
    best = best[:DRIVER_SENTENCES]
    picked = [found[i] for i in best]
    info["sentences"] = [{"page": p.page, "cos": round(float(cos[i]), 4), "text": s} for i, (s, p) in
                         zip(best, picked)]
    quotes, cited = quoted(picked, cited)
    value = f"{change_words(figures[0], figures[1], ask)} {quotes}"
    return {"value": value, "cited": cited, "calls": [], "interpretation": {"drivers": info},
            "answering_part": cited}
