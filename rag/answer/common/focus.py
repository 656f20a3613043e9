"""Focused reading in stage 06: each context page cut to the lines that name the question's topic.

Why: the 1.5B reader misses a fact that is on the page it reads when the page is long (erc2-val: "the
Group acquired 100% of Fowlers..." under a heading "Acquisition of businesses", answered "no acquisition
mentioned"). Showing it the matching lines of several pages, instead of whole pages, lets it read more
pages for fewer tokens.

Contracts:
- ``topic_terms_for(cfg, question_text, company) -> list[str]``: lowercase terms of the question (its
  content words after :func:`rag.core.questions.search_text`, stems cut to ``STEM`` letters) plus the
  terms of every search-lexicon topic the question matches (``prompts/search/lexicon.toml``, the same
  file and switch as stage 05's lexicon expansion).
- ``focus_text(text, terms, budget, counter) -> str``: at most ~``budget`` tokens (``counter``) of
  ``text``: the segments (lines; long lines split into sentences) naming at least one term, in page
  order, each with the short line above it for context, "..." marking cuts. A page that fits the
  budget comes back whole; a page with no matching segment comes back as its head (cut to the budget).
- ``focus_pages(cfg, kind, question_text, company, pages, counter) -> list[CtxPage]``: the pages with
  focused text when ``answer.focus_tokens`` has a budget for ``kind``, else ``pages`` unchanged.
  Pages keep their sha1, 1-based page number and rank, so citations map back as before.
"""
from __future__ import annotations

import re
from functools import lru_cache

from ...core.config import RunConfig
from ...core.questions import search_text
from .context import Counter, CtxPage, _truncate

# A word matches a question word when both start with the same STEM letters ("acquired"/"acquisition"
# share "acqui"); shorter words must match whole.
STEM = 5
# Question words that say nothing about the topic (ERC templates: "Did X announce any changes to ...").
_STOP = frozenset("""a an and any are as at be by did do does for from had has have how if in into is it
its of on or our the their they this those to was were what when where which who whom why will with within
report reports annual latest filing mention mentioned mentions announce announced announces detail
outline outlined company companies group year period there no not new any all other""".split())
_WORD = re.compile(r"[a-z][a-z0-9'-]*")
_SENT = re.compile(r"(?<=[.;!?])\s+(?=[A-Z(])")
# A sentence piece ending in one of these is not a sentence end ("Mr. Byrd", "Pty. Ltd.").
_ABBREV = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|Prof|No|Nos|Pty|Ltd|Inc|Co|Corp|Plc|St|Jr|Sr|vs|approx|e\.g|i\.e)\.$", re.I)
# Lines longer than this are split into sentences.
SPLIT_CHARS = 400
# A line above a matching one at most this long is shown with it (a heading, a short lead-in).
CONTEXT_CHARS = 80


def _stem(w: str) -> str:
    return w[:STEM]


def topic_terms_for(cfg: RunConfig, question_text: str, company: str = "") -> list[str]:
    """The question's topic words (stemmed) and its lexicon topics' terms, lowercase, deduplicated."""
    from ...retrieve.query import lexicon_terms

    query = search_text(question_text, company)
    words = [_stem(w) for w in _WORD.findall(query.lower()) if len(w) > 2 and w not in _STOP]
    return list(dict.fromkeys(words + [t.lower() for t in lexicon_terms(cfg, query)]))


@lru_cache(maxsize=4096)
def _segment_terms(segment: str, terms: tuple[str, ...]) -> frozenset[str]:
    low = segment.lower()
    words = set(_WORD.findall(low))
    stems = {_stem(w) for w in words}
    hit = set()
    for t in terms:
        if " " in t:  # a phrase of the lexicon: substring
            if t in low:
                hit.add(t)
        elif (_stem(t) in stems) if len(t) >= STEM else (t in words):
            hit.add(_stem(t))  # "acquisition" and "acqui" count once
    return frozenset(hit)


def _segments(text: str) -> list[str]:
    """Lines of the page; a line longer than ~3 sentences split at sentence ends (page order)."""
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if len(line) <= SPLIT_CHARS:
            out.append(line)
            continue
        pieces: list[str] = []
        for s in _SENT.split(line):
            if pieces and _ABBREV.search(pieces[-1]):
                pieces[-1] += " " + s
            elif s.strip():
                pieces.append(s)
        out.extend(pieces)
    return out


def focus_text(text: str, terms: list[str], budget: int, counter: Counter) -> str:
    """The matching segments of ``text`` within ``budget`` tokens (see module docstring)."""
    if counter(text) <= budget:
        return text
    segs = _segments(text)
    key = tuple(terms)
    hits = [i for i, s in enumerate(segs) if _segment_terms(s, key)]
    if not hits:
        return _truncate(text, budget, counter)
    keep: list[int] = []
    used = 0
    # Page order, not most-terms-first: a report states the event first ("On 30 November 2021, the
    # Group acquired ...") and explains it below; long policy paragraphs hit more terms and say less.
    for i in hits:
        # a short line just above (a heading, or the sentence it continues) comes along for context
        for j in ([i - 1] if i > 0 and len(segs[i - 1]) <= CONTEXT_CHARS else []) + [i]:
            if j in keep:
                continue
            n = counter(segs[j]) + 1
            if used + n > budget:
                if not keep:  # the first matching segment alone is over budget: its head
                    return _truncate(segs[i], budget, counter) + " ..."
                break
            keep.append(j)
            used += n
        else:
            continue
        break
    out, last = [], -1
    for j in keep:
        if j != last + 1:
            out.append("...")
        out.append(segs[j])
        last = j
    if last != len(segs) - 1:
        out.append("...")
    return "\n".join(out)


def focus_pages(cfg: RunConfig, kind: str, question_text: str, company: str, pages: list[CtxPage],
                counter: Counter) -> list[CtxPage]:
    """``pages`` with focused text when ``answer.focus_tokens[kind]`` > 0 (see module docstring)."""
    budget = cfg.answer.focus_tokens.get(kind, 0)
    if not budget:
        return pages
    terms = topic_terms_for(cfg, question_text, company)
    return [CtxPage(p.sha1, p.page, focus_text(p.text, terms, budget, counter), p.rank, p.score) for p in pages]
