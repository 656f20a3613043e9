"""The stage registry: every stage declared once (issue 30).

Contract:
- :data:`STAGES` maps a stage's name (``"05_retrieve"``) to its :class:`StageSpec`: number, package
  (``rag.<package>``, whose ``run_<package>(cfg, ds, progress)`` runs it), notebook, the stages whose items
  it reads (``upstream``), the config sections its outputs depend on (``sections``; ``llm`` joins where the
  stage calls the chat model, :func:`rag.core.deps.llm_uses`), whether it may call a model at all and
  on which device, what its items are, and whether its folder may be shared between ablation variants.
- Everything that lists stages derives from here: :mod:`rag.core.deps` (order, upstream, sections),
  :mod:`rag.core.artifacts` (``STAGE_PACKAGES``), :mod:`rag.pipeline` (notebooks, stage functions),
  :mod:`rag.preflight` (which stages need the parser's weights, the device, the chat model),
  :mod:`rag.ablate` (which stages a seed run may lend), ``notebooks/make_notebooks.py`` and the
  contract tests. tests/test_contract.py checks that each stage reads exactly the upstream declared here.
- Every other module takes a stage's folder name from here (``STAGE = name_of("<package>")`` in its package,
  :data:`PIPELINE`, :func:`names`), never as a literal: tests/test_stage_registry.py fails on a stage-folder
  string in code outside this module (prose in help and error text may name a stage).
- To add a stage: one entry here, its package with ``run_<package>`` and owner readers, its notebook cells.

Imports nothing of rag (the bottom of the layers, see tests/test_layers.py).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StageSpec:
    name: str  # folder and notebook name, "NN_stage"
    number: int
    package: str  # rag.<package>; run_<package>(cfg, ds, progress) runs the stage
    upstream: tuple[str, ...]  # stages whose items (owner readers, item keys) this stage reads
    sections: tuple[str, ...]  # config sections it reads itself (llm joins when it calls the model)
    items: str  # what one item is
    may_call_llm: bool = False  # calls the chat model under some config (when: rag.core.deps.llm_uses)
    on_device: bool = False  # runs a model on cfg.device (torch: parser, OCR, embedder, local LLM)
    shared: bool = True  # an ablation may lend this stage's folder to a variant with the same lineage
    seedable: bool = False  # a per-report stage rag.ablate --seed-from may hard-link (items re-checked by key)
    folder: bool = True  # writes outputs/<run>/<name>/ (08 writes the dataset's labels.jsonl instead)
    notebook_only: bool = False  # no run_<package> for headless runs

    @property
    def notebook(self) -> str:
        """``notebooks/<notebook>.ipynb``."""
        return self.name

    @property
    def module(self) -> str:
        return f"rag.{self.package}"

    @property
    def run_function(self) -> str:
        return f"run_{self.package}"


_ALL = (
    StageSpec("01_parse", 1, "parse", (), ("parse",), "reports", on_device=True, seedable=True),
    StageSpec("02_clean", 2, "clean", ("01_parse",), ("clean",), "reports", may_call_llm=True, on_device=True,
              seedable=True),
    StageSpec("03_chunk", 3, "chunk", ("02_clean",), ("chunk",), "(report, chunk size) pairs", on_device=True,
              seedable=True),
    StageSpec("04_index", 4, "index", ("03_chunk",), ("embed", "index"), "(report, chunk size) pairs",
              on_device=True, seedable=True),
    # 05 reads the clean pages (page texts of the candidates) and the indexes.
    StageSpec("05_retrieve", 5, "retrieve", ("02_clean", "04_index"), ("retrieve", "rerank"), "questions",
              may_call_llm=True, on_device=True),
    # 06 reads only 05 (05 records carry the page texts it answers from).
    StageSpec("06_answer", 6, "answer", ("05_retrieve",), ("answer", "llm"), "questions", may_call_llm=True,
              on_device=True),
    # 07 re-scores every time (cheap, and it reads this run's own submission): never shared.
    StageSpec("07_evaluate", 7, "evaluate", ("06_answer", "05_retrieve"), (), "the run (one scoring)",
              shared=False),
    # 08: a notebook (hand labels into the dataset's labels.jsonl, beside the answers and their pages), no folder.
    StageSpec("08_label", 8, "label", ("02_clean", "06_answer"), (), "questions (by hand)", folder=False, notebook_only=True),
)

STAGES: dict[str, StageSpec] = {s.name: s for s in _ALL}
# The stages a headless run executes, in order (every stage with a folder and a run function).
PIPELINE: tuple[str, ...] = tuple(s.name for s in _ALL if s.folder and not s.notebook_only)
# The notebooks, in order.
NOTEBOOKS: tuple[str, ...] = tuple(s.notebook for s in _ALL)


def spec(name: str) -> StageSpec:
    """The stage called ``name``; a clear error naming the known ones otherwise."""
    try:
        return STAGES[name]
    except KeyError:
        raise KeyError(f"unknown stage {name!r}; known: {', '.join(STAGES)}") from None


def name_of(package: str) -> str:
    """The stage whose package is ``rag.<package>``: ``name_of("retrieve") == "05_retrieve"`` (a stage package
    sets ``STAGE = name_of("<package>")``); a clear error naming the known packages otherwise."""
    for s in _ALL:
        if s.package == package:
            return s.name
    raise KeyError(f"no stage has package {package!r}; known: {', '.join(s.package for s in _ALL)}")


def names(**where: bool) -> tuple[str, ...]:
    """Stage names (pipeline order) whose fields have the given values: ``names(may_call_llm=True)``."""
    return tuple(s.name for s in _ALL if all(getattr(s, k) == v for k, v in where.items()))
