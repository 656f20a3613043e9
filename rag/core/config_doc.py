"""The config reference, generated from the schema: ``python -m rag.core.config_doc`` writes
docs/config-reference.md (``--check``: exit 1 when the committed file differs from what it would write).

Contract:
- :func:`sections` -> ``[(name, model)]``: the top-level fields (``run``), then every section of
  :class:`rag.core.config.RunConfig` in its order, a nested section after its parent (``llm.vllm``).
- :func:`fields` -> ``[(dotted name, FieldInfo)]``: every setting (a section itself is not one).
- :func:`render` -> the Markdown: per section a table of its user-facing fields (name, default, the first
  sentence of its description), then one of its internal constants (:func:`rag.core.config_base.is_internal`).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from .config import PROJECT_ROOT, RunConfig
from .config_base import is_internal

REFERENCE = PROJECT_ROOT / "docs" / "config-reference.md"
COMMAND = "python -m rag.core.config_doc"
TOP = "run"  # the heading of RunConfig's own fields (not the execution alias run.*: those are execution.*)


def _is_section(field: FieldInfo) -> bool:
    return isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)


def sections(model: type[BaseModel] = RunConfig, prefix: str = "") -> list[tuple[str, type[BaseModel]]]:
    """``[(name, model)]`` of the sections: ``run`` (top-level fields), then each section, nested ones after it."""
    out = [] if prefix else [(TOP, model)]
    for name, f in model.model_fields.items():
        if _is_section(f):
            out.append((prefix + name, f.annotation))
            out += sections(f.annotation, prefix + name + ".")
    return out


def own_fields(model: type[BaseModel]) -> dict[str, FieldInfo]:
    """The settings of one section (its nested sections left out)."""
    return {n: f for n, f in model.model_fields.items() if not _is_section(f)}


def fields() -> list[tuple[str, FieldInfo]]:
    """``[(dotted name, field)]`` of every setting; top-level fields undotted (``seed``)."""
    return [(n if sec == TOP else f"{sec}.{n}", f) for sec, model in sections() for n, f in own_fields(model).items()]


def first_sentence(text: str | None) -> str:
    """The description's first sentence (up to a full stop followed by a capital), on one line."""
    text = " ".join((text or "").split())
    return re.split(r"(?<=\.)\s+(?=[A-Z])", text, maxsplit=1)[0]


def _default(f: FieldInfo) -> str:
    value = f.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return "`" + json.dumps(value, ensure_ascii=False).replace("|", "\\|") + "`"


def _table(rows: list[tuple[str, FieldInfo]]) -> list[str]:
    out = ["| name | default | what it changes |", "|---|---|---|"]
    for name, f in rows:
        text = first_sentence(f.description).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
        out.append(f"| `{name}` | {_default(f)} | {text} |")
    return out


def render() -> str:
    lines = [
        "# Config reference",
        "",
        f"Generated from the schema by `{COMMAND}`: do not edit by hand (`tests/test_config_tiers.py`",
        "fails when this file is stale). Every field is a key of a preset (`rag/presets/*.toml`), a dataset's",
        "`rag-settings.toml` or `--set section.name=value` ([docs/config.md](config.md)).",
        "",
        "Per section, the **settings** first: the knobs a preset, an ablation or a test varies. Then the",
        "**internal constants** (`internal(...)` in the schema, `json_schema_extra={\"tier\": \"internal\"}`): named",
        "tolerances, caps and file names nothing varies. They load and override like any field, but changing one is",
        "changing the method. The measurements behind the defaults (\"measured: RESULTS.md\"): [RESULTS.md, config",
        "defaults](../RESULTS.md#config-defaults-and-the-measurements-behind-them-moved-from-the-schemas-comments-issue-47).",
    ]
    for name, model in sections():
        rows = list(own_fields(model).items())
        if name != TOP:
            rows = [(f"{name}.{n}", f) for n, f in rows]
        user = [(n, f) for n, f in rows if not is_internal(f)]
        internal = [(n, f) for n, f in rows if is_internal(f)]
        title = "Top-level fields" if name == TOP else f"`{name}`"
        doc = first_sentence(model.__doc__) if name != TOP and model.__doc__ else ""
        lines += ["", f"## {title}", ""] + ([doc, ""] if doc else [])
        lines += _table(user) if user else ["No settings."]
        if internal:
            lines += ["", f"Internal constants of `{name}`:", ""] + _table(internal)
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when docs/config-reference.md is stale")
    a = ap.parse_args(argv)
    text = render()
    current = REFERENCE.read_text(encoding="utf-8") if REFERENCE.is_file() else ""
    if a.check:
        if current != text:
            print(f"{REFERENCE} is stale: run {COMMAND}", file=sys.stderr)
            return 1
        return 0
    REFERENCE.write_text(text, encoding="utf-8")
    print(f"wrote {REFERENCE.relative_to(PROJECT_ROOT)} ({len(fields())} fields)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
