"""The base of every config section: frozen (a run's settings never change under it) and strict (a misspelt
key is an error, not a silently ignored setting); and the two tiers of its fields.

Tiers (issue 47): a field is user-facing (a knob: a preset, an ablation or a test varies it) unless it is
written ``internal(...)``, a constant with a name (a tolerance, a cap, a file name) that nothing varies. Both
load, override and hash alike: the tier is metadata (``json_schema_extra={"tier": "internal"}``), never part
of a dump, a hash or a key. tests/test_config_tiers.py keeps the tiers true; docs/config-reference.md lists
both (``python -m rag.core.config_doc``).
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.fields import FieldInfo

TIER_KEY, INTERNAL = "tier", "internal"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def internal(*default: Any, **kwargs: Any) -> Any:
    """``Field(*default, **kwargs)`` of the internal tier (the same default, bounds and description)."""
    return Field(*default, json_schema_extra={TIER_KEY: INTERNAL}, **kwargs)


def is_internal(field: FieldInfo) -> bool:
    """True when ``field`` was declared with :func:`internal`."""
    extra = field.json_schema_extra
    return isinstance(extra, dict) and extra.get(TIER_KEY) == INTERNAL
