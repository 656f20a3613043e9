"""The item records of the one item loop (:mod:`rag.core.loop`) and the one way an item's work is called.

- :class:`Item`: id, currency key, the outputs that make it, a payload, ``blocked`` (the reason when an
  upstream item failed), ``inputs`` (files its work reads, for executors whose workers may not see them).
- :class:`Result` (``files`` of :class:`Json` / :class:`Jsonl` / bytes / str, ``info``, ``usage``),
  :class:`Outcome` (per item: ran / current / failed / blocked), :class:`ItemError` (an explained failure).
- :class:`Executor`: anything with ``map(fn, items) -> iterator of (item, Result | Exception, seconds)``;
  every executor calls an item's work through :func:`_call` (never raises; the exception comes back).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Literal, Protocol, Sequence

from . import integrity
from .usage import ItemUsage


@dataclass
class Item:
    id: str
    key: str = ""
    outputs: tuple[str, ...] = ()  # files (relative to the stage folder) that make the item
    payload: Any = None
    blocked: str = ""  # an upstream item failed: the reason (the item is skipped and counted as blocked)
    label: str = ""
    # Files (absolute paths; a folder stands for its files) the work reads: upstream artifacts, the PDF.
    # Not part of the key; a remote executor ships them to nodes that lack them.
    inputs: tuple[str, ...] = ()


@dataclass
class Json:
    obj: Any
    indent: int | None = 1


@dataclass
class Jsonl:
    rows: list[Any]


@dataclass
class Result:
    """What one item's work produced: ``files`` {relative path: Json | Jsonl | bytes | str}, ``info`` (its
    details, kept in the item record and the manifest) and ``usage`` (tokens and cost; seconds are set by
    the loop)."""

    files: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    usage: ItemUsage = field(default_factory=ItemUsage)
    # Damage the work found in caches (rag.core.integrity), set by _call: a worker process's counts travel back.
    damage: dict[str, Any] = field(default_factory=dict)


@dataclass
class Outcome:
    item: Item
    status: Literal["ran", "current", "failed", "blocked"]
    info: dict[str, Any]
    usage: ItemUsage
    seconds: float  # this invocation's time on the item (0 when current, blocked)
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.status in ("ran", "current")


class ItemError(Exception):
    """An item's work failed with an expected, explained error (the message is kept as is)."""


class Executor(Protocol):
    def map(self, fn: Callable[[Item], Result], items: Sequence[Item]) -> Iterator[tuple[Item, Any, float]]:
        """Run ``fn`` on each item; yield ``(item, Result or Exception, seconds)`` as they finish."""


def _call(fn: Callable[[Item], Result], item: Item) -> tuple[Any, float]:
    """Run one item, never raising (processes: the exception must travel back picklable)."""
    t0 = time.perf_counter()
    try:
        out: Any = fn(item)
    except ItemError as e:
        out = e
    except Exception as e:  # noqa: BLE001 - one failing item must not stop the others
        out = ItemError(f"{type(e).__name__}: {e}")
        out.original = e if not _in_subprocess() else None  # type: ignore[attr-defined]
    # What the work found damaged goes back with its outcome (the driver counts it: rag.core.loop); in the
    # driver's own threads this takes and gives back the same counts.
    damage = integrity.take()
    if damage:
        try:
            out.damage = damage
        except AttributeError:  # a work function returning something else: the loop reports that
            integrity.add(damage)
    return out, time.perf_counter() - t0


def _in_subprocess() -> bool:
    import multiprocessing as mp

    return mp.parent_process() is not None
