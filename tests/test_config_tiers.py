"""The config's two tiers and its generated reference (issue 47 item 3).

Every field of :class:`rag.core.config.RunConfig` is either a *setting* (a knob: something varies it) or an
*internal constant* (written ``internal(...)``: :func:`rag.core.config_base.is_internal`). The rule, by text:

- a **preset** varies a field when it sets its key in ``rag/presets/*.toml`` (a section is a TOML table,
  ``[llm.vllm]`` the nested one; a dict-valued field such as ``answer.pages_per_call`` is one key);
- an **ablation** varies it when ``section.name`` appears in the ablation definitions: rag/ablate.py and
  rag/ablate_grid.py (their ``--grid`` / ``--set`` examples) and the ablation commands of docs/benchmarks.md;
- a **test** varies it when, in ``tests/*.py``, the dotted key ``section.name`` appears not preceded by a word
  character or a dot (an override key ``"answer.max_pages": 3``, ``--set answer.x=``, ``--grid``), or
  ``run.name`` for an ``execution`` field (the CLI's alias); or ``name=`` appears in a test module that turns
  its keywords into keys of that section (``f"llm.{k}"``: ``llm_for(srv, temperature=0.0)``). A top-level field
  counts when a test passes it as ``"name": `` or ``"name=`` or as ``name=`` to ``load_config(`` / ``make_cfg(``.
  Reading a field (``cfg.answer.max_pages``: preceded by a dot) varies nothing.

A setting nothing varies fails (mark it internal, or vary it); an internal constant a preset or an ablation sets
fails (it is a setting). Tests may pin an internal constant.
"""
from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from pathlib import Path

from rag.core.config import RunConfig
from rag.core.config_base import is_internal
from rag.core.config_doc import COMMAND, REFERENCE, fields, render

ROOT = Path(__file__).resolve().parents[1]
ABLATIONS = [ROOT / "rag" / "ablate.py", ROOT / "rag" / "ablate_grid.py", ROOT / "docs" / "benchmarks.md"]
FIX = ("mark it internal in its section (`name: T = internal(default, ..., description=...)`, rag/core/config_*.py) "
       "if it is a constant, or vary it in a preset (rag/presets/*.toml), an ablation or a test; then run " + COMMAND)


def _preset_keys(data: dict, model=RunConfig, prefix: str = "") -> set[str]:
    out = set()
    for key, value in data.items():
        f = model.model_fields.get(key)
        sub = f.annotation if f is not None else None
        if isinstance(value, dict) and isinstance(sub, type) and hasattr(sub, "model_fields"):
            out |= _preset_keys(value, sub, prefix + key + ".")
        elif key != "extends":
            out.add(prefix + key)
    return out


@lru_cache(maxsize=None)
def preset_keys() -> dict[str, set[str]]:
    """``{dotted key: presets that set it}``."""
    out: dict[str, set[str]] = {}
    for path in sorted((ROOT / "rag" / "presets").glob("*.toml")):
        for key in _preset_keys(tomllib.loads(path.read_text(encoding="utf-8"))):
            out.setdefault(key, set()).add(path.name)
    return out


def _keys(name: str) -> list[str]:
    """The dotted spellings of a field: ``execution.x`` is also ``run.x``."""
    return [name] + (["run." + name.split(".", 1)[1]] if name.startswith("execution.") else [])


def _names_dotted(name: str, text: str) -> bool:
    return any(re.search(r"(?<![\w.])" + re.escape(k) + r"(?!\w)", text) for k in _keys(name))


@lru_cache(maxsize=None)
def _tests() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted((ROOT / "tests").glob("*.py")) if p.name != Path(__file__).name}


def set_by_test(name: str) -> str | None:
    """The first test module that varies ``name`` (see the module's rule), or None."""
    section, _, field = name.rpartition(".")
    for file, text in _tests().items():
        if section and _names_dotted(name, text):
            return file
        if section and re.search(r'f"' + re.escape(section) + r"\.\{", text) and re.search(rf"[(,]\s*{field}=", text):
            return file
        if not section and (re.search(rf"[\"']{field}(?:[\"']\s*:|=)", text)
                            or re.search(rf"(?:load_config|make_cfg)\([^)\n]*\b{field}=", text)):
            return file
    return None


def set_by_ablation(name: str) -> str | None:
    return next((p.name for p in ABLATIONS if "." in name and _names_dotted(name, p.read_text(encoding="utf-8"))), None)


def test_every_setting_is_varied_by_a_preset_ablation_or_test():
    unvaried = [name for name, f in fields() if not is_internal(f) and name not in preset_keys()
                and not set_by_ablation(name) and not set_by_test(name)]
    assert not unvaried, ("settings that no preset, ablation or test varies (see tests/test_config_tiers.py for the "
                          "rule):\n  " + "\n  ".join(unvaried) + "\nFor each: " + FIX)


def test_no_internal_constant_is_set_by_a_preset_or_an_ablation():
    wrong = [f"{name} (set by {', '.join(sorted(preset_keys().get(name, ()))) or set_by_ablation(name)})"
             for name, f in fields() if is_internal(f) and (name in preset_keys() or set_by_ablation(name))]
    assert not wrong, ("internal constants that a preset or an ablation sets are settings: write Field(...) "
                       "instead of internal(...) for\n  " + "\n  ".join(wrong) + f"\nthen run {COMMAND}")


def test_every_preset_key_is_a_field():
    names = {name for name, _ in fields()}
    assert not set(preset_keys()) - names


def test_every_field_has_a_one_line_description():
    bad = [name for name, f in fields() if not (f.description or "").strip() or "\n" in f.description]
    assert not bad, "fields without a one-line description=: " + ", ".join(bad)


def test_the_config_reference_is_current():
    current = REFERENCE.read_text(encoding="utf-8") if REFERENCE.is_file() else ""
    assert current == render(), f"{REFERENCE.relative_to(ROOT)} is stale: run {COMMAND}"
