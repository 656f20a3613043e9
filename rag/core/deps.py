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
- How each field enters keys is one rule set, :data:`KEY_RULES` (speed-only knobs out or pinned, item axes,
  fields added later left out at their default, fields unused under another setting); everything else
  counts by value. The stages, their upstream and their sections come from :mod:`rag.core.stages`.
"""
from __future__ import annotations

from typing import Any

from .stages import PIPELINE, STAGES, name_of

# Stages whose items a stage reads, and the config sections each reads itself (before the conditional ones
# of :func:`sections`): both declared in the stage registry (rag.core.stages).
UPSTREAM: dict[str, tuple[str, ...]] = {s: STAGES[s].upstream for s in PIPELINE}
OWN_SECTIONS: dict[str, tuple[str, ...]] = {s: STAGES[s].sections for s in PIPELINE}

# Top-level fields that change what the first stage sees (which corpus, which weights, the seed). Item
# keys hash the inputs themselves (a PDF's sha1); sharing between runs compares these too.
RUN_INPUTS = ("data_dir", "seed", "models_dir")

# How a config field enters item keys and sharing signatures: ONE rule set. A field not listed counts by
# its value. The ``execution`` section (local or Ray executor, cluster address, per-task resources) is in no
# stage's sections, so it never enters a key: a run moved onto a cluster re-runs nothing.
#   SPEED            how fast, not what comes out: out of keys and signatures (changing it re-runs nothing)
#   ("pinned", v)    speed-only, but part of keys before that was known: keys always carry v, so outputs made
#                    at v stay current and changing the field re-runs nothing
#   AXIS             which items a stage makes (one item per chunk size), not what one item is: out of item
#                    keys (adding size 1000 keeps size 300 current), in sharing signatures (a run asking for
#                    size 1000 cannot borrow a folder without it)
#   PER_ITEM         changes only some items, which the stage knows: out of item keys (the stage hashes it into the
#                    keys of the items it changes), in sharing signatures (retrieve.route_by_content: only questions
#                    naming no company)
#   ADDED            added after runs were made: out while at its default (the value that reproduces the
#                    behaviour from before it existed, so existing outputs stay current); set, it counts
#   ("unused_when", other, value)  changes nothing while field ``other`` of its section has ``value``: out then
#   ("added_as", v)  added after runs were made, its default later changed: out while it is v (the value that
#                    reproduces the behaviour from before it existed), so runs made then stay current at v
# A change to what a stage computes that no field records moves that stage's CODE_VERSION instead.
SPEED, AXIS, ADDED, PER_ITEM = "speed", "axis", "added", "per_item"
KEY_RULES: dict[str, dict[str, Any]] = {
    "parse": dict.fromkeys(("workers", "parser_threads", "timeout_s", "page_batch", "device"), SPEED),
    "clean": {"ocr_threads": SPEED, "workers": SPEED},
    "chunk": {"sizes": AXIS},
    # How the local model server runs (threads for prompts, OpenMP waiting, restarts), not what it answers.
    # Where it runs (GPU layers, the vLLM server's memory share and parallelism) does not change the model.
    # llm.concurrency: questions answered in parallel give the same records; runs once made at another value
    # (the openai preset's 8) re-ran once and their model calls came from the disk cache. llm.flash_attn
    # changes the arithmetic (answers may move): runs made before it existed count as made without it.
    "llm": {**dict.fromkeys(("n_threads_batch", "server_env", "server_max_restarts", "n_gpu_layers", "vllm"), SPEED),
            "concurrency": ("pinned", 1), "flash_attn": ("added_as", False)},
    # Where the embedding server runs, not what it computes (embed.model says that).
    "embed": {"base_url": SPEED, "threads": SPEED,
              **dict.fromkeys(("hub", "long_text", "query_prefix", "passage_prefix", "runtime", "precision"), ADDED),
              "long_text_overlap": ("unused_when", "long_text", "truncate")},
    # Chunk vectors on demand and the dense pool (issue 29): stored / 0 is how every run was made before them.
    "index": {"bm25_stemmer": ADDED, "chunk_vectors": ("added_as", "stored")},
    # given_filing (issue 48): off is how every run was routed before it existed.
    # route_by_content (issue 48): 05 keys only the questions it routes (rag.retrieve.question_key).
    "retrieve": {"dense_pool": ("added_as", 0), "given_filing": ADDED, "route_by_content": PER_ITEM},
    # Computed figures (issue 31): off reproduces the answers from before; its knobs count only when on.
    # Text answers from their evidence (issue 48): off reproduces the free answer; its knobs count only when on.
    # Pages read in the order of the reader's P (issue 48): no kind is how every run read before it existed.
    "answer": {"computed_figures": ADDED, "metric_choice": ADDED, "text_from_evidence": ADDED, "page_choice": ADDED,
               "page_choice_pages": ("unused_when", "page_choice", ()),
               # Sentences with a figure no page prints (issue 48): kept is how every run answered before it existed.
               "text_figures_on_pages": ("added_as", False),
               # A yes/no page's true checked against its own note (issue 46): off is how every run answered before.
               "boolean_claim_check": ADDED, "boolean_claim_min_p": ("unused_when", "boolean_claim_check", False),
               # A yes/no page's true set against the page's other events (issue 46): off is how every run answered
               # before it existed.
               "boolean_calibration": ("added_as", False),
               "boolean_calibration_min": ("unused_when", "boolean_calibration", False),
               # Ranking questions answered in code (issue 48): off is how every run answered before it existed.
               "text_ranking": ("added_as", False),
               # The cover's 12(b) table for registered securities (issue 48): off is how every run answered before.
               "text_registered": ("added_as", False),
               # Changes between two years computed in code (issue 48): off is how every run answered before it existed.
               "text_change": ("added_as", False),
               # What drove a change, the filing's cause sentences quoted (issue 48): off is how every run answered before.
               "text_drivers": ("added_as", False),
               # Events of a kind quoted from the filing's sentences (issue 48): off is how every run answered before.
               "text_events": ("added_as", False),
               "text_drivers_pages": ("unused_when", "text_drivers", False),
               **{f: ("unused_when", "text_ranking", False) for f in ("text_ranking_pages", "text_ranking_min_terms")},
               **{f: ("unused_when", "text_from_evidence", False)
                  for f in ("text_evidence_pages", "text_evidence_lines", "text_evidence_tokens")},
               **{f: ("unused_when", "metric_choice", False)
                  for f in ("metric_choice_by", "metric_choice_list", "metric_choice_min_p")},
               **{f: ("unused_when", "computed_figures", False)
                  for f in ("computed_pages", "computed_decimals", "formulas_file")}},
}


def _rule_fields(*kinds: str) -> dict[str, tuple[str, ...]]:
    """``{section: its fields}`` whose rule is one of ``kinds`` (sections without one left out)."""
    return {sec: tuple(f for f, r in rules.items() if r in kinds) for sec, rules in KEY_RULES.items()
            if any(r in kinds for r in rules.values())}


# Views of KEY_RULES by rule (read here and by rag.index.embed_config, whose index metas follow the same rule).
EXECUTION_ONLY = _rule_fields(SPEED)
ITEM_AXES = _rule_fields(AXIS, PER_ITEM)  # both out of item keys, in sharing signatures
OMIT_WHEN_DEFAULT = _rule_fields(ADDED)


def _tuple_rules(kind: str) -> dict[str, dict[str, tuple]]:
    """``{section: {field: the rule's arguments}}`` of the rules written ``(kind, *arguments)``."""
    return {sec: {f: r[1:] for f, r in rules.items() if isinstance(r, tuple) and r[0] == kind}
            for sec, rules in KEY_RULES.items() if any(isinstance(r, tuple) and r[0] == kind for r in rules.values())}


PINNED: dict[str, dict[str, Any]] = {sec: {f: a[0] for f, a in d.items()} for sec, d in _tuple_rules("pinned").items()}
ADDED_AS: dict[str, dict[str, Any]] = {sec: {f: a[0] for f, a in d.items()}
                                       for sec, d in _tuple_rules("added_as").items()}
UNUSED_WHEN: dict[str, dict[str, tuple[str, Any]]] = _tuple_rules("unused_when")  # {field: (other, value)}

# 07 re-scores every time (cheap, and it reads this run's own submission): never shared (registry: shared).
NEVER_SHARED = tuple(s for s in PIPELINE if not STAGES[s].shared)


def llm_uses(cfg, stage: str) -> list[str]:
    """Why ``stage`` calls the chat model under ``cfg`` (empty: it does not)."""
    why = []
    if stage == name_of("clean") and cfg.clean.serialize_tables:
        why.append("clean.serialize_tables")
    if stage == name_of("retrieve"):
        if cfg.rerank.mode == "llm":
            why.append("rerank.mode=llm")
        if cfg.retrieve.query_expansion:
            why.append("retrieve.query_expansion")
    if stage == name_of("answer"):
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
    default, those of :data:`UNUSED_WHEN` whose condition holds and those of :data:`ADDED_AS` at their value."""
    section = getattr(cfg, name, None)
    if section is None:
        return ()
    fields = type(section).model_fields
    out = [k for k in OMIT_WHEN_DEFAULT.get(name, ()) if k in fields and getattr(section, k) == fields[k].default]
    out += [k for k, (other, value) in UNUSED_WHEN.get(name, {}).items() if getattr(section, other, None) == value]
    out += [k for k, value in ADDED_AS.get(name, {}).items() if getattr(section, k, None) == value]
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
    return {s: v for s, v in out.items() if v != {} or (s not in OMIT_WHEN_DEFAULT and s not in ADDED_AS)}


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
