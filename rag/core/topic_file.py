"""TOML files of ``[[topic]]`` entries: the search lexicon (05) and the event words of names answers (06).

Contract: ``read_topics(path, setting, lists, patterns, error, optional=()) -> (topics, content_hash)``. Every
topic needs ``name`` and each field of ``lists`` (a list); a field of ``optional`` may be absent (then ``[]``);
fields of ``patterns`` are compiled as case-insensitive
regular expressions, the others kept as strings. ``error`` (a ValueError subclass) is raised with the
file's path and the problem: missing file (naming the config ``setting``), bad TOML, a topic missing a
field, a bad regular expression, no topics. The file is read on every call (small) and parsed once per
content, so an edit is seen at once; the hash (16 hex digits of sha256) goes into stage keys.
"""
from __future__ import annotations

import hashlib
import re
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any


def read_topics(path: Path, setting: str, lists: tuple[str, ...], patterns: tuple[str, ...],
                error: type[ValueError], optional: tuple[str, ...] = ()) -> tuple[tuple[dict[str, Any], ...], str]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise error(f"{path}: file not found (config {setting})") from None
    return _parse(str(path), raw, lists, patterns, error, optional)


@lru_cache(maxsize=16)
def _parse(path: str, raw: bytes, lists: tuple[str, ...], patterns: tuple[str, ...],
           error: type[ValueError], optional: tuple[str, ...] = ()) -> tuple[tuple[dict[str, Any], ...], str]:
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise error(f"{path}: not valid TOML: {e}") from None
    topics = []
    for i, t in enumerate(data.get("topic", []), 1):
        try:
            topic: dict[str, Any] = {"name": str(t["name"])}
            for f in lists + optional:
                if f in optional and f not in t:
                    topic[f] = []
                    continue
                if not isinstance(t[f], list):
                    raise TypeError(f)
                topic[f] = [re.compile(x, re.I) if f in patterns else str(x) for x in t[f]]
        except (KeyError, TypeError) as e:
            need = " and ".join(f"{f} (list)" for f in lists)
            raise error(f"{path}: topic {i} needs name, {need}: missing {e}") from None
        except re.error as e:
            raise error(f"{path}: topic {i} ({t.get('name')}): bad regular expression: {e}") from None
        topics.append(topic)
    if not topics:
        raise error(f"{path}: no [[topic]] entries")
    return tuple(topics), hashlib.sha256(raw).hexdigest()[:16]
