"""The documents against the tree (issue 47): README.md stays a manual of at most ``README_MAX_LINES`` lines,
every relative link of README.md, RESULTS.md and docs/*.md reaches an existing file (and, for a ``#anchor`` into a
Markdown file, one of its headings), and docs/layout.md lists exactly the modules under ``rag/``.

The layout check reads the backticked paths of docs/layout.md: every ``.py`` module under ``rag/`` must be named
by its path (``rag/answer/fuse.py``), every package (a folder of modules) by its folder (``rag/answer/``, which
covers its ``__init__.py``); every path it names must exist. A failure prints the paths to add and to remove.

Run ``python tests/test_docs.py`` to print what docs/layout.md lacks and names in excess (no pytest needed).
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
LAYOUT = ROOT / "docs" / "layout.md"
README_MAX_LINES = 320
# Markdown files whose links are checked: the manual, the lab log (its index links into itself), the docs.
LINKED = [README, ROOT / "RESULTS.md", *sorted((ROOT / "docs").glob("*.md"))]

_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_CODE = re.compile(r"`([^`\n]+)`")
# The repository's top-level folders: a backticked span under one of them is a path the layout claims exists.
TOP = ("rag", "notebooks", "prompts", "data", "outputs", "tests", "benchmarks", "docs")


def tree_modules() -> set[str]:
    """Every module under ``rag/`` as the layout names it: ``rag/x/y.py`` for a module, ``rag/x/`` for a folder
    of modules (its ``__init__.py`` included), ``rag/`` itself for the package root."""
    out: set[str] = set()
    for p in (ROOT / "rag").rglob("*.py"):
        if "__pycache__" in p.parts:
            continue
        rel = p.relative_to(ROOT).as_posix()
        if p.name != "__init__.py":
            out.add(rel)
        out.add(p.parent.relative_to(ROOT).as_posix() + "/")
    return out


def layout_paths(text: str) -> set[str]:
    """The repository paths docs/layout.md names in backticks: spans under one of the top-level folders
    (``rag/answer/fuse.py``, ``prompts/``), without spaces, placeholders (``<run>``) or globs. A bare file name
    (``subset.csv`` inside a description) is not a path."""
    out = set()
    for span in _CODE.findall(text):
        s = span.strip()
        if any(c in s for c in " <>*{}$=") or s.split("/")[0] not in TOP or "/" not in s:
            continue
        out.add(s)
    return out


def layout_diff(text: str | None = None) -> tuple[list[str], list[str]]:
    """``(to add, to remove)``: modules under ``rag/`` that docs/layout.md does not name, and paths it names that
    do not exist."""
    text = LAYOUT.read_text(encoding="utf-8") if text is None else text
    named = layout_paths(text)
    missing = sorted(tree_modules() - named)
    absent = sorted(p for p in named if not (ROOT / p).exists())
    return missing, absent


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())
    h = h.replace("`", "").lower()
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(md: Path) -> set[str]:
    """The anchors of a Markdown file's headings (a repeated heading gets -1, -2, ... as on GitHub); headings
    inside fenced code blocks do not count."""
    seen: dict[str, int] = {}
    out = set()
    fenced = False
    for line in md.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        m = re.match(r"#{1,6}\s+(.*)", line)
        if fenced or not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def broken_links(md: Path) -> list[str]:
    """``file:line: target (why)`` for each relative link of ``md`` that reaches no file or no heading."""
    out = []
    fenced = False
    for i, line in enumerate(md.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
        if fenced:
            continue
        for target in _LINK.findall(line):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            dest = (md.parent / path).resolve() if path else md
            where = f"{md.relative_to(ROOT)}:{i}: {target}"
            if not dest.exists():
                out.append(f"{where} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                out.append(f"{where} (no heading #{anchor} in {dest.relative_to(ROOT)})")
    return out


def test_readme_is_short():
    n = len(README.read_text(encoding="utf-8").splitlines())
    assert n <= README_MAX_LINES, (f"README.md has {n} lines (at most {README_MAX_LINES}): it is the user manual; "
                                   "move details to a docs/ file and link it")


def test_relative_links_reach_files():
    broken = [b for md in LINKED for b in broken_links(md)]
    assert not broken, "broken relative links:\n  " + "\n  ".join(broken)


def test_layout_lists_every_module():
    missing, absent = layout_diff()
    msg = []
    if missing:
        msg.append("add to docs/layout.md (a row `rag/x/y.py` per module, a heading `rag/x/` per package):\n    "
                   + "\n    ".join(missing))
    if absent:
        msg.append("remove from docs/layout.md (no such path):\n    " + "\n    ".join(absent))
    assert not msg, "docs/layout.md does not match the tree.\n  " + "\n  ".join(msg)


def test_layout_check_sees_a_new_module_and_a_stale_row():
    """The check itself: a module with no row is reported, a row naming a missing file too."""
    text = LAYOUT.read_text(encoding="utf-8")
    some = sorted(p for p in tree_modules() if p.endswith(".py"))[0]
    missing, absent = layout_diff(text.replace(f"`{some}`", "`rag/no_such_module.py`"))
    assert some in missing and "rag/no_such_module.py" in absent


if __name__ == "__main__":
    add, remove = layout_diff()
    print("add:", *add or ["-"], sep="\n  ")
    print("remove:", *remove or ["-"], sep="\n  ")
