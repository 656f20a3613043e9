"""Plots for stage 07 and ablations (matplotlib, Agg backend, no display needed).

Every ``*_png`` function returns the PNG as bytes; the caller writes it through ``rag.core.artifacts``
(``Stage.write_bytes``) so files land atomically. Tables read here:

- stage costs: each stage's ``manifest.json`` ``seconds`` (wall time of its LAST run: a re-run that
  skipped current items shows only its own short time) and ``tokens`` (LLM tokens: keys starting with
  prompt/completion are summed).
- retrieval: ``rag.evaluate.retrieval_metrics.retrieval_metrics`` tables (rows ``group`` = "all" and one per kind, columns
  ``hit@K``…), optionally with an ``order`` column ("final" after reranking, "retrieval" before). The
  "all" row (of the wanted order) is read; without a ``group`` column, ``hit@K`` columns are averaged
  over rows; a long table with ``k`` and ``hit`` columns works too.
"""
from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from ..core.artifacts import STAGE_PACKAGES, read_manifest  # noqa: E402
from ..core.config import RunConfig  # noqa: E402

FIG_SIZE = (7.0, 4.0)  # inches
NO_COST = "no API cost (offline)"  # the cost panel of a run that billed nothing
DPI = 100
_HIT_COL = re.compile(r"^hit(?:@|_at_|_|)(\d+)$", re.IGNORECASE)


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=DPI)
    plt.close(fig)
    return buf.getvalue()


LLM_TOKEN_PREFIXES = ("prompt", "completion")  # manifest token keys that are LLM tokens


def _token_total(tokens: dict[str, Any]) -> int:
    """LLM tokens in a manifest's ``tokens``: keys starting prompt*/completion* (prompt_tokens, completion…);
    others (chunk_tokens = corpus size, requests) are not LLM spend."""
    return int(sum(v for k, v in (tokens or {}).items()
                   if isinstance(v, (int, float)) and k.lower().startswith(LLM_TOKEN_PREFIXES)))


COST_COLUMNS = ["stage", "seconds", "tokens", "items", "failed", "prompt_tokens", "completion_tokens",
                "embedding_tokens", "cost_usd", "item_seconds", "shared_from"]


def stage_costs_from_dir(run_dir: Path) -> pd.DataFrame:
    """One row per stage folder of ``run_dir`` that has a manifest: wall ``seconds`` of the invocation that
    did the work, LLM ``tokens``, and the summed per-item usage records (``items`` done, ``failed`` =
    failed + blocked, prompt/completion/embedding tokens, ``cost_usd``, ``item_seconds``)."""
    rows = []
    for name in STAGE_PACKAGES:
        data = read_manifest(run_dir, name, missing_ok=True)
        if data is None:
            continue
        usage, counts = data.get("usage") or {}, data.get("counts") or {}
        rows.append({"stage": name, "seconds": float(data.get("seconds") or 0.0),
                     "tokens": _token_total(data.get("tokens", {})),
                     "items": int(counts.get("items_done", 0)),
                     "failed": int(counts.get("items_failed", 0)) + int(counts.get("items_blocked", 0)),
                     **{k: usage.get(k, 0) for k in ("prompt_tokens", "completion_tokens", "embedding_tokens")},
                     "cost_usd": float(usage.get("cost_usd", 0.0)), "item_seconds": float(usage.get("seconds", 0.0)),
                     "shared_from": data.get("run") if data.get("run") != run_dir.name else ""})
    return pd.DataFrame(rows, columns=COST_COLUMNS)


def stage_costs(cfg: RunConfig) -> pd.DataFrame:
    return stage_costs_from_dir(cfg.run_dir)


def hit_at_k(retrieval: pd.DataFrame | None, order: str = "final") -> dict[int, float]:
    """``{k: hit}`` from a retrieval-metrics table (see module docstring); {} when none found."""
    if retrieval is None or len(retrieval) == 0:
        return {}
    if "order" in retrieval.columns:
        retrieval = retrieval[retrieval["order"] == order]
    if "group" in retrieval.columns and (retrieval["group"] == "all").any():
        retrieval = retrieval[retrieval["group"] == "all"]
    out: dict[int, float] = {}
    for col in retrieval.columns:
        m = _HIT_COL.match(str(col))
        if m:
            vals = pd.to_numeric(retrieval[col], errors="coerce").dropna()
            if len(vals):
                out[int(m.group(1))] = round(float(vals.mean()), 4)
    if not out and {"k", "hit"} <= set(retrieval.columns):
        for k, grp in retrieval.groupby("k"):
            out[int(k)] = round(float(pd.to_numeric(grp["hit"], errors="coerce").mean()), 4)
    return dict(sorted(out.items()))


def score_by_kind_png(by_kind: pd.DataFrame) -> bytes:
    """Bars: score and max score per question kind."""
    fig, ax = plt.subplots(figsize=FIG_SIZE)
    if len(by_kind):
        x = range(len(by_kind))
        ax.bar([i - 0.2 for i in x], by_kind["max_score"], width=0.4, label="max", color="#cccccc")
        ax.bar([i + 0.2 for i in x], by_kind["score"], width=0.4, label="score (G + R/2)")
        ax.set_xticks(list(x), [f"{k}\n(n={n})" for k, n in zip(by_kind["kind"], by_kind["questions"])])
        ax.legend()
    ax.set_ylabel("points")
    ax.set_title("Score by question kind")
    return _png(fig)


