"""Stage 08: hand labels (a notebook only; no stage folder). The labels file itself (append-only
``data/<name>/labels.jsonl``, read back as gold by 07) is :mod:`rag.core.labels`; the widget that writes it
is :mod:`rag.views.widgets.label_widget`.

Contracts:
- ``label_state(ds, path=None) -> LabelState``: where labelling resumes (the first question, in dataset
  order, with no label line yet), how many questions are labelled.
- ``label_counts(ds, path=None) -> DataFrame``: each question's last label status counted by kind (+ ``all``).
- ``parse_pages(text, ds, default_sha1)`` / ``parse_value(text, kind)`` / ``format_value(value)``: what the
  labeller types (``"sha1:12, 13"`` 1-based pages; a typed value or N/A) to labels' records and back; the
  widget and rag.valgen_labels read labels with them.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..core.dataset import Dataset, PageRef
from ..core.labels import STATUSES, labels_path, latest_labels


@dataclass(frozen=True)
class LabelState:
    index: int  # position in ds.questions to resume at (== total when every question has a label)
    qid: str | None  # that question's id (None when done)
    labelled: int  # questions with any last label (accepted, corrected or skipped)
    total: int


def label_state(ds: Dataset, path: Path | str | None = None) -> LabelState:
    """Where to resume: the first question (in dataset order) with no label line yet."""
    latest = latest_labels(path or labels_path(ds))
    done = [q.text in latest for q in ds.questions]
    idx = next((i for i, d in enumerate(done) if not d), len(done))
    return LabelState(index=idx, qid=ds.questions[idx].qid if idx < len(done) else None,
                      labelled=sum(done), total=len(done))


def label_counts(ds: Dataset, path: Path | str | None = None) -> pd.DataFrame:
    """Counts of each question's last label status, by kind, with an ``all`` row."""
    latest = latest_labels(path or labels_path(ds))
    cols = list(STATUSES) + ["unlabelled"]
    rows = {}
    for q in ds.questions:
        status = latest[q.text]["status"] if q.text in latest else "unlabelled"
        rows.setdefault(q.kind, dict.fromkeys(cols, 0))[status] += 1
    df = pd.DataFrame.from_dict(rows, orient="index", columns=cols).sort_index()
    df.loc["all"] = df.sum() if len(df) else dict.fromkeys(cols, 0)
    df.index.name = "kind"
    return df.astype(int)


def parse_pages(text: str, ds: Dataset, default_sha1: str | None = None) -> list[PageRef]:
    """``"sha1:12, 13"`` -> PageRefs (1-based). Raises ValueError naming the bad item."""
    out = []
    for item in text.replace("\n", ",").split(","):
        item = item.strip()
        if not item:
            continue
        sha, _, num = item.rpartition(":")
        if not num.strip().isdigit() or int(num) < 1:
            raise ValueError(f"gold page {item!r}: expected sha1:page with a 1-based page number")
        if sha:
            hits = [r.sha1 for r in ds.reports if r.sha1.startswith(sha.strip().lower())]
            if len(hits) != 1:
                raise ValueError(f"gold page {item!r}: {len(hits)} reports match {sha!r}")
            sha = hits[0]
        else:
            sha = default_sha1 or (ds.reports[0].sha1 if len(ds.reports) == 1 else "")
            if not sha:
                raise ValueError(f"gold page {item!r}: say which report (sha1:page)")
        out.append(PageRef(sha1=sha, page=int(num)))
    return out


def parse_value(text: str, kind: str) -> Any:
    """Typed value from the correction box: number -> float, boolean -> bool, names -> list (';')."""
    t = text.strip()
    if t == "N/A":
        return t
    if kind == "number":
        try:
            return float(t.replace(",", ""))
        except ValueError:
            raise ValueError(f"a number (or N/A) is expected, got {t!r}") from None
    if kind == "boolean":
        if t.lower() not in ("true", "false"):
            raise ValueError(f"True or False is expected, got {t!r}")
        return t.lower() == "true"
    if kind == "names":
        return [x.strip() for x in t.split(";") if x.strip()]
    return t


def format_value(value: Any) -> str:
    return "; ".join(map(str, value)) if isinstance(value, list) else ("" if value is None else str(value))
