"""Layers that only point down (issues 30, 47): the import graph of ``rag``, function-level imports included.

core -> nothing above it; models -> core; the stage packages -> models + core (+ the owner readers of
earlier stages); ``rag.views`` (what the notebooks show: each stage's tables and figures, the widgets) on
top of every stage; everything else (pipeline, CLI, ablate, the notebooks' setup) on top of the views. No
exemption: a module sits where its package sits.
Checked twice: between modules, and between packages (``rag.parse``, ..., ``rag.views``, ``rag.pipeline``:
a module's package is ``rag.<first part>``), where no package may import one above it and no two packages
may import each other, even through modules that do not.
The graph is read with ``ast`` from the source (no import runs), so an import hidden inside a function
counts like one at the top of a module.

Run ``python tests/test_layers.py`` to print both graphs' summary (nodes, edges, upward imports, cycles).
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "rag"


def _stage_packages() -> dict[str, int]:
    """``{package: stage number}`` of the stage packages (from the registry when it is there)."""
    sys.path.insert(0, str(ROOT))
    from rag.core.stages import STAGES

    return {s.package: s.number for s in STAGES.values() if s.package}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _resolve(mod: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    """``{module: rag modules it imports}`` (every import statement, at any depth; ``from pkg import mod``
    counts as importing ``pkg.mod`` when that is a module)."""
    graph: dict[str, set[str]] = {}
    for mod, path in mods.items():
        is_pkg = path.name == "__init__.py"
        out: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(mod, is_pkg, node)
                names = [f"{target}.{a.name}" if f"{target}.{a.name}" in mods else target for a in node.names]
            else:
                continue
            for n in names:
                while n and n not in mods:  # rag.x.y.attr -> rag.x.y
                    n = n.rpartition(".")[0]
                if n.startswith("rag") and n != mod:
                    out.add(n)
        graph[mod] = out
    return graph


VIEWS = "views"  # rag.views: on top of every stage, below the pipeline and the CLIs


def layer(mod: str, stages: dict[str, int]) -> tuple[int, int]:
    """(layer, stage number) of a module or a package: 0 core, 1 models, 2 a stage package (numbered),
    3 views, 4 everything on top. The bare ``rag`` package (its ``__init__`` imports nothing) counts as core."""
    parts = mod.split(".")
    if mod == "rag" or parts[1] == "core":
        return 0, 0
    if parts[1] == "models":
        return 1, 0
    if parts[1] in stages:
        return 2, stages[parts[1]]
    if parts[1] == VIEWS:
        return 3, 0
    return 4, 0


def package(mod: str) -> str:
    """A module's package at the folder level: ``rag.<first part>`` (a top-level module is its own)."""
    return ".".join(mod.split(".")[:2])


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """``{package: packages it imports}`` from the module graph (imports inside one package left out)."""
    out: dict[str, set[str]] = {}
    for a, targets in graph.items():
        pa = package(a)
        out.setdefault(pa, set()).update(package(b) for b in targets if package(b) != pa)
    return out


def upward(graph: dict[str, set[str]], stages: dict[str, int]) -> list[str]:
    """Imports that point up a layer, or from a stage to a later stage."""
    bad = []
    for a, targets in sorted(graph.items()):
        la = layer(a, stages)
        for b in sorted(targets):
            lb = layer(b, stages)
            if lb[0] > la[0] or (la[0] == lb[0] == 2 and lb[1] > la[1]):
                bad.append(f"{a} -> {b}")
    return bad


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_upward_imports():
    bad = upward(imports(modules()), _stage_packages())
    assert not bad, "imports that climb back up:\n  " + "\n  ".join(bad)


def test_no_import_cycles():
    found = cycles(imports(modules()))
    assert not found, "import cycles:\n  " + "\n  ".join(" <-> ".join(c) for c in found)


def test_no_upward_package_imports():
    bad = upward(package_graph(imports(modules())), _stage_packages())
    assert not bad, "packages that import one above them:\n  " + "\n  ".join(bad)


def test_no_package_cycles():
    found = cycles(package_graph(imports(modules())))
    assert not found, "package cycles:\n  " + "\n  ".join(" <-> ".join(c) for c in found)


