"""Retrieval metrics against gold reference pools.

Ranking model: each question has one ranked page list per routed report (05_retrieve candidates,
best first); a page's rank is its 1-based position in its own report's list, so a comparative
question's pools (one per company) are each judged against that company's list.

Per question (only questions whose gold has at least one pool):
- ``hit@k``: share of its pools hit at k (a pool is hit at k if any of its pages has rank <= k);
- ``recall@10``: share of its distinct gold pages (union of pools) with rank <= 10;
- ``mrr``: mean over pools of 1 / best rank of any pool page (0 when none is retrieved);
- ``ndcg@10``: binary relevance (page in any pool), per report list, ideal = min(gold pages of that
  report, 10) relevant pages on top; averaged over the reports that hold gold pages.
Tables average these over questions, overall ("all") and by answer kind. Higher = better.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Iterable, Mapping, Sequence

import pandas as pd

from ..core.config import RunConfig
from ..core.dataset import Dataset, PageRef
from ..core.records import RetrievalRecord

HIT_KS = (1, 5, 10)
CUTOFF = 10  # the "@10" of recall and nDCG


def rank_lists(record: RetrievalRecord, order: str = "final") -> dict[str, list[int]]:
    """``{sha1: [page, ...]}`` best first from a 05_retrieve record, sorted by ``scores[order]``."""
    out = {}
    for sha1, cands in record.candidates.items():
        cs = list(cands)
        if order != "final":  # stored lists are in final order; re-sort (stable) by another score
            cs.sort(key=lambda c: -(c.scores.get(order) or 0.0))
        out[sha1] = [c.page for c in cs]
    return out


def question_metrics(ranked: Mapping[str, Sequence[int]], pools: Sequence[Sequence[PageRef]],
                     ks: Iterable[int] = HIT_KS, cutoff: int = CUTOFF) -> dict[str, float]:
    """Metrics of one question: ``ranked`` = {sha1: pages best first}, ``pools`` = gold pools (1-based)."""
    def rank(ref: PageRef) -> int | None:
        pages = list(ranked.get(ref.sha1, []))
        return pages.index(ref.page) + 1 if ref.page in pages else None

    best = []  # best rank per pool (None = missed)
    for pool in pools:
        rs = [r for r in (rank(p) for p in pool) if r is not None]
        best.append(min(rs) if rs else None)
    out = {f"hit@{k}": sum(b is not None and b <= k for b in best) / len(best) for k in ks}
    gold = {(p.sha1, p.page) for pool in pools for p in pool}
    out[f"recall@{cutoff}"] = sum((r := rank(PageRef(sha1=s, page=pg))) is not None and r <= cutoff
                                  for s, pg in gold) / len(gold)
    out["mrr"] = sum(1.0 / b if b else 0.0 for b in best) / len(best)
    by_report: dict[str, set[int]] = defaultdict(set)
    for s, pg in gold:
        by_report[s].add(pg)
    ndcgs = []
    for s, gpages in by_report.items():
        top = list(ranked.get(s, []))[:cutoff]
        dcg = sum(1.0 / math.log2(i + 2) for i, pg in enumerate(top) if pg in gpages)
        idcg = sum(1.0 / math.log2(i + 2) for i in range(min(len(gpages), cutoff)))
        ndcgs.append(dcg / idcg)
    out[f"ndcg@{cutoff}"] = sum(ndcgs) / len(ndcgs)
    return out


def per_question(records: Mapping[str, RetrievalRecord], ds: Dataset, order: str = "final") -> pd.DataFrame:
    """One row per question with gold pools: qid, kind and its metrics (``records``: {qid: record})."""
    rows = []
    for q in ds.questions:
        g = ds.gold.get(q.text)
        if g is None or not g.pools or q.qid not in records:
            continue
        m = question_metrics(rank_lists(records[q.qid], order), g.pools)
        rows.append({"qid": q.qid, "kind": q.kind, **m})
    return pd.DataFrame(rows)


def summarize(per_q: pd.DataFrame) -> pd.DataFrame:
    """Mean metrics overall ("all") and by kind, with the number of questions ``n``."""
    if per_q.empty:
        return pd.DataFrame(columns=["group", "n"])
    cols = [c for c in per_q.columns if c not in ("qid", "kind")]
    rows = [{"group": "all", "n": len(per_q), **per_q[cols].mean().to_dict()}]
    for kind, sub in per_q.groupby("kind", sort=True):
        rows.append({"group": kind, "n": len(sub), **sub[cols].mean().to_dict()})
    return pd.DataFrame(rows)


def metrics_from_records(records: Mapping[str, RetrievalRecord], ds: Dataset, order: str = "final") -> pd.DataFrame:
    return summarize(per_question(records, ds, order))


def retrieval_metrics(cfg: RunConfig, ds: Dataset, order: str = "final") -> pd.DataFrame:
    """Metrics table from the run's ``05_retrieve`` outputs; ``order="retrieval"`` scores pre-rerank order."""
    from ..retrieve import load_records

    return metrics_from_records(load_records(cfg, ds), ds, order)