def retrieval_hit_png(retrieval: pd.DataFrame) -> bytes:
    """Lines: hit@k by k, after reranking ("final") and, when present, before it ("retrieval")."""
    fig, ax = plt.subplots(figsize=FIG_SIZE)
    orders = list(dict.fromkeys(retrieval["order"])) if "order" in retrieval.columns else ["final"]
    for order in orders:
        hits = hit_at_k(retrieval, order)
        ax.plot(list(hits), list(hits.values()), marker="o", label=order)
    if len(orders) > 1:
        ax.legend()
    ax.set_xlabel("k (pages)")
    ax.set_ylabel("hit@k")
    ax.set_ylim(0, 1.05)
    ax.set_title("Retrieval hit@k")
    ax.grid(alpha=0.3)
    return _png(fig)


def stage_costs_png(costs: pd.DataFrame) -> bytes:
    """Three panels per stage: seconds, tokens (prompt / completion / embedding, stacked) and cost in USD."""
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(FIG_SIZE[0] * 1.9, FIG_SIZE[1]))
    a1.barh(costs["stage"], costs["seconds"])
    a1.set_xlabel("seconds")
    left = pd.Series(0, index=costs.index, dtype=float)
    for col, color in (("prompt_tokens", "#d08c3c"), ("completion_tokens", "#8c3cd0"), ("embedding_tokens", "#3cd08c")):
        vals = pd.to_numeric(costs.get(col, pd.Series(0, index=costs.index)), errors="coerce").fillna(0)
        a2.barh(costs["stage"], vals, left=left, color=color, label=col.replace("_tokens", ""))
        left = left + vals
    a2.set_xlabel("tokens")
    a2.legend(fontsize="small")
    usd = pd.to_numeric(costs.get("cost_usd", pd.Series(0.0, index=costs.index))).fillna(0)
    a3.barh(costs["stage"], usd, color="#3c8cd0")  # also when all 0: the stage rows line up with the other panels
    if not usd.abs().sum():  # nothing billed (offline models): a sentence, not an empty -0.04..0.04 axis
        a3.set_xticks([])
        a3.text(0.5, 0.5, NO_COST, transform=a3.transAxes, ha="center", va="center", color="#555555")
    a3.set_xlabel("cost (USD)")
    for ax in (a1, a2, a3):
        ax.invert_yaxis()
    fig.suptitle("Time, tokens and cost by stage")
    return _png(fig)


def ablation_png(table: pd.DataFrame) -> bytes:
    """Four panels per variant: score, hit@k (largest k present), total seconds, total tokens."""
    fig, axes = plt.subplots(2, 2, figsize=(FIG_SIZE[0] * 1.6, FIG_SIZE[1] * 1.8))
    names = [str(v) for v in table["variant"]]
    hit_cols = sorted((c for c in table.columns if _HIT_COL.match(str(c))), key=lambda c: int(_HIT_COL.match(c).group(1)))
    panels = [("score", "score (G + R/2)"), (hit_cols[-1] if hit_cols else None, "retrieval "),
              ("seconds", "seconds (all stages)"), ("tokens", "LLM tokens (all stages)")]
    for ax, (col, label) in zip(axes.flat, panels):
        if col and col in table.columns:
            ax.barh(names, pd.to_numeric(table[col], errors="coerce").fillna(0))
            ax.set_title(label + (col if label.endswith(" ") else ""))
        else:
            ax.set_title(f"{label.strip()}: not measured")
        ax.invert_yaxis()
        ax.tick_params(axis="y", labelsize=8)
    fig.suptitle("Ablation")
    return _png(fig)


def point_labels(table: pd.DataFrame) -> list[tuple[float, float, str]]:
    """One label per distinct (N/A precision, values found) point of a tradeoff table: the thresholds that
    land on it, in table order ("0.9, 0.95"; a run of more than two in a row as "0.3–0.6", "none" kept apart:
    "none, 0.0–0.95"), so thresholds giving the same answers share one label instead of printing over each other."""
    groups: dict[tuple[float, float], list[int]] = {}
    for i, r in enumerate(table.itertuples(index=False)):
        groups.setdefault((float(r.na_precision), float(r.found_pct)), []).append(i)
    names = [str(v) for v in table["threshold"]]
    out = []
    for (x, y), rows in groups.items():
        head = [rows.pop(0)] if names[rows[0]] == "none" and len(rows) > 3 else []  # "none" is no number
        run = len(rows) > 2 and rows == list(range(rows[0], rows[-1] + 1))
        label = ", ".join([names[i] for i in head] + ([f"{names[rows[0]]}–{names[rows[-1]]}"] if run
                                                       else [names[i] for i in rows]))
        out.append((x, y, label))
    return out


def tradeoff_png(table: pd.DataFrame) -> bytes:
    """Values found (% of value-gold number questions) against N/A precision, one point per picker threshold
    (``rag.evaluate.tradeoff.tradeoff``'s table), each point labelled with its thresholds (:func:`point_labels`)."""
    fig, ax = plt.subplots(figsize=FIG_SIZE)
    t = table.dropna(subset=["na_precision", "found_pct"])
    ax.plot(t["na_precision"], t["found_pct"], marker="o")
    mid = (t["na_precision"].min() + t["na_precision"].max()) / 2 if len(t) else 0.0
    for x, y, label in point_labels(t):
        left = x > mid  # a label right of a point at the right edge would run off the figure
        ax.annotate(label, (x, y), textcoords="offset points", xytext=(-4 if left else 4, 4), fontsize=8,
                    ha="right" if left else "left", bbox={"fc": "white", "ec": "none", "alpha": 0.8, "pad": 1})
    ax.set_xlabel("N/A precision (N/A answers with N/A gold)")
    ax.set_ylabel("values found (% of value-gold numbers)")
    ax.set_title("Number questions: the picker's threshold (labels), code pick")
    return _png(fig)
