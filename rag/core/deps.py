"""What each stage's items depend on, declared once.

Contract:
- :data:`PIPELINE` is the stage order; :data:`UPSTREAM` names the stages whose *items* a stage reads
  (its inputs). A stage's item key hashes its upstream items' keys (never file hashes), its own config
  sections (:func:`sections`) and its code version.
- :func:`sections(cfg, stage) <sections>` is the one place that says which config sections a stage's
  outputs depend on, including the conditional ones: ``llm`` when the stage calls the chat model
  (:func:`llm_uses`: 02 when tables are serialized; 05 when it reranks with the LLM OR expands queries;
  06 always). Currency keys (:func:`config_signature`) and rag.ablate's sharing
  (:func:`lineage_signature`) both read it, so they cannot disagree.
- Speed-only knobs (:data:`EXECUTION_ONLY`, and the ``execution`` section: where items run) are left out,
  or pinned to one value (:data:`PINNED`): changing them re-runs nothing. Fields added later
  (:data:`OMIT_WHEN_DEFAULT`) are left out while at their default, so older outputs stay current.
"""
from __future__ import annotations

from typing import Any

PIPELINE = ("01_parse", "02_clean", "03_chunk", "04_index", "05_retrieve", "06_answer", "07_evaluate")

# Stages whose items a stage reads. 06 reads only 05 (05 records carry the page texts it answers from).
UPSTREAM: dict[str, tuple[str, ...]] = {
    "01_parse": (),
    "02_clean": ("01_parse",),
    "03_chunk": ("02_clean",),
    "04_index": ("03_chunk",),
    "05_retrieve": ("02_clean", "04_index"),
    "06_answer": ("05_retrieve",),
    "07_evaluate": ("06_answer", "05_retrieve"),
}

# Config sections each stage reads itself (before the conditional ones of :func:`sections`).
OWN_SECTIONS: dict[str, tuple[str, ...]] = {
    "01_parse": ("parse",),
    "02_clean": ("clean",),
    "03_chunk": ("chunk",),
    "04_index": ("embed", "index"),
    "05_retrieve": ("retrieve", "rerank"),
    "06_answer": ("answer", "llm"),
    "07_evaluate": (),
}

# Top-level fields that change what the first stage sees (which corpus, which weights, the seed). Item
# keys hash the inputs themselves (a PDF's sha1); sharing between runs compares these too.
RUN_INPUTS = ("data_dir", "seed", "models_dir")

# Knobs that change how fast, not what comes out: kept out of keys and sharing signatures. The whole
# ``execution`` section (local or Ray executor, cluster address, per-task resources) is in no stage's
# sections (OWN_SECTIONS), so it never enters a key: a run moved onto a cluster re-runs nothing.
EXECUTION_ONLY: dict[str, tuple[str, ...]] = {
    "parse": ("workers", "parser_threads", "timeout_s", "page_batch", "device"),
    "clean": ("ocr_threads",),
    # How the local model server runs (threads for prompts, OpenMP waiting, restarts), not what it answers.
    # Where it runs (GPU layers, the vLLM server's memory share and parallelism) does not change the model.
    "llm": ("n_threads_batch", "server_env", "server_max_restarts", "n_gpu_layers", "vllm"),
    # Where the embedding server runs, not what it computes (embed.model says that).
    "embed": ("base_url", "threads"),
}

# Fields added after runs were made: left out of keys and signatures while at their default (the value that
# reproduces the behaviour from before they existed), so existing outputs stay current; set, they count.
OMIT_WHEN_DEFAULT: dict[str, tuple[str, ...]] = {"embed": ("hub", "long_text", "query_prefix", "passage_prefix",
                                                          "runtime"),
                                                "index": ("bm25_stemmer",)}
# Fields that change nothing while another field of their section has a given value: then left out too.
UNUSED_WHEN: dict[str, dict[str, tuple[str, Any]]] = {"embed": {"long_text_overlap": ("long_text", "truncate")}}

