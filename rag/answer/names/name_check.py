"""Name answers checked against the pages, as numbers are: a name must be printed on a page it cites.

A small model asked for a name the report does not print often copies the one-shot example's answer
("Jane Roe" of ``prompts/examples/name.txt``) or writes a plausible name of its own. Numbers already stand
only when a cited page prints the figure; names get the same rule here.

Contracts:
- ``example_answers(prompts_dir) -> frozenset[str]``: the ``final_answer`` strings (and list entries) of
  every ``prompts/examples/*.txt``, as :func:`name_key` s. Such an answer is never returned, whatever the
  pages print (the one-shot examples are not about the asked company).
- ``printed_on(name, texts) -> bool``: the name's words, case-folded, appear one after another on one of
  the texts (punctuation, line breaks, a possessive "'s" and a word split by a hyphen at a line end do
  not matter; other words in between do).
- ``check_names(kind, value, texts, examples) -> (value, info)``: for ``name``/``names`` answers, the
  entries that are an example answer or printed on none of ``texts`` are dropped (``info["name_dropped"]``
  = ``{entry: reason}``); none left -> ``"N/A"`` with ``info["na_reason"]``. Other kinds and N/A pass
  unchanged with ``{}``.
- ``full_name(name, texts) -> str``: an entity named short ("IAA", "SIA", "Cedar") as the pages name it in
  full: the name a definition gives it ('Surgical Innovation Associates, Inc. ("SIA")'), else the name with
  its legal form ("IAA, Inc.", "Cedar Realty Trust, Inc."), the most printed one (ties: the longer); the name
  itself when the pages print neither.
"""
from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..common.prompts import NA

_WORD = re.compile(r"\w+")
_LINE_HYPHEN = re.compile(r"(\w)-\s*\n\s*(\w)")  # "Exec-\nutive" -> "Executive"


def name_key(text: str) -> tuple[str, ...]:
    """Case-folded word tokens (NFKC; punctuation and a possessive "'s" dropped)."""
    t = unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")
    t = re.sub(r"'s\b", "", _LINE_HYPHEN.sub(r"\1\2", t))
    return tuple(_WORD.findall(t))


def _contains(hay: Sequence[str], needle: Sequence[str]) -> bool:
    n = len(needle)
    return n > 0 and any(hay[i:i + n] == tuple(needle) for i in range(len(hay) - n + 1) if hay[i] == needle[0])


def printed_on(name: str, texts: Iterable[str]) -> bool:
    """See module docstring."""
    key = name_key(name)
    return any(_contains(name_key(t), key) for t in texts)


def example_answers(prompts_dir: Path | str) -> frozenset[tuple[str, ...]]:
    """See module docstring (the examples as rag.answer.common.example_check reads them)."""
    from ..common.example_check import example_blocks

    out: set[tuple[str, ...]] = set()
    for _, ans in example_blocks(prompts_dir):
        final = ans.get("final_answer")
        for v in final if isinstance(final, list) else [final]:
            if isinstance(v, str) and v.strip() and v.strip().upper() != NA:
                out.add(name_key(v))
    return frozenset(out)


def check_names(kind: str, value: Any, texts: Sequence[str],
                examples: frozenset[tuple[str, ...]] = frozenset()) -> tuple[Any, dict[str, Any]]:
    """See module docstring."""
    if kind not in ("name", "names") or value == NA or not isinstance(value, (str, list)):
        return value, {}
    names = value if isinstance(value, list) else [value]
    dropped: dict[str, str] = {}
    for n in names:
        if name_key(n) in examples:
            dropped[n] = "the prompt's example answer"
        elif not printed_on(n, texts):
            dropped[n] = "printed on no cited page"
    if not dropped:
        return value, {}
    kept = [n for n in names if n not in dropped]
    info: dict[str, Any] = {"name_dropped": dropped}
    if not kept:
        why = "; ".join(f"{n!r}: {r}" for n, r in dropped.items())
        return NA, {**info, "na_reason": f"name not on the pages ({why})"}
    return (kept if isinstance(value, list) else kept[0]), info


# Legal forms that end a company's full name.
_LEGAL = r"(?:Inc|Corp|Corporation|Ltd|Limited|LLC|L\.P|LP|plc|PLC|Co|Company|Holdings|Group|Trust|N\.V|S\.A|AG|GmbH|Pty Ltd)\.?"
_CAP = r"[A-Z][\w&'.-]*"


def full_name(name: str, texts: Iterable[str]) -> str:
    """See module docstring."""
    short = name.strip()
    if not short or short == NA:
        return name
    esc = re.escape(short)
    defined = re.compile(rf"((?:{_CAP}[ ,]+(?:(?:of|and|&|the|de)\s+)?){{1,7}}{_LEGAL}|(?:{_CAP}\s+){{1,6}}{_CAP})\s*"
                         rf"\(\s*(?:the\s+)?[\u201c\"']?{esc}[\u201d\"']?\s*\)")
    legal = re.compile(rf"\b{esc}(?:\s+{_CAP}){{0,4}},?\s+{_LEGAL}(?![\w])")
    seen: dict[str, int] = {}
    for t in texts:
        t = re.sub(r"\s+", " ", t or "")
        for m in defined.finditer(t):
            full = m.group(1).strip(" ,")
            seen[full] = seen.get(full, 0) + 2  # a definition names the entity outright
        for m in legal.finditer(t):
            full = m.group(0).strip(" ,")
            if full != short:
                seen[full] = seen.get(full, 0) + 1
    if not seen:
        return name
    return max(seen, key=lambda f: (seen[f], len(f)))
