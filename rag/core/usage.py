"""One usage record per item: what producing it cost.

Contract: :class:`ItemUsage` has ``prompt_tokens``, ``completion_tokens`` (chat model),
``embedding_tokens`` (text embedded), ``requests``, ``cost_usd`` and ``seconds`` (wall time of the item's
work). ``a + b`` sums; :func:`total` sums many; :meth:`ItemUsage.from_model` converts the model layer's
``Usage`` (its ``cost_usd`` comes from the model layer's price tables; local models cost 0).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, Iterable, Mapping

COST_DIGITS = 6  # rounding of cost_usd in records (a millionth of a dollar)
SECONDS_DIGITS = 3


@dataclass
class ItemUsage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    embedding_tokens: int = 0
    requests: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0

    def __add__(self, other: "ItemUsage") -> "ItemUsage":
        return ItemUsage(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["cost_usd"] = round(d["cost_usd"], COST_DIGITS)
        d["seconds"] = round(d["seconds"], SECONDS_DIGITS)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> "ItemUsage":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in (d or {}).items() if k in names and v is not None})

    @classmethod
    def from_model(cls, u: Any, embedding_tokens: int = 0) -> "ItemUsage":
        """From a ``rag.models.Usage`` (or its ``as_dict()``); its seconds are model time, not item time."""
        d = u.as_dict() if hasattr(u, "as_dict") else dict(u or {})
        return cls(prompt_tokens=int(d.get("prompt_tokens") or 0),
                   completion_tokens=int(d.get("completion_tokens") or 0),
                   requests=int(d.get("requests") or 0), cost_usd=float(d.get("cost_usd") or 0.0),
                   embedding_tokens=embedding_tokens)


def total(usages: Iterable[ItemUsage]) -> ItemUsage:
    out = ItemUsage()
    for u in usages:
        out = out + u
    return out