def subpackage_graph(graph: dict[str, set[str]], pkg: str) -> dict[str, set[str]]:
    """``{part: parts it imports}`` inside package ``pkg`` (``rag.answer``): a part is a sub-package
    (``rag.answer.numbers``) or one of ``pkg``'s own top-level modules (``rag.answer.fuse``, the package itself)."""
    depth = pkg.count(".") + 2

    def part(m: str) -> str:
        return ".".join(m.split(".")[:depth])

    out: dict[str, set[str]] = {}
    for a, targets in graph.items():
        if a == pkg or a.startswith(pkg + "."):
            out.setdefault(part(a), set()).update(part(b) for b in targets
                                                  if (b == pkg or b.startswith(pkg + ".")) and part(b) != part(a))
    return out


def test_answer_paths_sit_below_the_dispatcher():
    """Stage 06's sub-packages (issue 47 item 2): the answer paths (``rag.answer.numbers``, ``computed``,
    ``booleans``, ``text``, ``names``) and what they share (``rag.answer.common``) never import the stage's
    top-level modules (the dispatcher: ``__init__``, ``fuse``, ``interpret``, ``comparative``); ``common``
    imports no path; no two parts import each other, even through others."""
    g = imports(modules())
    sub = subpackage_graph(g, "rag.answer")
    subpackages = {m for m, p in modules().items() if p.name == "__init__.py" and m.count(".") == 2
                   and m.startswith("rag.answer.")}
    bad = [f"{a} -> {b}" for a in sorted(subpackages) for b in sorted(sub.get(a, ())) if b not in subpackages]
    assert not bad, "an answer path imports the dispatcher:\n  " + "\n  ".join(bad)
    assert not sub.get("rag.answer.common"), f"rag.answer.common imports {sorted(sub['rag.answer.common'])}"
    found = cycles(sub)
    assert not found, "sub-package cycles:\n  " + "\n  ".join(" <-> ".join(c) for c in found)


def test_views_sit_above_the_stages_and_below_the_pipeline():
    """The order itself: a stage may not import a view, a view may import any stage, the pipeline a view."""
    g = {"rag.parse": {"rag.views"}, "rag.views": {"rag.evaluate", "rag.pipeline"}, "rag.pipeline": {"rag.views"},
         "rag.evaluate": set()}
    assert upward(g, {"parse": 1, "evaluate": 7}) == ["rag.parse -> rag.views", "rag.views -> rag.pipeline"]
    mods = {"rag.views.parse": {"rag.parse.x", "rag.views.common"}, "rag.parse.x": {"rag.views.common"}}
    assert package_graph(mods) == {"rag.views": {"rag.parse"}, "rag.parse": {"rag.views"}}
    assert cycles(package_graph(mods)) == [["rag.parse", "rag.views"]]  # a knot only the folder level sees


def test_the_walk_sees_function_level_and_relative_imports(tmp_path):
    """The graph reader itself: an import inside a function and a relative one are both edges."""
    mods = {"rag.core.a": tmp_path / "a.py", "rag.models.b": tmp_path / "b.py", "rag.models": tmp_path / "__init__.py"}
    mods["rag.core.a"].write_text("def f():\n    from ..models.b import X\n")
    mods["rag.models.b"].write_text("from rag.core import a\n")
    mods["rag.models"].write_text("")
    g = imports(mods)
    assert g["rag.core.a"] == {"rag.models.b"} and g["rag.models.b"] == {"rag.core.a"}
    assert upward(g, {}) == ["rag.core.a -> rag.models.b"]
    assert cycles(g) == [["rag.core.a", "rag.models.b"]]


def summary(graph: dict[str, set[str]], stages: dict[str, int], nodes: str) -> None:
    """Print one graph's counts ("N upward / N cycles"), then each upward import and each cycle."""
    bad, cyc = upward(graph, stages), cycles(graph)
    print(f"{len(graph)} {nodes}, {sum(map(len, graph.values()))} import edges: {len(bad)} upward / {len(cyc)} cycles")
    for b in bad:
        print("  upward: " + b)
    for c in cyc:
        print(f"  cycle of {len(c)} {nodes}: " + " ".join(c))


if __name__ == "__main__":
    g = imports(modules())
    st = _stage_packages()
    summary(g, st, "modules")  # function-level imports included
    summary(package_graph(g), st, "packages")
