"""The variant grid of an ablation (``rag.ablate``): ``--grid`` specs -> config overrides per variant.

Contract:
- ``parse_axis("KEY=V1,V2,...") -> (key, values)``: values parsed as JSON when they parse, ``on``/``off``
  as true/false, commas inside brackets, braces or quotes do not split; a scalar given to a list field
  of :class:`rag.core.config.RunConfig` is wrapped (``chunk.sizes=1000`` -> ``[1000]``). ConfigError when
  malformed.
- ``expand_grid(axes) -> [overrides]``: the Cartesian product, first axis varying slowest.
- ``variant_overrides(fixed, grid)``: fixed ``--set`` values + the variant's grid values; a variant
  that sets ``chunk.sizes`` but not ``retrieve.chunk_size`` retrieves at its first size.
- ``slug(overrides) -> str``: the variant's part of its run name (at most :data:`SLUG_CHARS` characters).
"""
from __future__ import annotations

import itertools
import json
import re
from typing import Any, Mapping, Sequence, get_origin

from .core.config import ConfigError, RunConfig

SLUG_CHARS = 40  # longest variant slug in a run name


def _split_top(raw: str) -> list[str]:
    """Split on commas outside brackets/braces/quotes."""
    parts, depth, cur, quote = [], 0, "", False
    for ch in raw:
        if ch == '"':
            quote = not quote
        elif not quote and ch in "[{":
            depth += 1
        elif not quote and ch in "]}":
            depth -= 1
        if ch == "," and depth == 0 and not quote:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def _value(raw: str) -> Any:
    if raw.lower() in ("on", "off"):
        return raw.lower() == "on"
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def _is_sequence_field(key: str) -> bool:
    section, _, name = key.partition(".")
    sec = RunConfig.model_fields.get(section)
    if not name or sec is None or not hasattr(sec.annotation, "model_fields"):
        return False
    f = sec.annotation.model_fields.get(name)
    return f is not None and get_origin(f.annotation) in (tuple, list)


def parse_axis(spec: str) -> tuple[str, list[Any]]:
    """``"rerank.mode=none,llm"`` -> ``("rerank.mode", ["none", "llm"])``."""
    key, sep, raw = spec.partition("=")
    if not sep or not key.strip() or not raw.strip():
        raise ConfigError(f"--grid {spec!r}: expected KEY=V1,V2,...")
    values = [_value(v) for v in _split_top(raw)]
    if _is_sequence_field(key.strip()):
        values = [v if isinstance(v, list) else [v] for v in values]
    return key.strip(), values


def expand_grid(axes: Sequence[tuple[str, list[Any]]]) -> list[dict[str, Any]]:
    """Cartesian product of the axes (first axis varies slowest) as override dicts."""
    keys = [k for k, _ in axes]
    if len(set(keys)) != len(keys):
        raise ConfigError(f"--grid names a key twice: {keys}")
    return [dict(zip(keys, combo)) for combo in itertools.product(*(v for _, v in axes))]


def slug(overrides: Mapping[str, Any]) -> str:
    s = "_".join(json.dumps(v) if not isinstance(v, str) else v for v in overrides.values()) or "base"
    s = re.sub(r"[^A-Za-z0-9.]+", "-", s).strip("-")
    return s[:SLUG_CHARS] or "v"


def variant_overrides(fixed: Mapping[str, Any], grid: Mapping[str, Any]) -> dict[str, Any]:
    out = {**fixed, **grid}
    if "chunk.sizes" in out and "retrieve.chunk_size" not in out:
        sizes = out["chunk.sizes"]
        out["retrieve.chunk_size"] = sizes[0] if isinstance(sizes, (list, tuple)) else sizes
    return out