# Speed-only fields that were part of keys before they were known to be speed-only: keys always carry this
# fixed value, so outputs made at that value stay current and changing the field re-runs nothing
# (llm.concurrency: questions answered in parallel give the same records; runs once made at another value,
# e.g. the openai preset's 8, re-run once and their model calls come from the disk cache).
PINNED: dict[str, dict[str, Any]] = {"llm": {"concurrency": 1}}

# Fields that list which items a stage makes (one item per chunk size) rather than change an item:
# out of item keys (adding size 1000 keeps size 300 current), in sharing signatures (a run asking for
# size 1000 cannot borrow a folder without it).
ITEM_AXES: dict[str, tuple[str, ...]] = {"chunk": ("sizes",)}

# 07 re-scores every time (cheap, and it reads this run's own submission): never shared.
NEVER_SHARED = ("07_evaluate",)


def llm_uses(cfg, stage: str) -> list[str]:
    """Why ``stage`` calls the chat model under ``cfg`` (empty: it does not)."""
    why = []
    if stage == "02_clean" and cfg.clean.serialize_tables:
        why.append("clean.serialize_tables")
    if stage == "05_retrieve":
        if cfg.rerank.mode == "llm":
            why.append("rerank.mode=llm")
        if cfg.retrieve.query_expansion:
            why.append("retrieve.query_expansion")
    if stage == "06_answer":
        why.append("answering")
    return why


def sections(cfg, stage: str) -> tuple[str, ...]:
    """Config sections ``stage``'s outputs depend on under ``cfg`` (``llm`` only when it calls the model)."""
    own = OWN_SECTIONS[stage]
    if llm_uses(cfg, stage) and "llm" not in own:
        own = own + ("llm",)
    return own


def omitted_fields(cfg, name: str) -> tuple[str, ...]:
    """Fields of section ``name`` left out of keys under ``cfg``: those of :data:`OMIT_WHEN_DEFAULT` at their
    default and those of :data:`UNUSED_WHEN` whose condition holds."""
    section = getattr(cfg, name, None)
    if section is None:
        return ()
    fields = type(section).model_fields
    out = [k for k in OMIT_WHEN_DEFAULT.get(name, ()) if k in fields and getattr(section, k) == fields[k].default]
    out += [k for k, (other, value) in UNUSED_WHEN.get(name, {}).items() if getattr(section, other, None) == value]
    return tuple(out)


def _section(cfg, dump: dict[str, Any], name: str, per_item: bool) -> Any:
    value = dump[name]
    drop = (EXECUTION_ONLY.get(name, ()) + (ITEM_AXES.get(name, ()) if per_item else ())
            + omitted_fields(cfg, name))
    if not isinstance(value, dict):
        return value
    return {k: PINNED.get(name, {}).get(k, v) for k, v in value.items() if k not in drop}


def config_signature(cfg, stage: str, per_item: bool = True) -> dict[str, Any]:
    """``{section: its config}`` that ``stage``'s own items depend on (part of every item key); with
    ``per_item=False`` the item axes stay in (what a whole stage folder depends on)."""
    dump = cfg.model_dump(mode="json")
    out = {s: _section(cfg, dump, s, per_item) for s in sections(cfg, stage)}
    # A section added later whose every field is omitted at its default (index) drops out whole: the
    # key stays the one from before the section existed.
    return {s: v for s, v in out.items() if v != {} or s not in OMIT_WHEN_DEFAULT}


def lineage(stage: str) -> list[str]:
    """``stage`` and every stage it reads, directly or not, in pipeline order."""
    seen: set[str] = set()
    todo = [stage]
    while todo:
        s = todo.pop()
        if s not in seen:
            seen.add(s)
            todo.extend(UPSTREAM[s])
    return [s for s in PIPELINE if s in seen]


def lineage_signature(cfg, stage: str) -> list[Any] | None:
    """What ``stage``'s folder depends on from scratch: the run inputs and the config signature of it
    and every stage upstream of it. None = never share (see :data:`NEVER_SHARED`)."""
    if stage in NEVER_SHARED:
        return None
    dump = cfg.model_dump(mode="json")
    return [{f: dump[f] for f in RUN_INPUTS}] + [config_signature(cfg, s, per_item=False) for s in lineage(stage)]
