"""Hand labels: an append-only ``labels.jsonl`` per dataset, read back as gold for the scorer.

File: ``data/<name>/labels.jsonl`` (see :func:`labels_path`). One JSON object per line, one line per
labelling action::

    {"time": "2026-11-22T23:59:00Z", "qid": "q003", "question": "...", "kind": "number",
     "value": 123.0, "pages": [{"sha1": "...", "page": 12}], "status": "accepted", "labeller": "ann"}

- ``page`` is 1-based (the project's convention), never the ERC 0-based ``page_index``.
- Optional string fields: ``evidence`` (the printed figure or sentence, verbatim, for a non-N/A answer) and
  ``searched`` (for N/A / False: what was looked for and where). Reading keeps any extra field as is.
- ``status``: ``accepted`` (model answer and pages confirmed), ``corrected`` (value and/or pages
  changed by hand) or ``skipped`` (looked at, no label). The LAST line for a question wins.
- Appends are ``write + flush + fsync``; a crash mid-append leaves at most one torn line. Reading
  ignores an unparseable line with a warning (it is a torn append; a later append starts on a fresh
  line). Anything else off-format is an error naming the file and line.
- Where labelling resumes and the counts by status are stage 08's (:mod:`rag.label`).
- As gold (:func:`labels_as_gold`): accepted/corrected labels only; the pages of one report form one
  reference pool (any page of it is enough), pages of different reports separate pools (as the
  ERC gold does for comparative questions).
"""
from __future__ import annotations

import json
import os
import time
import warnings
from pathlib import Path
from typing import Any, Iterable

from .config import PROJECT_ROOT
from .dataset import KINDS, Dataset, Gold, PageRef

STATUSES = ("accepted", "corrected", "skipped")
GOLD_STATUSES = ("accepted", "corrected")
FILE_NAME = "labels.jsonl"


class LabelError(ValueError):
    """A labels file or label that is off-format; the message names the file/line or the field."""


def labels_path(ds: Dataset) -> Path:
    """``<dataset>/labels.jsonl`` for a dataset inside the project's ``data/``; otherwise (e.g. the
    read-only ``../shared/erc2-dev``) ``<project>/data/<dataset name>/labels.jsonl``."""
    root = Path(ds.root).resolve()
    data = (PROJECT_ROOT / "data").resolve()
    if root == data or data in root.parents:
        return root / FILE_NAME
    return data / ds.name / FILE_NAME


def _utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _pages_json(pages: Iterable[PageRef | dict | tuple]) -> list[dict[str, Any]]:
    out = []
    for p in pages:
        if isinstance(p, PageRef):
            sha1, page = p.sha1, p.page
        elif isinstance(p, dict):
            sha1, page = p.get("sha1"), p.get("page")
        else:
            sha1, page = p
        if not isinstance(sha1, str) or not sha1 or not isinstance(page, int) or page < 1:
            raise LabelError(f"bad gold page {p!r}: expected sha1 and a 1-based page number")
        out.append({"sha1": sha1, "page": page})
    return out


def append_label(path: Path | str, question: str, value: Any, pages: Iterable = (), status: str = "accepted",
                 labeller: str = "", kind: str | None = None, qid: str | None = None,
                 evidence: str | None = None, searched: str | None = None,
                 how_found: str | None = None) -> dict[str, Any]:
    """Append one label line durably (flush + fsync) and return the record written. ``evidence`` (what the page
    prints), ``searched`` (what was tried before settling on N/A) and ``how_found`` (rag.valgen_catalogue's
    verbatim / synonym / na) are the labeller's notes, kept only when given."""
    if status not in STATUSES:
        raise LabelError(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
    rec = {"time": _utc_now(), "qid": qid, "question": question, "kind": kind, "value": value,
           "pages": _pages_json(pages), "status": status, "labeller": labeller}
    for field, text in (("evidence", evidence), ("searched", searched), ("how_found", how_found)):
        if text is not None:
            if not isinstance(text, str):
                raise LabelError(f"{field} must be a string, not {type(text).__name__}")
            rec[field] = text
    line = json.dumps(rec, ensure_ascii=False) + "\n"
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab+") as f:
        # A torn previous append (no final newline): start a fresh line so this record stays whole.
        if f.seek(0, os.SEEK_END) > 0:
            f.seek(-1, os.SEEK_END)
            if f.read(1) != b"\n":
                line = "\n" + line
        f.write(line.encode("utf-8"))
        f.flush()
        os.fsync(f.fileno())
    return rec


def read_labels(path: Path | str) -> list[dict[str, Any]]:
    """Every valid label line in file order; torn lines are skipped with a warning."""
    path = Path(path)
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            if line.lstrip().startswith("{"):
                warnings.warn(f"{path}:{n}: torn label line ignored (interrupted append?)")
                continue
            raise LabelError(f"{path}:{n}: not a JSON label line: {line[:80]!r}") from None
        if not isinstance(rec, dict) or not isinstance(rec.get("question"), str) or rec.get("status") not in STATUSES:
            raise LabelError(f"{path}:{n}: a label needs 'question' and 'status' in {STATUSES}")
        out.append(rec)
    return out


def latest_labels(path: Path | str) -> dict[str, dict[str, Any]]:
    """``{question text: last label record}`` (the last line per question wins)."""
    return {rec["question"]: rec for rec in read_labels(path)}


def _value_strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value)
    if isinstance(value, bool):
        return (str(value),)  # "True" / "False", as in answers.json
    return (str(value),)


def labels_as_gold(path: Path | str) -> dict[str, Gold]:
    """Accepted/corrected labels as ``{question text: Gold}`` (1-based pages, one pool per report)."""
    gold = {}
    for text, rec in latest_labels(path).items():
        if rec["status"] not in GOLD_STATUSES:
            continue
        kind = rec.get("kind")
        if kind not in KINDS:
            raise LabelError(f"{path}: label for {text[:60]!r} has no valid 'kind' ({kind!r})")
        pools: dict[str, list[PageRef]] = {}
        for p in rec.get("pages") or []:
            pools.setdefault(p["sha1"], []).append(PageRef(sha1=p["sha1"], page=int(p["page"])))
        gold[text] = Gold(kind=kind, answers=_value_strings(rec.get("value")),
                          pools=tuple(tuple(v) for v in pools.values()))
    return gold
