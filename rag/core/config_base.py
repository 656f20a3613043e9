"""The base of every config section: frozen (a run's settings never change under it) and strict (a misspelt
key is an error, not a silently ignored setting)."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
