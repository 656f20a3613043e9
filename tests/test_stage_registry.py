"""The stage registry (rag.core.stages, issue 30): every list of stages derives from it, and each stage reads
exactly the upstream stages it declares.

The input test runs 01..07 for real on the demo corpus (test preset, the stand-in LLM server of conftest)
while spying on every owner reader of every stage package (``load_*``, ``item_state``, ``index_files``,
``page_texts``, ``submission_path``, ...) and on the two core functions that open a stage folder by name
(``rag.core.artifacts.stage_dir``, ``rag.core.stage.item_state``). A read is charged to the running stage
only when its own code makes it (a reader of stage X calling a reader of stage Y is X's business).
Manifests (``artifacts.read_manifest``: run metadata, read by 07's cost table for every stage) are not
items and are not counted.
"""
from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
import sys
from pathlib import Path

import pytest

from rag.core import stages as reg

# Reader names besides ``load_*``: the functions through which another module reads a stage's folder.
OWNER_READERS = ("item_state", "index_files", "page_texts", "submission_path", "scores_path", "chunked_sizes",
                 "report_path", "chunk_path", "record_path")


def test_every_list_of_stages_derives_from_the_registry():
    from rag import ablate, pipeline, preflight
    from rag.core import artifacts, deps

    assert deps.PIPELINE == reg.PIPELINE == tuple(artifacts.STAGE_PACKAGES)
    assert pipeline.NOTEBOOKS == reg.NOTEBOOKS and set(pipeline.stage_functions()) == set(reg.PIPELINE)
    assert all(deps.UPSTREAM[s] == reg.STAGES[s].upstream for s in reg.PIPELINE)
    assert preflight._LLM_STAGES == {s for s in reg.STAGES if reg.STAGES[s].may_call_llm}
    assert set(ablate.SEEDABLE) <= {s for s in reg.PIPELINE if reg.STAGES[s].items.startswith(("reports", "(report"))}
    for name, st in reg.STAGES.items():
        assert name == f"{st.number:02d}_{st.package}", name
        assert all(reg.STAGES[u].number < st.number for u in st.upstream), f"{name} reads a later stage"
        if not st.notebook_only:
            assert callable(getattr(importlib.import_module(st.module), st.run_function)), name


@pytest.mark.parametrize("switches", [{}, {"clean.serialize_tables": True, "retrieve.query_expansion": True}])
def test_a_stage_calls_the_model_only_where_the_registry_says_it_may(make_cfg, switches):
    from rag.core import deps

    cfg = make_cfg(overrides=switches)
    for name in reg.PIPELINE:
        if deps.llm_uses(cfg, name):
            assert reg.STAGES[name].may_call_llm, f"{name} calls the chat model ({deps.llm_uses(cfg, name)})"


def test_unknown_stage_is_a_clear_error():
    with pytest.raises(KeyError, match="unknown stage '09_x'; known: 01_parse"):
        reg.spec("09_x")
    with pytest.raises(KeyError, match="no stage has package 'x'; known: parse, clean"):
        reg.name_of("x")


# ---- no stage-folder names in code outside the registry -------------------------------------------------
RAG = Path(__file__).resolve().parents[1] / "rag"
_STAGE_NAME = re.compile(r"\b(?:" + "|".join(map(re.escape, reg.STAGES)) + r")\b")


def folder_literals(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of the string constants in ``source``'s code that spell a stage folder: a stage name
    alone or inside a path (``"05_retrieve"``, ``"06_answer/submission.json"``, an f-string's ``"/04_index/"``).
    Docstrings and other bare string statements are documentation, comments are not constants, and prose with
    spaces ("run stage 05_retrieve first": help and error text) names a stage for a reader, not a folder."""
    tree = ast.parse(source)
    docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    hits = [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in docs and _STAGE_NAME.search(n.value) and not re.search(r"\s", n.value.strip())]
    return [(n.lineno, n.value) for n in sorted(hits, key=lambda n: (n.lineno, n.col_offset))]


def test_folder_literals_finds_code_not_documentation():
    src = ('"""Module doc: 05_retrieve."""\n'
           'def f(run, x):\n'
           '    """Reads 06_answer/."""\n'
           '    # 04_index is a comment\n'
           '    print("run stage 03_chunk first")\n'
           '    return run / "02_clean", f"{run}/01_parse/{x}", "07_evaluate/scores.json", "09_none"\n')
    assert folder_literals(src) == [(6, "02_clean"), (6, "/01_parse/"), (6, "07_evaluate/scores.json")]


def test_no_stage_folder_literal_outside_the_registry():
    """Every module takes stage folder names from rag.core.stages (a package's STAGE, name_of, PIPELINE)."""
    found = [f"{p.relative_to(RAG.parent)}:{line}: {text!r}" for p in sorted(RAG.rglob("*.py"))
             if p != RAG / "core" / "stages.py" for line, text in folder_literals(p.read_text(encoding="utf-8"))]
    assert not found, "stage folder names spelled outside rag/core/stages.py:\n" + "\n".join(found)


def test_each_stage_package_takes_its_folder_name_from_the_registry():
    for name, st in reg.STAGES.items():
        assert reg.name_of(st.package) == name
        if not st.notebook_only:
            assert importlib.import_module(st.module).STAGE == name, st.module


# ---- each stage reads what it declares ----------------------------------------------------------------
def _readers(spec: reg.StageSpec) -> dict[str, object]:
    """``{name: function}`` of the owner readers stage ``spec``'s package exposes."""
    mod = importlib.import_module(spec.module)
    return {n: f for n, f in vars(mod).items()
            if inspect.isfunction(f) and f.__module__.startswith(spec.module)
            and (n.startswith("load_") or n in OWNER_READERS)}


class Spy:
    """Records, per running stage, the stages whose folders its own code reads."""

    def __init__(self):
        self.running: str | None = None
        self.reads: dict[str, set[str]] = {}
        self._active: list[str] = []  # owners of the readers now on the call stack

    def charge(self, owner: str) -> None:
        if self.running and (not self._active or self._active[-1] == self.running) and owner != self.running:
            self.reads.setdefault(self.running, set()).add(owner)

    def wrap(self, fn, owner=None):
        """``fn`` recording a read of ``owner`` (or of the stage folder named by its first arguments)."""
        @functools.wraps(fn)
        def spied(*args, **kwargs):
            who = owner or _folder_stage(fn, args, kwargs)
            if who:
                self.charge(who)
            self._active.append(who or (self._active[-1] if self._active else ""))
            try:
                return fn(*args, **kwargs)
            finally:
                self._active.pop()
        return spied


def _folder_stage(fn, args, kwargs) -> str | None:
    """The stage a core folder function was asked about: ``stage_dir(cfg, name)`` / ``item_state(folder, ...)``."""
    if fn.__name__ == "stage_dir":
        name = args[1] if len(args) > 1 else kwargs.get("name")
    else:
        name = Path(args[0] if args else kwargs["stage_folder"]).name
    return name if name in reg.STAGES else None


def _patch_everywhere(monkeypatch, fn, spied) -> None:
    """Replace ``fn`` by ``spied`` in every loaded rag module that holds it (``from x import fn`` included)."""
    for name, mod in list(sys.modules.items()):
        if name.startswith("rag") and mod is not None:
            for attr, val in list(vars(mod).items()):
                if val is fn:
                    monkeypatch.setattr(mod, attr, spied)


@pytest.fixture(scope="module")
def stage_reads(demo_dir, standin_llm, tmp_path_factory):
    """``{stage: stages it read}`` from one real 01..07 run of the demo corpus."""
    from rag.core import artifacts, stage
    from rag.pipeline import prepare, stage_functions

    tmp = tmp_path_factory.mktemp("reads")
    fns = stage_functions()  # imports every stage package, so every from-import is bound before patching
    spy = Spy()
    mp = pytest.MonkeyPatch()
    try:
        for spec in reg.STAGES.values():
            if spec.notebook_only:
                continue
            for fn in _readers(spec).values():
                _patch_everywhere(mp, fn, spy.wrap(fn, spec.name))
        for fn in (artifacts.stage_dir, stage.item_state):
            _patch_everywhere(mp, fn, spy.wrap(fn))
        cfg, ds = prepare("test", str(demo_dir), "reads", {
            "outputs_dir": str(tmp / "outputs"), "cache_dir": str(tmp / "cache"), "llm.backend": "openai_compatible",
            "llm.base_url": standin_llm, "llm.model": "standin", "llm.structured": "json_schema", "llm.cache": False})
        for name in reg.PIPELINE:
            spy.running = name
            fns[name](cfg, ds, progress=False)
        spy.running = None
    finally:
        mp.undo()
    return spy.reads


@pytest.mark.parametrize("name", reg.PIPELINE)
def test_each_stage_reads_exactly_its_declared_upstream(stage_reads, name):
    read = stage_reads.get(name, set())
    declared = set(reg.STAGES[name].upstream)
    assert read <= declared, f"{name} reads {sorted(read - declared)}, not declared in rag.core.stages"
    assert read == declared, f"{name} declares {sorted(declared - read)} but never reads it"


def test_the_spy_charges_a_read_to_the_stage_whose_own_code_makes_it():
    """The spy itself: a direct read is charged, a read made inside another stage's reader is not."""
    spy = Spy()
    inner = spy.wrap(lambda: None, "01_parse")
    outer = spy.wrap(lambda: inner(), "02_clean")
    spy.running = "05_retrieve"
    outer()
    assert spy.reads == {"05_retrieve": {"02_clean"}}
    inner()
    assert spy.reads == {"05_retrieve": {"02_clean", "01_parse"}}
